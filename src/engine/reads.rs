//! What a resource or a tool reads of the forge's answers, so that its requests carry it
//! ([`crate::forge::subset`]) and the rest of each answer is skipped while it is parsed.
//!
//! Everything that looks into an answer is listed here, once per face: the projections (an
//! entity's, a list item's, the fields beside a list, a markdown block's extra fields), the
//! checks, where a list's items are and where its length is counted, a text's source, the paths
//! naming the repository an answer is about, the path a confirmed argument is found at. A path
//! that is not a chain of names and indices reads all of its source, as does an unshaped
//! answer (a generated tool, the escape hatch). Built on the first request of each face, not at
//! start-up.

use std::sync::Arc;

use serde_json_path::JsonPath;

use super::Tool;
use super::project::{Projection, read_at};
use super::resource::{EmbedSource, Resource, Shape};
use crate::forge::subset::{Step, Subset};

/// What a resource reads of each of its requests' answers.
#[derive(Debug)]
pub(crate) struct ResourceReads {
    /// The primary request's (and each fallback's: they answer for it).
    pub primary: Option<Arc<Subset>>,
    /// Each `with:` request's, in declaration order.
    pub with: Vec<Option<Arc<Subset>>>,
    /// Each embed's own requests', for the embeds that fetch their list.
    pub fetched: Vec<Option<Arc<Subset>>>,
}

impl ResourceReads {
    fn of(resource: &Resource) -> ResourceReads {
        let mut sources = vec![Subset::nothing(); 1 + resource.with.len()];
        let mut fetched = Vec::new();
        for check in &resource.checks {
            check.value.reads(&mut sources);
        }
        match &resource.shape {
            Shape::List {
                from,
                item,
                only_arrays,
                ..
            } => {
                let item = item_reads(item, &[]);
                add_items(&mut sources[0], from.as_ref(), &item);
                // An answer that is not an array is projected as one item.
                if *only_arrays {
                    sources[0].merge(&item);
                }
            }
            Shape::Entity { project, embeds } => {
                project.reads(&mut sources);
                for embed in embeds {
                    let item = item_reads(&embed.item, &[]);
                    let mut own = Subset::nothing();
                    let read = match embed.source {
                        EmbedSource::Primary => &mut sources[0],
                        EmbedSource::With(w) => &mut sources[1 + w],
                        EmbedSource::Fetch(_) => &mut own,
                    };
                    add_items(read, embed.from.as_ref(), &item);
                    if let Some(total) = &embed.total {
                        read_at(read, total, &Subset::Whole);
                    }
                    fetched.push(shared(own));
                }
            }
        }
        if let Some(from) = resource.text.as_ref().and_then(|t| t.from.as_ref()) {
            from.reads(&mut sources);
        }
        if let Some(extra) = resource.markdown.as_ref().and_then(|m| m.extra.as_ref()) {
            extra.reads(&mut sources);
        }
        let mut sources = sources.into_iter().map(shared);
        ResourceReads {
            primary: sources.next().flatten(),
            with: sources.collect(),
            fetched,
        }
    }
}

impl Resource {
    /// What the resource reads of its answers, worked out on its first read.
    pub(crate) fn reads(&self) -> &ResourceReads {
        self.reads.get_or_init(|| ResourceReads::of(self))
    }
}

impl Tool {
    /// What the tool reads of its answers (`None`: all of them), worked out on its first call.
    pub(crate) fn reads(&self) -> Option<Arc<Subset>> {
        self.reads.get_or_init(|| tool_reads(self)).clone()
    }
}

/// What a tool reads of its answers; `None` for all of them.
fn tool_reads(tool: &Tool) -> Option<Arc<Subset>> {
    if tool.unshaped() {
        return None;
    }
    let about = &tool.scope.repository_of;
    let mut root = [Subset::nothing()];
    // An entity answer: its projection (also what describes a text), the repository it is
    // about, and where a confirmed argument's values are.
    tool.project.reads(&mut root);
    for path in about {
        read_at(&mut root[0], path, &Subset::Whole);
    }
    if let Some(confirm) = &tool.confirm {
        read_at(&mut root[0], &confirm.found, &Subset::Whole);
    }
    if let Some(from) = tool.text.as_ref().and_then(|t| t.from.as_ref()) {
        from.reads(&mut root);
    }
    if let Some(list) = &tool.list {
        let item = item_reads(&tool.project, about);
        add_items(&mut root[0], list.from.as_ref(), &item);
        if let Some((beside, _)) = &list.beside {
            beside.reads(&mut root);
        }
    }
    let [root] = root;
    shared(root)
}

/// What a list item's projection reads of the item, with the paths naming its repository.
fn item_reads(item: &Projection, about: &[JsonPath]) -> Subset {
    // An item is projected alone: its projection has no other source.
    let mut read = [Subset::nothing()];
    item.reads(&mut read);
    for path in about {
        read_at(&mut read[0], path, &Subset::Whole);
    }
    let [read] = read;
    read
}

/// Adds `item`, read of each element of the array at `from` (the answer itself without it).
fn add_items(read: &mut Subset, from: Option<&JsonPath>, item: &Subset) {
    let mut elements = Subset::nothing();
    elements.add(&[Step::Element], item);
    match from {
        Some(path) => read_at(read, path, &elements),
        None => read.merge(&elements),
    }
}

/// A subset to hand to requests; `None` when it is the whole answer (the plain parse).
fn shared(subset: Subset) -> Option<Arc<Subset>> {
    (!subset.is_whole()).then(|| Arc::new(subset))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::forge::subset::parse;

    fn catalog() -> crate::engine::Catalog {
        crate::service::compile(&crate::manifest::Sources::builtin()).unwrap()
    }

    fn kept(subset: Option<Arc<Subset>>, body: &Value) -> Value {
        parse(body.to_string().as_bytes(), &subset.expect("a subset")).unwrap()
    }

    #[test]
    fn an_issue_is_read_without_the_objects_its_projection_does_not_show() {
        let issue: Value =
            serde_json::from_str(include_str!("../../tests/fixtures/tools/issue.json")).unwrap();
        let catalog = catalog();
        let read = kept(catalog.tool("get_issue").unwrap().reads(), &issue);
        assert_eq!(read["title"], issue["title"]);
        assert_eq!(read["user"], json!({"login": issue["user"]["login"]}));
        assert!(read.get("repository").is_none(), "{read}");
        assert!(read.get("url").is_none(), "{read}");

        let resource = catalog
            .resource("forgejo://repo/{owner}/{repo}/issue/{index}")
            .unwrap();
        let reads = resource.reads();
        assert_eq!(kept(reads.primary.clone(), &issue)["body"], issue["body"]);
        let comments = json!([{"id": 1, "body": "b", "user": {"login": "a", "email": "e"},
            "created_at": "t", "html_url": "h", "assets": []}]);
        let comment = &kept(reads.fetched[0].clone(), &comments)[0];
        assert_eq!(comment["user"], json!({"login": "a"}));
        assert_eq!(comment["body"], "b");
        assert!(comment.get("html_url").is_none(), "{comment}");
    }

    #[test]
    fn an_unshaped_tool_or_a_path_that_is_not_simple_reads_everything() {
        let catalog = catalog();
        assert!(
            catalog
                .tool("forgejo_api_request")
                .unwrap()
                .reads()
                .is_none()
        );
        let mut read = Subset::nothing();
        read_at(
            &mut read,
            &JsonPath::parse("$.a.b").unwrap(),
            &Subset::Whole,
        );
        assert!(!read.is_whole());
        read_at(&mut read, &JsonPath::parse("$..b").unwrap(), &Subset::Whole);
        assert!(read.is_whole());
    }
}
