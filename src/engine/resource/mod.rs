//! A compiled resource, and reading one. A read goes through stages, each in its own file:
//!
//! 1. [`route`] — the URI to a [`Read`]: which resource, and its checked variables. Every
//!    refusal of a bad URI happens here, before any request.
//! 2. [`plan`] — the upstream requests: [`Read::plan`] gives the first ones (sent concurrently),
//!    [`Read::follow_up`] looks at every answer so far and gives the next ones (a fallback after
//!    a 404, the tail pages of a newest-first list) or none. Each request carries its [`Slot`].
//! 3. [`assemble`] — the answers to content blocks, in three steps: *project* the answers into
//!    the JSON value (a list page through [`page`], an entity with its [`embed`]ded lists),
//!    *bound* it (the text range cut, the JSON fitted to the byte budget), *render* the blocks
//!    (the markdown block, the untrusted-text `_meta`, the cache hint).
//!
//! The engine plans and the caller sends: nothing here does I/O.

mod assemble;
mod embed;
mod page;
mod plan;
mod route;

use serde_json::Value;
use serde_json_path::JsonPath;

use super::Catalog;
use super::bound::{LIMIT, PAGE, PageRequest};
use super::endpoint::Endpoint;
use super::param::Rule;
use super::policy::marks::{Mark, Marked};
use super::project::{Field, Projection};
use super::request::Args;
use super::request::RequestTemplate;
use super::template::UriTemplate;
use super::text::TextSpec;
use crate::forge::{ForgeError, Request, Response};
use crate::manifest::raw::{Keep, Window as WindowKind};

/// A compiled resource.
#[derive(Debug)]
pub struct Resource {
    pub name: String,
    /// Where the resource's `fetch` is written, for findings about its requests.
    pub pos: crate::manifest::Pos,
    pub title: String,
    /// The manifest's description followed by the derived statement of bounds and caching.
    pub description: String,
    pub template: UriTemplate,
    pub(crate) params: Vec<Param>,
    /// The primary request, secrets and marks: what the resource shares with its tool.
    pub(crate) endpoint: Endpoint,
    pub(crate) answered_as: Option<String>,
    pub(crate) fallbacks: Vec<(RequestTemplate, String)>,
    pub(crate) with: Vec<(String, RequestTemplate)>,
    pub(crate) checks: Vec<Check>,
    pub(crate) shape: Shape,
    pub(crate) text: Option<TextSpec>,
    pub(crate) markdown: Option<Markdown>,
    pub cache: Cache,
    pub(crate) provisional: Option<Provisional>,
    /// For an entity: the tool whose endpoint it is (a list's tool is in its shape).
    pub(crate) tool: Option<String>,
    /// Why the resource is not offered (its endpoint's tool is not), when it is not.
    pub(crate) withheld: Option<String>,
    /// What it reads of its answers ([`Resource::reads`]).
    pub(crate) reads: std::sync::OnceLock<crate::engine::reads::ResourceReads>,
}

/// When an answer of an immutable resource is not final yet, and how long it may be reused.
#[derive(Debug)]
pub(crate) struct Provisional {
    /// A top-level field of the projection.
    pub field: String,
    pub values: Vec<String>,
    pub ttl_ms: u64,
}

/// A template variable and its rule.
#[derive(Debug)]
pub struct Param {
    pub name: String,
    pub rule: std::sync::Arc<Rule>,
    pub default: Option<Value>,
}

/// A condition the primary answer must meet.
#[derive(Debug)]
pub(crate) struct Check {
    pub source: String,
    pub value: Field,
    pub expect: Expect,
    pub when: Vec<(String, String)>,
}

#[derive(Debug)]
pub(crate) enum Expect {
    Equals(String),
    EndsWith(String),
}

#[derive(Debug)]
pub(crate) enum Shape {
    Entity {
        project: Projection,
        embeds: Vec<Embed>,
    },
    List {
        /// Where the tool's answers hold the array, and why any other answer is the caller's
        /// mistake (the tool's `list:`).
        from: Option<JsonPath>,
        not_a_list: Option<String>,
        item: Projection,
        cap: u64,
        tool: String,
        window: WindowKind,
        /// A non-array answer is an entity, projected like an item.
        only_arrays: bool,
        /// The read's variables the list's tool takes too: what its sentinel's call carries.
        carried: Vec<Carried>,
    },
}

/// A variable of a list read that the list's tool takes as an argument.
#[derive(Debug)]
pub(crate) struct Carried {
    /// The tool's argument.
    pub arg: String,
    /// The URI variable giving its value.
    pub var: String,
    /// The argument is an array: a comma-separated value of the URI is a list.
    pub array: bool,
}

/// A bounded list inside an entity.
#[derive(Debug)]
pub(crate) struct Embed {
    pub field: String,
    pub source: EmbedSource,
    pub from: Option<JsonPath>,
    /// Where the source body counts the whole list (instead of `X-Total-Count`).
    pub total: Option<JsonPath>,
    pub cap: u64,
    pub keep: Keep,
    pub window: WindowKind,
    pub tool: String,
    /// The named tool's largest `limit`, for sentinels that page backwards.
    pub tool_max_limit: u64,
    pub item: Projection,
}

#[derive(Debug)]
pub(crate) enum EmbedSource {
    Primary,
    With(usize),
    Fetch(RequestTemplate),
}

#[derive(Debug)]
pub(crate) struct Markdown {
    /// The template is registered under the resource's name.
    pub extra: Option<Projection>,
    /// The top-level names the template reads.
    pub reads: Vec<String>,
    /// The marked fields it shows: when there are any, the block is user-written text.
    pub shown: Vec<Mark>,
    pub max_chars: usize,
}

/// How long a result may be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    Mutable,
    Immutable { ttl_ms: u64 },
}

/// One content block of a read.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub mime: &'static str,
    pub text: String,
}

/// What a read returns.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOutput {
    pub blocks: Vec<Block>,
    /// What the answer says about itself (`_meta` of its JSON block): which fields hold text
    /// written by forge users, and which field holds who wrote each.
    pub meta: Option<Value>,
    /// How long the answer may be reused: set for an immutable resource (shorter while its
    /// answer is provisional), `None` for a mutable one.
    pub ttl_ms: Option<u64>,
}

impl Provisional {
    /// Whether the projected answer is not final yet.
    fn holds(&self, projected: &Value) -> bool {
        matches!(projected.get(&self.field), Some(Value::String(s)) if self.values.contains(s))
    }
}

/// Which part of a read a request serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The primary request (0) or one of its fallbacks (1…).
    Primary(usize),
    With(usize),
    /// An embed's own request (its first page).
    Embed(usize),
    /// A further page of an embed that keeps its newest items.
    EmbedPage(usize, u64),
}

/// A request to send, and what it is for.
#[derive(Debug, Clone)]
pub struct Planned {
    pub slot: Slot,
    pub request: Request,
}

/// What came back for a planned request.
#[derive(Debug, Clone)]
pub struct Answer {
    pub slot: Slot,
    pub result: Result<Response, ForgeError>,
}

/// A routed, validated read.
#[derive(Debug)]
pub struct Read<'c> {
    catalog: &'c Catalog,
    pub resource: &'c Resource,
    pub args: Args,
    page: Option<PageRequest>,
}

impl Resource {
    /// Whether the resource is offered (its endpoint's tool is).
    pub fn offered(&self) -> bool {
        self.withheld.is_none()
    }

    /// The tool whose endpoint the resource is: a list's tool, or an entity's `tool`.
    pub fn endpoint(&self) -> Option<&str> {
        match &self.shape {
            Shape::List { tool, .. } => Some(tool),
            Shape::Entity { .. } => self.tool.as_deref(),
        }
    }

    /// The template variables and their rules.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// Every bound the resource enforces: (embedded field or `None` for the page, cap, tool).
    pub fn bounds(&self) -> Vec<(Option<&str>, u64, &str)> {
        match &self.shape {
            Shape::List { cap, tool, .. } => vec![(None, *cap, tool.as_str())],
            Shape::Entity { embeds, .. } => embeds
                .iter()
                .map(|e| (Some(e.field.as_str()), e.cap, e.tool.as_str()))
                .collect(),
        }
    }

    /// Every request the resource may send, with the query names forgelens adds to it (the
    /// paging of a list or of an embed paged upstream).
    pub fn upstream(&self) -> Vec<(&RequestTemplate, &'static [&'static str])> {
        const PAGING: &[&str] = &[PAGE, LIMIT];
        let list_paging: &[&str] = match &self.shape {
            Shape::List {
                window: WindowKind::Upstream,
                ..
            } => PAGING,
            _ => &[],
        };
        let mut all: Vec<(&RequestTemplate, &[&str])> = vec![(&self.endpoint.request, list_paging)];
        all.extend(self.fallbacks.iter().map(|(t, _)| (t, list_paging)));
        all.extend(self.with.iter().map(|(_, t)| (t, &[] as &[&str])));
        for embed in self.embeds() {
            if let EmbedSource::Fetch(t) = &embed.source {
                all.push((
                    t,
                    if embed.window == WindowKind::Upstream {
                        PAGING
                    } else {
                        &[]
                    },
                ));
            }
        }
        all
    }

    pub(super) fn embeds(&self) -> &[Embed] {
        match &self.shape {
            Shape::Entity { embeds, .. } => embeds,
            Shape::List { .. } => &[],
        }
    }

    /// Every request template the resource may send: primary, fallbacks, `with:`, embeds.
    pub fn request_templates(&self) -> Vec<&RequestTemplate> {
        let mut all = vec![&self.endpoint.request];
        all.extend(self.fallbacks.iter().map(|(t, _)| t));
        all.extend(self.with.iter().map(|(_, t)| t));
        if let Shape::Entity { embeds, .. } = &self.shape {
            all.extend(embeds.iter().filter_map(|e| match &e.source {
                EmbedSource::Fetch(t) => Some(t),
                _ => None,
            }));
        }
        all
    }

    /// The URI variables that name the repository the resource is about, as (owner, name):
    /// where its endpoint's request puts them.
    pub fn repository_vars(&self) -> Option<(String, String)> {
        let (owner, name) = self.endpoint.request.repository_vars()?;
        Some((owner.to_owned(), name.to_owned()))
    }

    /// Whether the resource has no variables (it is listed by `resources/list`).
    pub fn is_concrete(&self) -> bool {
        self.template.vars().next().is_none()
    }
}

impl Read<'_> {
    pub(super) fn embeds(&self) -> &[Embed] {
        self.resource.embeds()
    }
}

/// The marks of a resource's JSON block: a list's items, or an entity's fields and those of
/// each list it embeds, each where it sits.
pub(crate) fn marked_of(shape: &Shape) -> Marked {
    let parts = match shape {
        Shape::List { item, .. } => vec![("items[].".to_owned(), item.marks())],
        Shape::Entity { project, embeds } => std::iter::once((String::new(), project.marks()))
            .chain(
                embeds
                    .iter()
                    .map(|e| (format!("{}[].", e.field), e.item.marks())),
            )
            .collect(),
    };
    Marked::new(parts, None)
}

/// The array a list lives in: the body, or the value at `from`; anything else is empty.
fn items_of<'a>(body: &'a Value, from: Option<&JsonPath>) -> Vec<&'a Value> {
    let found = match from {
        Some(path) => path.query(body).first(),
        None => Some(body),
    };
    match found {
        Some(Value::Array(items)) => items.iter().collect(),
        _ => Vec::new(),
    }
}

/// A non-negative integer found at `path`.
fn count_at(body: &Value, path: &JsonPath) -> Option<u64> {
    path.query(body).first().and_then(Value::as_u64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::project::Context;
    use super::embed::embed_into;
    use super::plan::tail_pages;
    use super::*;

    #[test]
    fn tail_pages_cover_the_newest_rows() {
        // 35 rows in pages of 30: rows 6–35 live on pages 1 and 2; page 1 is the probe.
        assert_eq!(tail_pages(35, 30), vec![2]);
        // 100 rows: rows 71–100 live on pages 3 and 4.
        assert_eq!(tail_pages(100, 30), vec![3, 4]);
        // 60 rows: rows 31–60 are exactly page 2.
        assert_eq!(tail_pages(60, 30), vec![2]);
    }

    #[test]
    fn a_server_window_counts_the_whole_list_where_the_answer_states_it() {
        let embed = Embed {
            field: "revisions".into(),
            source: EmbedSource::Primary,
            from: None,
            total: None,
            cap: 10,
            keep: Keep::Oldest,
            window: WindowKind::Server,
            tool: "get_wiki_revisions".into(),
            tool_max_limit: 50,
            item: Projection::identity(),
        };
        let rows = |n: u64| (1..=n).map(|i| json!(i)).collect::<Vec<_>>();
        let embedded = |items: Vec<Value>, total| {
            let mut value = json!({});
            embed_into(
                &mut value,
                &embed,
                "get_wiki_revisions tool".into(),
                items.iter().collect(),
                total,
                None,
                &Context::of(&Value::Null),
            );
            value
        };
        // 50 rows held of 60 counted.
        let v = embedded(rows(50), Some(60));
        assert_eq!(v["revisions"], json!(rows(10)));
        assert_eq!(
            v["revisions_truncated"],
            "[truncated: 10 of 60 items shown. Use get_wiki_revisions tool with page=2 and limit=10 to fetch more.]"
        );
        // Fewer rows than the cap, but more counted: still truncated.
        let v = embedded(rows(4), Some(60));
        assert_eq!(
            v["revisions_truncated"],
            "[truncated: 4 of 60 items shown. Use get_wiki_revisions tool with page=2 and limit=10 to fetch more.]"
        );
        // Without a count, or with one no larger than what is held, the answer is the list.
        for total in [None, Some(12), Some(3)] {
            let v = embedded(rows(12), total);
            assert_eq!(
                v["revisions_truncated"],
                "[truncated: 10 of 12 items shown. Use get_wiki_revisions tool with page=2 and limit=10 to fetch more.]",
                "{total:?}"
            );
        }
        assert!(
            embedded(rows(7), Some(7))
                .get("revisions_truncated")
                .is_none()
        );
    }
}
