//! The evaluation of `search_tools`: task phrasings in `tests/fixtures/search_eval/`, each with
//! the tools that do the task, and how many a ranking gets first and within the top five. Used
//! by the tests (tests/tool_search.rs) and by `benches/search.rs`, so that both count alike.
//!
//! A phrasing names the tools that do its task (`tools`), or, for a task no curated tool does,
//! only the operation of the forge's API that does it (`api: "POST /user/keys"`): that one is
//! found when a result sends that operation — `forgejo_api_request` with its method and path,
//! or a tool (generated or curated) whose request it is.

use serde::Deserialize;

use forgelens::engine::Catalog;
use forgelens::engine::search::Weights;
use forgelens::service::find::{self, Finder, Found};

#[derive(Debug, Deserialize)]
pub struct Case {
    pub query: String,
    #[serde(default)]
    pub tools: Vec<String>,
    /// The operation that does the task, `METHOD /path`.
    #[serde(default)]
    pub api: Option<String>,
}

/// One result as the evaluation reads it: the tool's name, and the operation it sends when
/// that is fixed (`GET /repos/{}/{}/issues`, placeholders unnamed).
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub name: String,
    pub operation: Option<String>,
}

impl Case {
    /// Whether `result` does this case's task.
    fn done_by(&self, result: &Ranked) -> bool {
        match (&self.tools[..], &self.api) {
            ([], Some(api)) => result.operation.as_deref() == Some(&operation_key(api)),
            (tools, _) => tools.contains(&result.name),
        }
    }
}

/// `POST /user/keys` as a key of [`Ranked::operation`].
pub fn operation_key(api: &str) -> String {
    let (method, path) = api.split_once(' ').expect("an api is `METHOD /path`");
    find::key(
        forgelens::forge::Method::parse(method).expect("a method"),
        path,
    )
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

/// What `search_tools` searches over `catalog`, with `weights`.
pub fn index(catalog: &Catalog, weights: Weights) -> Finder {
    Finder::new(catalog, weights)
}

/// Scores `rank` (a query → what it ranks, best first) on every phrasing of `cases`, each of
/// whose tools must be one of `catalog`.
pub fn measure(catalog: &Catalog, cases: &[Case], rank: impl Fn(&str) -> Vec<Ranked>) -> Score {
    measure_refs(catalog, &cases.iter().collect::<Vec<_>>(), rank)
}

/// [`measure`] over borrowed phrasings.
pub fn measure_refs(
    catalog: &Catalog,
    cases: &[&Case],
    rank: impl Fn(&str) -> Vec<Ranked>,
) -> Score {
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
        assert!(
            !case.tools.is_empty() || case.api.is_some(),
            "{:?} names neither tools nor an api",
            case.query
        );
        let got = rank(&case.query);
        let rank = got.iter().take(5).position(|r| case.done_by(r));
        match rank {
            Some(0) => {
                score.first += 1;
                score.top5 += 1
            }
            Some(_) => score.top5 += 1,
            None => {}
        }
        if rank != Some(0) {
            let names: Vec<String> = got
                .iter()
                .map(|r| match &r.name[..] {
                    find::API_REQUEST => format!("{} {:?}", r.name, r.operation),
                    _ => r.name.clone(),
                })
                .collect();
            score.misses.push(format!(
                "  {:?} → {names:?} (wanted {:?} {:?})",
                case.query, case.tools, case.api
            ));
        }
    }
    score
}

/// What `index` over `catalog` ranks for `query`, best first.
pub fn ranked(catalog: &Catalog, index: &Finder, query: &str) -> Vec<Ranked> {
    index
        .search(query, 5)
        .into_iter()
        .map(|(found, _)| match found {
            Found::Tool(i) => tool_ranked(catalog, &catalog.tools()[i].name),
            Found::Operation(i) => {
                let op = &index.operations()[i];
                Ranked {
                    name: find::API_REQUEST.to_owned(),
                    operation: Some(find::key(op.method, &op.path)),
                }
            }
        })
        .collect()
}

/// The tool `name` of `catalog` as a result.
pub fn tool_ranked(catalog: &Catalog, name: &str) -> Ranked {
    Ranked {
        name: name.to_owned(),
        operation: catalog.tool(name).and_then(find::tool_key),
    }
}
