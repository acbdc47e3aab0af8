//! What `search_tools` searches, in one place for the server and its evaluation: the catalog's
//! tools, and every operation of the forge's API that no tool serves, found as
//! `forgejo_api_request` with the method, path and body to send — when that tool is offered.
//! A generated tool of the same operation as a curated one is left out of the search, so the
//! two are one result, the curated one; it stays callable by name.

use std::collections::{HashMap, HashSet};

use crate::catalog::known::{self, Operation};
use crate::engine::search::{Entry, SearchIndex, Weights};
use crate::engine::{Catalog, Tool};
use crate::forge::Method;

/// The tool that sends any request, which an operation without a tool is found as.
pub const API_REQUEST: &str = "forgejo_api_request";

/// What a hit stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The catalog's tool at this position.
    Tool(usize),
    /// The operation at this position of [`Finder::operations`].
    Operation(usize),
}

/// The search index and what each of its entries stands for.
#[derive(Debug)]
pub struct Finder {
    index: SearchIndex,
    found: Vec<Found>,
    operations: Vec<Operation>,
}

/// An operation as a key that ignores the names of path placeholders:
/// `GET /repos/{}/{}/issues/{}`.
pub fn key(method: Method, path: &str) -> String {
    let mut out = String::from(method.as_str());
    out.push(' ');
    let mut in_var = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_var = true;
                out.push('{');
            }
            '}' => {
                in_var = false;
                out.push('}');
            }
            _ if !in_var => out.push(c),
            _ => {}
        }
    }
    out
}

/// The operation a tool sends, when its method is fixed.
pub fn tool_key(tool: &Tool) -> Option<String> {
    Some(key(tool.method()?, &tool.endpoint.request.path_pattern()))
}

impl Finder {
    /// The finder over `catalog`, with the built-in operations when `forgejo_api_request` is
    /// among its tools; their keywords serve a catalog's generated tools either way.
    pub fn new(catalog: &Catalog, weights: Weights) -> Finder {
        let known = known::builtin();
        let keywords: HashMap<String, Vec<String>> = known
            .iter()
            .filter(|op| !op.keywords.is_empty())
            .map(|op| (key(op.method, &op.path), op.keywords.clone()))
            .collect();
        let operations = match catalog.tool(API_REQUEST) {
            Some(_) => known,
            None => Vec::new(),
        };
        Finder::over(catalog, operations, &keywords, weights)
    }

    /// The finder over `catalog` and `operations`; a generated tool takes the `keywords` of its
    /// operation (by [`key`]).
    pub fn over(
        catalog: &Catalog,
        operations: Vec<Operation>,
        keywords: &HashMap<String, Vec<String>>,
        weights: Weights,
    ) -> Finder {
        let curated: HashSet<String> = catalog
            .tools()
            .iter()
            .filter(|t| !t.generated)
            .filter_map(tool_key)
            .collect();
        let served: HashSet<String> = catalog.tools().iter().filter_map(tool_key).collect();
        let mut found = Vec::new();
        let mut entries = Vec::new();
        for (i, tool) in catalog.tools().iter().enumerate() {
            if tool.generated && tool_key(tool).is_some_and(|k| curated.contains(&k)) {
                continue;
            }
            found.push(Found::Tool(i));
            let mut entry = Entry::tool(tool, catalog.toolsets.get(&tool.toolset).cloned());
            // A generated tool is asked for as its operation is.
            if tool.generated
                && let Some(words) = tool_key(tool).and_then(|k| keywords.get(&k))
            {
                entry.keywords = words;
            }
            entries.push(entry);
        }
        let operations: Vec<Operation> = operations
            .into_iter()
            .filter(|op| !served.contains(&key(op.method, &op.path)))
            .collect();
        for (i, op) in operations.iter().enumerate() {
            found.push(Found::Operation(i));
            entries.push(Entry {
                name: &op.title.text,
                title: &op.title.text,
                toolset: &op.toolset,
                summary: &op.name,
                detail: &op.path,
                args: op
                    .query
                    .iter()
                    .chain(&op.body)
                    .map(String::as_str)
                    .collect(),
                keywords: &op.keywords,
                read_only: op.read_only,
                deletes: op.method == Method::Delete,
                path: op.path.clone(),
                generated: true,
                ..Entry::default()
            });
        }
        let index = SearchIndex::weighted(entries, catalog.search.vocabulary(), weights);
        Finder {
            index,
            found,
            operations,
        }
    }

    /// The best `limit` results for `query`, best first, with their scores.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(Found, f32)> {
        self.index
            .search(query, limit)
            .into_iter()
            .map(|hit| (self.found[hit.entry], hit.score))
            .collect()
    }

    /// How `found` scores for `query`, part by part (for the evaluation).
    pub fn explain(&self, query: &str, found: Found) -> Vec<(String, f32)> {
        match self.found.iter().position(|f| *f == found) {
            Some(entry) => self.index.explain(query, entry),
            None => Vec::new(),
        }
    }

    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }
}
