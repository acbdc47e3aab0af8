//! What every endpoint's answers are held to, whichever face reaches it — a resource read or a
//! tool call: [`Serving`] (the byte budget, the repository allow-list, the forge's host), the
//! room a list page or a text keeps for its envelope and continuation ([`room`]), the one list
//! page envelope, which the two faces differ in only by how they say "go on" ([`GoOn`],
//! [`list_page`]), the one pass that fits a whole answer to its budget ([`within`]), and the redaction of the fields the
//! manifest calls secret ([`redact`]) before anything reads an answer.

use serde_json::Value;
use serde_json_path::JsonPath;

use serde_json::Map;

use super::bound::{self, Fitted, Next, PageRequest, Window};
use super::policy::marks::Marked;
use super::request::RequestTemplate;
use crate::forge::allow::AllowList;

/// One endpoint of the forge as the manifests declare it, compiled once, whichever face
/// reaches it: its request, the fields of its answers removed before anything reads them
/// (`secrets:`), and where its answers hold text forge users wrote. A tool is an endpoint
/// addressed by name and arguments, a resource one addressed by a URI; they differ in how they
/// are addressed, how they shape the answer and how they say "go on".
#[derive(Debug)]
pub struct Endpoint {
    pub(crate) request: RequestTemplate,
    pub(crate) secrets: Vec<JsonPath>,
    pub(crate) marked: Marked,
}

impl Endpoint {
    /// Removes the secret fields from a forge answer to this endpoint.
    pub(crate) fn redact(&self, body: &mut Value) {
        redact(body, &self.secrets);
    }
}

/// What the service holds every answer to: set once from the configuration, passed to each
/// read and call alike.
#[derive(Debug, Clone)]
pub struct Serving {
    /// The most bytes one answer may hold.
    pub budget: usize,
    /// The repositories answers may show (`--allow-repos`).
    pub allow: Option<AllowList>,
    /// The forge's host: images it serves stay images in user-written text.
    pub instance: String,
}

/// Room kept in a budget for a page's envelope and its continuation sentence.
const ENVELOPE_ROOM: usize = 512;

/// The bytes left of `budget` for a list page's items or a text, beside `used` bytes already
/// spent, after the room its envelope and continuation sentence keep.
pub(crate) fn room(budget: usize, used: usize) -> usize {
    budget.saturating_sub(ENVELOPE_ROOM + used)
}

/// How a list page says "go on" when more remain.
pub(crate) enum GoOn<'a> {
    /// A resource: the URI of the next page (from a page and a limit), and a sentinel naming
    /// the list's tool (`mention`) with the filters the read carries.
    Read {
        next_uri: &'a dyn Fn(u64, u64) -> String,
        mention: String,
        filters: Vec<String>,
    },
    /// A tool: the call to make again, with the next page (the envelope's `next_page`); it is
    /// spelled out when the budget cut the page short.
    Call { mention: String },
}

/// A list page's envelope: the fields shown `beside` the items first, then its projected
/// `items` fitted to what `budget` leaves ([`Fitted`]), `page`, `limit`, `total_count`,
/// `has_more`, `next_page`, and how to go on.
pub(crate) fn list_page(
    window: Window<()>,
    items: Vec<Value>,
    page: PageRequest,
    budget: usize,
    go_on: GoOn,
    beside: Map<String, Value>,
) -> Map<String, Value> {
    let taken = match beside.is_empty() {
        true => 0,
        false => bound::json_size(&Value::Object(beside.clone())),
    };
    let fitted = Fitted::new(window, items, page, room(budget, taken));
    let (page, total, has_more, cut, shown) = (
        fitted.page,
        fitted.total,
        fitted.has_more,
        fitted.cut,
        fitted.items.len(),
    );
    let mut out = fitted.envelope();
    let cut_short = || {
        format!(
            "[truncated to stay under {budget} bytes: this answer is page {} at limit {}.",
            page.page, page.limit
        )
    };
    let (next_page, limit) = (page.page + 1, page.limit);
    match go_on {
        GoOn::Read {
            next_uri,
            mention,
            filters,
        } if has_more => {
            out.insert("next".into(), Value::String(next_uri(next_page, limit)));
            let next = Next::Page {
                page: next_page,
                limit,
            };
            let sentinel = bound::sentinel_with(&mention, &filters, shown, total, next);
            let note = match cut {
                true => format!("{}] {sentinel}", cut_short()),
                false => sentinel,
            };
            out.insert("truncated".into(), note.into());
        }
        GoOn::Call { mention } if cut => {
            let note = format!(
                "{} Call {mention} again with page={next_page} and limit={limit} for the next items.]",
                cut_short()
            );
            out.insert("truncated".into(), note.into());
        }
        GoOn::Read { .. } | GoOn::Call { .. } => {}
    }
    match beside.is_empty() {
        true => out,
        false => beside.into_iter().chain(out).collect(),
    }
}

/// `value` fitted to `budget` bytes by [`bound::fit`], saying what was cut.
pub(crate) fn within(mut value: Value, budget: usize) -> Value {
    if bound::json_size(&value) <= budget {
        return value;
    }
    let cuts = bound::fit(&mut value, room(budget, 0));
    let note = bound::fit_note(budget, &cuts);
    if let Value::Object(map) = &mut value {
        // Beside an earlier note of ours; under another key when the forge's answer has a
        // `truncated` of its own (a git tree does), which must stay as the forge sent it.
        let key = match map.get("truncated") {
            None | Some(Value::String(_)) => "truncated",
            Some(_) => "_truncated",
        };
        let text = match map.get(key).and_then(Value::as_str) {
            Some(earlier) => format!("{earlier} {note}"),
            None => note,
        };
        map.insert(key.into(), text.into());
    }
    value
}

/// Deletes from a forge answer every node each of `secrets` selects.
pub(crate) fn redact(body: &mut Value, secrets: &[JsonPath]) {
    for path in secrets {
        remove_matches(body, path);
    }
}

/// Deletes every node `path` selects.
fn remove_matches(body: &mut Value, path: &JsonPath) {
    use serde_json_path::PathElement;
    enum Step {
        Name(String),
        Index(usize),
    }
    let locations: Vec<Vec<Step>> = path
        .query_located(body)
        .locations()
        .map(|l| {
            l.iter()
                .map(|e| match e {
                    PathElement::Name(n) => Step::Name((*n).to_owned()),
                    PathElement::Index(i) => Step::Index(*i),
                })
                .collect()
        })
        .collect();
    // Later array elements first, so earlier indices stay valid.
    for location in locations.into_iter().rev() {
        let Some((last, parents)) = location.split_last() else {
            continue;
        };
        let mut node = Some(&mut *body);
        for step in parents {
            node = match (step, node) {
                (Step::Name(n), Some(Value::Object(m))) => m.get_mut(n.as_str()),
                (Step::Index(i), Some(Value::Array(a))) => a.get_mut(*i),
                _ => None,
            };
        }
        match (last, node) {
            (Step::Name(n), Some(Value::Object(m))) => {
                m.remove(n.as_str());
            }
            (Step::Index(i), Some(Value::Array(a))) if *i < a.len() => {
                a.remove(*i);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_removed_wherever_they_match() {
        let mut body = json!([
            {"id": 1, "config": {"url": "u", "secret": "s1"}},
            {"id": 2, "config": {"secret": "s2", "authorization_header": "Bearer x"}}
        ]);
        redact(
            &mut body,
            &[
                JsonPath::parse("$[*].config.secret").unwrap(),
                JsonPath::parse("$[*].config.authorization_header").unwrap(),
            ],
        );
        assert_eq!(
            body,
            json!([{"id": 1, "config": {"url": "u"}}, {"id": 2, "config": {}}])
        );
    }
}
