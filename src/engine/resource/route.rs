//! Routing a URI: which resource it names, and its variables, each checked against its rule.

use serde_json::Value;

use super::{Read, Resource, Shape};
use crate::engine::Catalog;
use crate::engine::bound::{LIMIT, PAGE, PageRequest};
use crate::engine::error::{Error, Invalid};
use crate::engine::request::Args;
use crate::engine::uri;

impl Catalog {
    /// Routes and validates `uri`: every refusal here happens before any upstream request.
    pub fn route(&self, raw: &str) -> Result<Read<'_>, Error> {
        let parsed = uri::parse(raw).map_err(|why| Invalid::Uri {
            uri: raw.to_owned(),
            why,
        })?;
        let matched = self
            .router
            .at(&parsed.path)
            .map_err(|_| Invalid::NoResource {
                uri: raw.to_owned(),
                nearest: self.nearest_templates(&parsed.path).join(", "),
            })?;
        let resource = &self.resources[*matched.value];
        if let Some(why) = &resource.withheld {
            return Err(Invalid::Withheld {
                resource: resource.name.clone(),
                why: why.clone(),
            }
            .into());
        }
        let mut args = Args::new();
        for (name, raw_value) in matched.params.iter() {
            let value = if resource.template.is_rest(name) {
                let parts: Result<Vec<_>, _> = raw_value.split('/').map(uri::decode).collect();
                parts.map_err(|why| encoding(name, why))?.join("/")
            } else {
                uri::decode(raw_value)
                    .map_err(|why| encoding(name, why))?
                    .into_owned()
            };
            args.insert(name.to_owned(), resource.check(name, &value)?);
        }
        for (name, value) in parsed.query {
            if !resource.template.query_vars().contains(&name) {
                let accepted = resource.template.query_vars().join(", ");
                let accepted = if accepted.is_empty() {
                    "none".to_owned()
                } else {
                    accepted
                };
                return Err(Invalid::UnknownQuery {
                    name,
                    template: resource.template.as_str().to_owned(),
                    accepted,
                }
                .into());
            }
            let checked = resource.check(&name, &value)?;
            args.insert(name, checked);
        }
        for param in &resource.params {
            if let (false, Some(default)) = (args.contains_key(&param.name), &param.default) {
                args.insert(param.name.clone(), default.clone());
            }
        }
        if let Some(text) = &resource.text {
            text.check_range(&args)?;
        }
        let page = match &resource.shape {
            Shape::List { cap, .. } => Some(PageRequest::new(
                args.get(PAGE).and_then(Value::as_u64),
                args.get(LIMIT).and_then(Value::as_u64),
                *cap,
            )),
            Shape::Entity { .. } => None,
        };
        Ok(Read {
            catalog: self,
            resource,
            args,
            page,
        })
    }
}

/// How many templates a URI that matches none is pointed to.
const NEAREST: usize = 3;

impl Catalog {
    /// The offered templates closest to `path` (a URI's path, `/repo/acme/widgets/lable/3`),
    /// by how many segments would have to change, be added or be dropped: what a refusal
    /// names instead of a protocol method some clients cannot call.
    fn nearest_templates(&self, path: &str) -> Vec<String> {
        let given: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let mut scored: Vec<(usize, usize)> = self
            .resources
            .iter()
            .enumerate()
            .filter(|(_, r)| r.withheld.is_none())
            .map(|(i, r)| {
                let segments = r.template.path_segments();
                let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
                (segment_distance(&segments, &given), i)
            })
            .collect();
        scored.sort();
        scored
            .iter()
            .take(NEAREST)
            .map(|(_, i)| self.resources[*i].template.as_str().to_owned())
            .collect()
    }
}

/// The edit distance between a template's path segments and a URI's: a variable matches any
/// one segment, and a `{+rest}` variable any number of them from where it stands.
fn segment_distance(template: &[&str], given: &[&str]) -> usize {
    let matches = |t: &str, g: &str| t.starts_with('{') || t == g;
    let mut row: Vec<usize> = (0..=given.len()).collect();
    for (i, t) in template.iter().enumerate() {
        if t.starts_with("{+") {
            // The rest takes whatever is left, at no cost when that is at least one segment.
            let rest = row[..given.len()].iter().copied().min();
            return rest.map_or(row[given.len()] + 1, |r| r.min(row[given.len()] + 1));
        }
        let mut next = vec![i + 1; given.len() + 1];
        for (j, g) in given.iter().enumerate() {
            let change = row[j] + usize::from(!matches(t, g));
            next[j + 1] = change.min(row[j + 1] + 1).min(next[j] + 1);
        }
        row = next;
    }
    row[given.len()]
}

impl Resource {
    fn check(&self, name: &str, value: &str) -> Result<Value, Error> {
        let param = self
            .params
            .iter()
            .find(|p| p.name == name)
            .expect("compile gives every template variable a rule");
        param.rule.check_text(value).map_err(|why| {
            Invalid::Variable {
                name: name.to_owned(),
                why,
                value: value.to_owned(),
                template: self.template.as_str().to_owned(),
            }
            .into()
        })
    }
}

fn encoding(name: &str, why: crate::engine::uri::UriError) -> Invalid {
    Invalid::Encoding {
        name: name.to_owned(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::segment_distance;

    #[test]
    fn a_uri_is_as_far_from_a_template_as_its_segments_differ() {
        let label = ["repo", "{owner}", "{repo}", "label", "{id}"];
        assert_eq!(
            segment_distance(&label, &["repo", "a", "b", "label", "3"]),
            0
        );
        assert_eq!(
            segment_distance(&label, &["repo", "a", "b", "lable", "3"]),
            1
        );
        assert_eq!(segment_distance(&label, &["repo", "a", "b", "label"]), 1);
        assert_eq!(segment_distance(&label, &["instance"]), 4);
        let file = ["repo", "{owner}", "{repo}", "contents", "{+path}"];
        assert_eq!(
            segment_distance(&file, &["repo", "a", "b", "contents", "src", "x.rs"]),
            0
        );
        assert_eq!(
            segment_distance(&file, &["repo", "a", "b", "content", "x.rs"]),
            1
        );
        assert_eq!(segment_distance(&file, &["repo", "a", "b", "contents"]), 1);
    }
}
