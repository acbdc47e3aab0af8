//! The evaluation of `search_tools`: task phrasings in `tests/fixtures/search_eval/`, each with
//! the tools that do the task, and how many a ranking gets first and within the top five. Used
//! by the tests (tests/tool_search.rs) and by `benches/search.rs`, so that both count alike.

use serde::Deserialize;

use forgelens::engine::Catalog;
use forgelens::engine::search::{SearchIndex, Weights};

#[derive(Debug, Deserialize)]
pub struct Case {
    pub query: String,
    pub tools: Vec<String>,
}

/// The phrasings of one file of the set.
pub fn cases(file: &str) -> Vec<Case> {
    let path = format!(
        "{}/tests/fixtures/search_eval/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// How a ranking did on a set.
#[derive(Debug, Default)]
pub struct Score {
    pub first: usize,
    pub top5: usize,
    pub total: usize,
    /// The phrasings not ranked first: query, what came, what was wanted.
    pub misses: Vec<String>,
}

impl Score {
    pub fn percent(&self, n: usize) -> f64 {
        100.0 * n as f64 / self.total.max(1) as f64
    }
}

/// The index `search_tools` builds over `catalog`, with `weights`.
pub fn index(catalog: &Catalog, weights: Weights) -> SearchIndex {
    SearchIndex::weighted(
        catalog.tools(),
        |set| catalog.toolsets.get(set).cloned(),
        |tool| tool.generated,
        catalog.search.vocabulary(),
        weights,
    )
}

/// Scores `rank` (a query → the names it ranks, best first) on every phrasing of `cases`,
/// each of whose tools must be one of `catalog`.
pub fn measure(catalog: &Catalog, cases: &[Case], rank: impl Fn(&str) -> Vec<String>) -> Score {
    let mut score = Score {
        total: cases.len(),
        ..Score::default()
    };
    for case in cases {
        for tool in &case.tools {
            assert!(
                catalog.tool(tool).is_some(),
                "the evaluation names `{tool}`, which is not a tool"
            );
        }
        let got = rank(&case.query);
        let rank = got
            .iter()
            .take(5)
            .position(|name| case.tools.contains(name));
        match rank {
            Some(0) => {
                score.first += 1;
                score.top5 += 1
            }
            Some(_) => score.top5 += 1,
            None => {}
        }
        if rank != Some(0) {
            score.misses.push(format!(
                "  {:?} → {got:?} (wanted {:?})",
                case.query, case.tools
            ));
        }
    }
    score
}

/// The names `index` over `catalog` ranks for `query`, best first.
pub fn ranked(catalog: &Catalog, index: &SearchIndex, query: &str) -> Vec<String> {
    index
        .search(query, 5)
        .iter()
        .map(|hit| catalog.tools()[hit.tool].name.clone())
        .collect()
}
