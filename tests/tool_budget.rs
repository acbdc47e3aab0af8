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
