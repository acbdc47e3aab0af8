//! What the tool list costs a model's context, through the binary: the targets of the tool
//! surface, in cl100k tokens of each tool's name, description and input schema (a token count
//! is deterministic, so it may be asserted). `cargo bench --bench tokens` prints the whole
//! table; docs/performance.md records it.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::tokens::tool_tokens;
use crate::support::{FakeForge, Launch};

/// The curated tools `tools.yaml` declares.
fn curated() -> usize {
    forgelens::service::compile(&forgelens::manifest::Sources::builtin())
        .unwrap()
        .tools()
        .len()
}

/// A catalog generated from the project's mini spec, written under `dir`.
fn catalog(dir: &std::path::Path) -> PathBuf {
    let spec = include_str!("fixtures/mini.swagger.json");
    let (_, yaml) = forgelens::catalog::generate_text(spec, Default::default()).unwrap();
    let path = dir.join("catalog.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Every tool listed by a server started with `args`, as JSON, and their tokens.
async fn listed(args: &[&str]) -> (Vec<Value>, usize) {
    let forge = FakeForge::start().await;
    let mut launch = Launch::new(&forge);
    for arg in args {
        launch = launch.arg(arg);
    }
    let server = launch.start().await;
    let tools: Vec<Value> = server
        .client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    server.stop().await;
    let tokens = tools.iter().map(tool_tokens).sum();
    (tools, tokens)
}

fn is_meta(tool: &Value) -> bool {
    forgelens::surface::Meta::named(tool["name"].as_str().unwrap()).is_some()
}

/// `core`: at most 40 tools and at most 6 000 tokens, with or without generated tools (they
/// are found by search_tools, not listed), and in read-only mode.
#[tokio::test]
async fn the_core_surface_costs_at_most_6000_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).display().to_string();
    for args in [
        vec![],
        vec!["--read-only"],
        vec!["--catalog", catalog.as_str()],
        vec!["--sudo"],
    ] {
        let (tools, tokens) = listed(&args).await;
        assert!(tools.len() <= 40, "{args:?}: {} tools", tools.len());
        assert!(tokens <= 6_000, "{args:?}: {tokens} tokens");
    }
}

/// `full`: every curated tool listed, at most 100 tokens each on average.
#[tokio::test]
async fn the_full_surface_costs_at_most_100_tokens_a_tool() {
    let (tools, _) = listed(&["--tool-surface", "full"]).await;
    let curated_tools: Vec<&Value> = tools.iter().filter(|t| !is_meta(t)).collect();
    assert_eq!(curated_tools.len(), curated());
    let tokens: usize = curated_tools.iter().map(|t| tool_tokens(t)).sum();
    let average = tokens as f64 / curated_tools.len() as f64;
    assert!(
        average <= 100.0,
        "{average:.1} tokens a tool ({tokens} in all)"
    );
}

/// The figure of a README sentence: the number in `about N tokens` after `marker`.
fn claimed(readme: &str, marker: &str) -> usize {
    let at = readme
        .find(marker)
        .unwrap_or_else(|| panic!("README.md no longer says `{marker}`"));
    let rest = &readme[at..];
    let number = rest
        .split("about ")
        .nth(1)
        .and_then(|r| r.split(" tokens").next())
        .unwrap_or_else(|| panic!("no `about N tokens` after `{marker}`"));
    number
        .replace([' ', ','], "")
        .parse()
        .unwrap_or_else(|_| panic!("`{number}` is not a number"))
}

/// What README.md says the default tool list costs, held to what it costs: what clients hand
/// the model (each tool's name, description and input schema) and the whole `tools/list`
/// message on the wire (output schemas, titles and annotations too), each within 5%.
#[tokio::test]
async fn the_readme_says_what_the_tool_list_costs_and_what_it_counts() {
    let (tools, visible) = listed(&[]).await;
    let wire = crate::support::tokens::tokens(&serde_json::json!({ "tools": tools }).to_string());
    let readme = std::fs::read_to_string("README.md").unwrap();
    for (what, measured, marker) in [
        ("model-visible", visible, "costs a model"),
        ("wire", wire, "the whole `tools/list` message"),
    ] {
        let said = claimed(&readme, marker);
        let off = (said as f64 - measured as f64).abs() / measured as f64;
        assert!(
            off <= 0.05,
            "README says about {said} {what} tokens; they are {measured}"
        );
    }
}

/// The byte budget holds for each copy of a tool's answer, as README.md says: the structured
/// result and its text each fit it, so the two together fit twice it.
#[tokio::test]
async fn the_budget_holds_for_each_copy_of_a_tool_answer() {
    use crate::support::fake_forge::Reply;
    use crate::support::tool_world::{self, many, tool_fixture};
    let forge = tool_world::forge().await;
    let issues = many(
        &tool_fixture("issue.json"),
        1,
        50,
        "title",
        &"t".repeat(400),
    );
    forge.route(
        "GET",
        "/repos/acme/widgets/issues",
        Reply::List {
            items: issues,
            link: true,
        },
    );
    let server = Launch::new(&forge)
        .arg("--max-answer-bytes")
        .arg("4096")
        .start()
        .await;
    let result = server
        .call(
            "list_repo_issues",
            serde_json::json!({"owner": "acme", "repo": "widgets", "limit": 50}),
        )
        .await
        .unwrap();
    server.stop().await;
    let structured = serde_json::to_string(&result.structured_content)
        .unwrap()
        .len();
    let text = crate::support::result_text(&result).len();
    assert!(
        structured <= 4096 && text <= 4096,
        "{structured} and {text} bytes"
    );
    assert!(
        structured + text > 4096,
        "the two copies are more than one budget"
    );
}

/// The tokens of each curated tool as `describe_tools` gives it (the entry's JSON), lean by
/// default and with `complete: true`.
fn described_tokens(complete: bool) -> Vec<(String, usize)> {
    let service = crate::support::offline_service(None);
    let names: Vec<String> = service
        .catalog()
        .tools()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for chunk in names.chunks(forgelens::surface::MAX_DESCRIBED) {
        let arguments = serde_json::json!({"names": chunk, "complete": complete});
        let answer = match runtime.block_on(service.call(
            "describe_tools",
            arguments.as_object().cloned().unwrap(),
            None,
        )) {
            Ok(forgelens::service::Called::Value(answer)) => answer.value,
            other => panic!("describe_tools answers with a value, not {other:?}"),
        };
        for tool in answer["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap().to_owned();
            out.push((name, crate::support::tokens::tokens(&tool.to_string())));
        }
    }
    assert_eq!(out.len(), names.len(), "every tool described");
    out
}

/// `describe_tools` is lean by default: at most 150 tokens a tool on average over every
/// curated tool; `complete: true` gives more (patterns, output schemas), on request only.
#[test]
fn describe_tools_costs_at_most_150_tokens_a_tool() {
    let lean = described_tokens(false);
    let complete = described_tokens(true);
    let average = |all: &[(String, usize)]| {
        all.iter().map(|(_, n)| n).sum::<usize>() as f64 / all.len() as f64
    };
    let most = lean.iter().max_by_key(|(_, n)| *n).unwrap();
    eprintln!(
        "describe_tools: lean {:.1} tokens a tool (most: {} with {}), complete {:.1}",
        average(&lean),
        most.0,
        most.1,
        average(&complete)
    );
    assert!(average(&lean) <= 150.0, "{:.1}", average(&lean));
    assert!(average(&complete) > average(&lean));
}
