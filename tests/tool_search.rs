//! `search_tools` against the evaluation set in `tests/fixtures/search_eval/`: task phrasings,
//! each with the tools that do the task, every file written by someone who saw neither the
//! ranking, nor the manifest's keywords and search tables, nor the other files. `final4.yaml`
//! and `final5.yaml` are the held-out sets, used for nothing but measuring. The others were
//! used to change the ranking (`dev`, `test` and `holdout` also folded into the tools'
//! `keywords`; the misses of `final`, `final2` and `final3` read for the search tables), so
//! their figures say little. `cargo bench --bench search` prints every figure
//! (docs/performance.md records them).
use serde_json::{Value, json};

use forgelens::manifest::Sources;
use forgelens::service::{Called, Service};

use crate::support::search_eval::{self, Case, Ranked, Score, cases};

/// A service over the built-in manifests (and a generated catalog when given).
fn service(catalog: Option<String>) -> Service {
    crate::support::offline_service(catalog)
}

/// The answer of `search_tools` for `arguments`, through the service as a call runs it.
fn search(service: &Service, arguments: Value) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let arguments = arguments.as_object().cloned().unwrap();
    match runtime.block_on(service.call("search_tools", arguments, None)) {
        Ok(Called::Value(answer)) => answer.value,
        other => panic!("search_tools answers with a value, not {other:?}"),
    }
}

/// The name of the first tool `search_tools` ranks for `query`.
fn first(service: &Service, query: &str) -> String {
    search(service, json!({"query": query, "limit": 5}))["tools"][0]["name"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Ranks every phrasing through `search_tools` itself.
fn measure(service: &Service, cases: &[Case]) -> Score {
    search_eval::measure(service.catalog(), cases, |query| {
        search(service, json!({"query": query, "limit": 5}))["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let name = t["name"].as_str().unwrap();
                match t.get("request") {
                    Some(r) => Ranked {
                        name: name.to_owned(),
                        operation: Some(search_eval::operation_key(&format!(
                            "{} /{}",
                            r["method"].as_str().unwrap(),
                            r["path"].as_str().unwrap()
                        ))),
                    },
                    None => search_eval::tool_ranked(service.catalog(), name),
                }
            })
            .collect()
    })
}

/// The sets no change of the ranking was drawn from: the right tool first for at least 75% of
/// the phrasings, and in the top 5 for at least 95%, the targets of the tool surface
/// (docs/performance.md, "Finding a tool").
#[test]
fn search_tools_finds_the_tool_for_a_task_in_words() {
    let held_out = held_out();
    assert!(held_out.len() >= 80, "{} phrasings", held_out.len());
    let score = measure(&service(None), &held_out);
    eprintln!(
        "search_tools on the held-out sets: first {} ({:.1}%), top 5 {} ({:.1}%)\n{}",
        score.first,
        score.percent(score.first),
        score.top5,
        score.percent(score.top5),
        score.misses.join("\n")
    );
    assert!(score.percent(score.top5) >= TOP5, "top 5: {score:?}");
    assert!(score.percent(score.first) >= FIRST, "first: {score:?}");
}

/// `final11.yaml`, written blind from the tools' names and the API's operations, 273 of its 753
/// phrasings with no curated tool (found when `forgejo_api_request` is named with the right
/// method and path), measured once after the fifth round was frozen at ce22c19: 86.1% first
/// and 97.7% in the top 5, which meets issue 30's 80% and 95%. Held here at what it measured,
/// so that a change cannot lower it unseen; `final10.yaml` to `final7.yaml`, each measured
/// blind the same way a round before and tuned on since, are held at what they reach now.
#[test]
fn the_whole_api_is_found_from_the_default_surface() {
    let service = service(None);
    for (file, total, first, top5) in [
        ("final11.yaml", 753, 648, 736),
        ("final10.yaml", 515, 450, 509),
        ("final9.yaml", 368, 320, 365),
        ("final8.yaml", 266, 228, 262),
        ("final7.yaml", 242, 210, 239),
    ] {
        let cases = cases(file);
        assert!(cases.iter().filter(|c| c.tools.is_empty()).count() >= 60);
        let score = measure(&service, &cases);
        eprintln!(
            "search_tools on {file}: first {} ({:.1}%), top 5 {} ({:.1}%)",
            score.first,
            score.percent(score.first),
            score.top5,
            score.percent(score.top5)
        );
        assert_eq!(score.total, total, "{file}");
        assert!(
            score.top5 >= top5,
            "{file}: top 5 {} of {total}",
            score.top5
        );
        assert!(
            score.first >= first,
            "{file}: first {} of {total}",
            score.first
        );
    }
}

/// What the held-out sets must reach, in percent of their phrasings.
const FIRST: f64 = 75.0;
const TOP5: f64 = 95.0;

/// `final4.yaml` (its totals seen, its misses never read) and `final5.yaml` (measured once):
/// the earlier sets' misses were read to change the ranking, so they are no longer held out.
fn held_out() -> Vec<Case> {
    let mut all = cases("final4.yaml");
    all.extend(cases("final5.yaml"));
    all
}

/// With generated tools beside the curated ones, search still finds the curated tools.
#[test]
fn generated_tools_do_not_crowd_out_the_curated_ones() {
    let spec = include_str!("fixtures/mini.swagger.json");
    let (_, catalog) = forgelens::catalog::generate_text(spec, Default::default()).unwrap();
    let service = service(Some(catalog));
    assert!(service.catalog().tools().iter().any(|t| t.generated));
    let score = measure(&service, &held_out());
    assert!(score.percent(score.top5) >= TOP5, "top 5: {score:?}");
    assert!(score.percent(score.first) >= FIRST, "first: {score:?}");
}

/// What a hit says: enough to call the tool without describing it first.
#[test]
fn a_hit_names_the_tool_its_arguments_and_how_to_call_it() {
    let value = search(
        &service(None),
        json!({"query": "merge the pull request", "limit": 3}),
    );
    let hit = value["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "merge_pull_request")
        .unwrap_or_else(|| panic!("{value}"));
    assert_eq!(hit["toolset"], "pulls");
    assert_eq!(hit["read_only"], false);
    assert!(hit["destructive"].is_boolean());
    assert_eq!(hit["call_with"], "call_write_tool", "not a core tool");
    assert!(
        hit["arguments"]
            .as_str()
            .unwrap()
            .starts_with("owner, repo, index"),
        "{hit}"
    );
    assert!(value["note"].as_str().unwrap().contains("call_with"));
    let none = search(&service(None), json!({"query": "zzzz qqqq"}));
    assert_eq!(none["tools"], json!([]));
}

/// Kinds of phrasing the ranking reads: a duration stands for tracked time, things in the
/// plural only asked to be shown want their list, and an apostrophe's lone letter is no word.
#[test]
fn durations_plurals_and_apostrophes_are_read() {
    let service = service(None);
    let first = |query: &str| first(&service, query);
    for query in ["log 45m on #3", "2h15m spent on issue 8 yesterday"] {
        assert!(
            first(query).contains("tracked_time"),
            "{query}: {}",
            first(query)
        );
    }
    let shown = first("show me the open tickets of acme/widgets");
    assert!(
        ["list_repo_issues", "search_issues"].contains(&shown.as_str()),
        "a list of issues, not {shown}"
    );
    assert_eq!(
        first("what's blocking issue 17?"),
        "list_issue_dependencies"
    );
}

/// What a query gives against what a tool's path takes, an order's first word, and quoted
/// text (openspec tool-surface, "Finding a tool in words").
#[test]
fn what_a_query_gives_its_first_word_and_its_quotes_are_read() {
    let service = service(None);
    let first = |query: &str| first(&service, query);
    for (query, tool) in [
        // One number given: not the tool that also wants the issue's.
        ("delete comment 7788 in acme/app", "delete_issue_comment"),
        // No repository named: not a repository's notifications.
        (
            "list my notifications about pull requests",
            "list_notifications",
        ),
        (
            "list the notifications of acme/app",
            "list_repo_notifications",
        ),
        // A thing's name said first is the order's verb.
        ("tag commit 7a6b5c4 as v1.4.0 in acme/app", "create_tag"),
        ("archive the repo acme/old", "update_repo"),
        // The quoted words are the comment, not the task.
        (
            "post 'LGTM, merging once CI is green' on PR 17 in acme/app",
            "create_issue_comment",
        ),
    ] {
        assert_eq!(first(query), tool, "{query}");
    }
}

/// Every keywords entry of the built-in search.yaml names a built-in tool (an entry for a tool
/// a manifest lacks is passed over, so a misspelt name would otherwise go unseen), and every
/// curated tool has keywords.
#[test]
fn the_built_in_keywords_are_the_built_in_tools() {
    let manifests = forgelens::manifest::parse(&Sources::builtin()).unwrap();
    let catalog = forgelens::service::compile(&Sources::builtin()).unwrap();
    for name in manifests.search.keywords.keys() {
        assert!(
            catalog.tool(name).is_some(),
            "search.yaml: no tool `{name}`"
        );
    }
    for tool in catalog.tools() {
        assert!(!tool.keywords.is_empty(), "`{}` has no keywords", tool.name);
    }
}

/// A task no curated tool does is found as the escape hatch's request, with the body to send;
/// every hit has a score, and a query nothing fits well says so and names the escape hatch.
#[test]
fn an_operation_without_a_tool_is_found_as_the_request_to_send() {
    let service = service(None);
    let value = search(
        &service,
        json!({"query": "add an ssh key to my account", "limit": 5}),
    );
    let hits = value["tools"].as_array().unwrap();
    assert!(hits.iter().all(|h| h["score"].is_number()), "{value}");
    let hit = hits
        .iter()
        .find(|h| h["request"]["path"] == "user/keys" && h["request"]["method"] == "POST")
        .unwrap_or_else(|| panic!("{value}"));
    assert_eq!(hit["name"], "forgejo_api_request");
    assert_eq!(hit["read_only"], false);
    let body = hit["request"]["body"].as_str().unwrap();
    assert!(body.contains("key") && body.contains("title"), "{body}");
    let weak = search(
        &service,
        json!({"query": "configure the frobnicator quantum"}),
    );
    let note = weak["note"].as_str().unwrap();
    assert!(
        weak["tools"].as_array().unwrap().is_empty() || note.contains("Nothing fits well"),
        "{weak}"
    );
    assert!(note.contains("forgejo_api_request"), "{note}");
}

/// Every line of the shipped `catalog/operation-keywords.tsv` reads, is an operation of the
/// shipped index that no curated tool serves (a line for another would never be read), and
/// every such operation has keywords.
#[test]
fn the_built_in_operation_keywords_are_the_uncovered_operations() {
    use forgelens::catalog::known;
    use forgelens::service::find;
    let catalog = forgelens::service::compile(&Sources::builtin()).unwrap();
    let served: std::collections::HashSet<String> =
        catalog.tools().iter().filter_map(find::tool_key).collect();
    let operations = known::builtin();
    let uncovered: std::collections::HashSet<String> = operations
        .iter()
        .map(|op| format!("{} {}", op.method.as_str(), op.path))
        .filter(|line| !served.contains(&crate::support::search_eval::operation_key(line)))
        .collect();
    let lines = known::keywords(known::KEYWORDS).unwrap();
    assert!(lines.iter().all(|(_, words)| words.len() >= 3), "{lines:?}");
    let described: std::collections::HashSet<String> =
        lines.into_iter().map(|(line, _)| line).collect();
    let stray: Vec<&String> = described.difference(&uncovered).collect();
    let bare: Vec<&String> = uncovered.difference(&described).collect();
    assert!(stray.is_empty(), "not an uncovered operation: {stray:?}");
    assert!(bare.is_empty(), "without keywords: {bare:?}");
    assert!(
        operations
            .iter()
            .any(|op| op.path == "/user/keys" && !op.keywords.is_empty())
    );
}

/// An operation's title says what it does: PUT on a path that POST creates on replaces (an
/// Actions variable is created by POST and updated by PUT); PUT on a path nothing else
/// creates adds (a topic). The same titles in a generated catalog.
#[test]
fn a_put_beside_a_post_updates_and_watched_repositories_are_called_so() {
    use forgelens::catalog::known;
    let title = |method: &str, path: &str| {
        known::builtin()
            .into_iter()
            .find(|op| op.method.as_str() == method && op.path == path)
            .map(|op| op.title.text)
            .unwrap_or_else(|| panic!("no {method} {path}"))
    };
    let variable = "/user/actions/variables/{variablename}";
    assert_eq!(
        title("POST", variable),
        "Create an Actions variable for your account"
    );
    assert_eq!(
        title("PUT", variable),
        "Update an Actions variable of your account"
    );
    assert_eq!(
        title("PUT", "/repos/{owner}/{repo}/topics/{topic}"),
        "Add a topic to a repository"
    );
    assert_eq!(
        title("GET", "/user/subscriptions"),
        "List the watched repositories of your account"
    );
    assert_eq!(
        title("GET", "/repos/{owner}/{repo}/issues/{index}/subscriptions"),
        "List the subscribers of an issue of a repository"
    );
}
