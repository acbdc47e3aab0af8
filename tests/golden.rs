//! The served surface, as a golden file: every tool of `tools/list` (`--tool-surface full`, the
//! lean schemas clients see) and every template of `resources/templates/list`, one per line.
//! A change to a name, URI, schema or annotation shows as a diff of `tests/golden/`;
//! `FORGELENS_BLESS=1 cargo test golden::` rewrites the files, to be reviewed like code.

use crate::support::Launch;

fn check(file: &str, lines: Vec<String>) {
    let path = format!("{}/tests/golden/{file}", env!("CARGO_MANIFEST_DIR"));
    let expected = lines.join("\n") + "\n";
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == expected {
        return;
    }
    if std::env::var_os("FORGELENS_BLESS").is_some() {
        std::fs::write(&path, expected).unwrap();
        return;
    }
    let changed: Vec<&str> = expected
        .lines()
        .filter(|l| !current.lines().any(|c| c == *l))
        .take(5)
        .collect();
    panic!(
        "tests/golden/{file} differs from the served surface (first new lines below); review, then FORGELENS_BLESS=1 cargo test golden::\n{}",
        changed.join("\n")
    );
}

#[tokio::test]
async fn the_served_surface_is_the_golden_one() {
    let forge = crate::support::FakeForge::standard().await;
    let server = Launch::new(&forge).full().start().await;
    let mut tools: Vec<String> = server
        .client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| serde_json::to_string(&serde_json::to_value(t).unwrap()).unwrap())
        .collect();
    tools.sort();
    let mut templates: Vec<String> = server
        .client
        .list_all_resource_templates()
        .await
        .unwrap()
        .iter()
        .map(|t| serde_json::to_string(&serde_json::to_value(t).unwrap()).unwrap())
        .collect();
    templates.sort();
    server.stop().await;
    assert!(tools.len() > 200 && templates.len() > 20);
    check("tools.jsonl", tools);
    check("resource-templates.jsonl", templates);
}
