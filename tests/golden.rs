//! The served surface, as golden files: every tool of `tools/list` (`--tool-surface full`, the
//! lean schemas clients see) and every template of `resources/templates/list`, one per line; and
//! what they answer: every template read at its case's URI and every read tool called at its
//! sample arguments, whole (every block, `_meta` included). A change to a name, URI, schema,
//! annotation or answer shows as a diff of `tests/golden/`; `FORGELENS_BLESS=1 cargo test
//! golden::` rewrites the files, to be reviewed like code.

use serde_json::{Value, json};

use crate::support::fake_forge::GOOD_TOKEN;
use crate::support::{Launch, tool_world};

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

/// An answer as recorded: the envelope tags, fresh for every answer, and the fake forge's port
/// made constant.
fn recorded(answer: Value) -> String {
    let text = serde_json::to_string(&answer).unwrap();
    let tags = regex::Regex::new(r"untrusted-[0-9a-f]{8}").unwrap();
    let port = regex::Regex::new(r"127\.0\.0\.1:[0-9]+").unwrap();
    let text = tags.replace_all(&text, "untrusted-TAG");
    port.replace_all(&text, "127.0.0.1:PORT").into_owned()
}

#[tokio::test]
async fn every_read_answers_as_recorded() {
    let mut lines = Vec::new();
    let cases = crate::catalog_discovery::cases();
    let forge = crate::catalog_discovery::forge_for(&cases).await;
    let server = Launch::new(&forge).start().await;
    for case in &cases {
        let read = server
            .read(&case.good)
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", case.good));
        lines.push(recorded(json!({"read": case.good, "answer": read})));
    }
    server.stop().await;

    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).token(GOOD_TOKEN).full().start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    for tool in crate::support::manifest_tools(&tools) {
        if !crate::support::is_read_only(tool) {
            continue;
        }
        let required = crate::support::required_args(tool);
        let args = tool_world::sample_args(&tool.name, &required).unwrap_or_else(|e| panic!("{e}"));
        let answer = server.call_ok_or_error(&tool.name, args.clone()).await;
        lines.push(recorded(
            json!({"call": tool.name, "arguments": args, "answer": answer}),
        ));
    }
    server.stop().await;
    assert!(lines.len() > 130, "only {} answers", lines.len());
    check("answers.jsonl", lines);
}
