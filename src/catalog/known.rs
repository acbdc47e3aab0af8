//! The forge's operations known without a catalog: `catalog/api-index.tsv`, every operation of
//! the Forgejo API written by `forgelens catalog generate --index` (`write::to_index`), so that
//! `search_tools` finds an endpoint no curated tool covers and says how to call it through
//! `forgejo_api_request`; and `catalog/operation-keywords.tsv`, how people ask for each of those
//! operations. Both are read on the first search, never at start-up.

use super::Overrides;
use super::title::{self, Title};
use crate::forge::Method;

/// The index as shipped.
pub const BUILTIN: &str = include_str!("../../catalog/api-index.tsv");

/// How people ask for the operations no curated tool serves, as shipped.
pub const KEYWORDS: &str = include_str!("../../catalog/operation-keywords.tsv");

/// One operation of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    pub method: Method,
    /// As the spec writes it: `/repos/{owner}/{repo}/keys`.
    pub path: String,
    /// The generated tool's name, which `--catalog` serves.
    pub name: String,
    pub toolset: String,
    pub read_only: bool,
    pub destructive: bool,
    pub query: Vec<String>,
    /// The body's fields, required ones bare, optional ones with `?`; `*` for a body of another
    /// shape; empty for none.
    pub body: Vec<String>,
    pub title: Title,
    /// How people ask for it (the shipped keywords; none for an operation a curated tool
    /// serves).
    pub keywords: Vec<String>,
}

/// The operations of an index's text, titled with `overrides`' nouns; a line that does not
/// read is an error naming it (the shipped index is checked by a test).
pub fn parse(text: &str, overrides: &Overrides) -> Result<Vec<Operation>, String> {
    // The paths that take POST, which then creates what PUT on them replaces.
    let posted: std::collections::HashSet<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("POST\t"))
        .filter_map(|rest| rest.split('\t').next())
        .collect();
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty())
        .map(|(n, line)| {
            let fields: Vec<&str> = line.split('\t').collect();
            let [method, path, name, toolset, kind, query, body] = fields[..] else {
                return Err(format!("line {}: expected 7 tab-separated fields", n + 1));
            };
            let method = Method::parse(method)
                .ok_or_else(|| format!("line {}: no method `{method}`", n + 1))?;
            let list = |s: &str| -> Vec<String> {
                s.split(',')
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned)
                    .collect()
            };
            Ok(Operation {
                method,
                path: path.to_owned(),
                name: name.to_owned(),
                toolset: toolset.to_owned(),
                read_only: kind == "r",
                destructive: kind == "d",
                query: list(query),
                body: list(body),
                title: title::of(method, path, posted.contains(path), &overrides.nouns),
                keywords: Vec::new(),
            })
        })
        .collect()
}

/// The keywords of a keywords text: `METHOD /path`, a tab, the keywords separated by `; `, by
/// that `METHOD /path`; a line that does not read is an error naming it.
pub fn keywords(text: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty())
        .map(|(n, line)| {
            let (operation, words) = line.split_once('\t').ok_or_else(|| {
                format!("line {}: expected `METHOD /path`, a tab, keywords", n + 1)
            })?;
            let words: Vec<String> = words
                .split("; ")
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            Ok((operation.to_owned(), words))
        })
        .collect()
}

/// The shipped index, each operation with its shipped keywords.
pub fn builtin() -> Vec<Operation> {
    let overrides = Overrides::builtin().expect("the shipped overrides are checked by tests");
    let mut operations = parse(BUILTIN, &overrides).expect("the shipped index is checked by tests");
    let mut words: std::collections::HashMap<String, Vec<String>> = keywords(KEYWORDS)
        .expect("the shipped keywords are checked by tests")
        .into_iter()
        .collect();
    for op in &mut operations {
        if let Some(w) = words.remove(&format!("{} {}", op.method.as_str(), op.path)) {
            op.keywords = w;
        }
    }
    operations
}

impl Operation {
    /// The body as `forgejo_api_request` takes it: `{title, key, read_only?}`.
    pub fn body_shape(&self) -> Option<String> {
        match self.body.as_slice() {
            [] => None,
            [star] if star == "*" => Some("any JSON value".to_owned()),
            fields => Some(format!("{{{}}}", fields.join(", "))),
        }
    }
}
