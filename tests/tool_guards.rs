//! Whole-surface guards over `tools/list` as a client sees it: names, annotations, schemas.

use std::collections::BTreeSet;

use forgelens::forge::Method;
use forgelens::manifest::Sources;

use crate::support::{FakeForge, Launch};

/// Every argument of every tool carries its manifest description into the input schema.
#[tokio::test]
async fn every_argument_announces_its_description() {
    let forge = FakeForge::start().await;
    let server = Launch::new(&forge).start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
    for tool in &tools {
        let properties = tool.input_schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{}: no properties", tool.name));
        for (name, schema) in properties {
            let description = schema["description"].as_str().unwrap_or("");
            assert!(
                !description.trim().is_empty(),
                "{}: argument `{name}` has no description: {schema}",
                tool.name
            );
        }
    }
    server.stop().await;
}

/// Over the wire: every GET-backed tool has `readOnlyHint` (and is idempotent, not
/// destructive); no tool with another method has it; DELETE tools are destructive; every
/// name is unique snake_case of at most 64 characters; every read tool declares an output
/// schema; every input schema is closed.
#[tokio::test]
async fn annotations_follow_the_method_and_names_are_sound() {
    let manifests = forgelens::manifest::parse(&Sources::builtin()).unwrap();
    let declared: Vec<&str> = manifests
        .tools
        .tools
        .iter()
        .map(|t| t.name.value.as_str())
        .collect();
    let unique: BTreeSet<&str> = declared.iter().copied().collect();
    assert_eq!(
        unique.len(),
        declared.len(),
        "a tool name is declared twice"
    );
    assert!(declared.len() >= 120, "{} tools", declared.len());
    let snake = regex::Regex::new("^[a-z][a-z0-9]*(_[a-z0-9]+)*$").unwrap();

    let catalog = forgelens::service::compile(&Sources::builtin()).unwrap();
    let forge = FakeForge::start().await;
    let server = Launch::new(&forge).start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    let listed: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(listed, unique, "tools/list offers every declared tool once");
    for tool in &tools {
        let name = tool.name.as_ref();
        assert!(snake.is_match(name) && name.len() <= 64, "{name}");
        let method = catalog.tool(name).unwrap().method();
        let a = tool.annotations.as_ref().unwrap();
        let get = method == Some(Method::Get);
        assert_eq!(a.read_only_hint, Some(get), "{name} ({method:?})");
        if get {
            assert_eq!(a.destructive_hint, Some(false), "{name}");
            assert_eq!(a.idempotent_hint, Some(true), "{name}");
            assert!(tool.output_schema.is_some(), "{name}: no output schema");
        }
        if method == Some(Method::Delete) {
            assert_eq!(a.destructive_hint, Some(true), "{name}");
        }
        assert_eq!(a.open_world_hint, Some(true), "{name}");
        assert!(
            tool.title.as_deref().is_some_and(|t| !t.is_empty()),
            "{name}"
        );
        assert_eq!(tool.input_schema["additionalProperties"], false, "{name}");
    }
    server.stop().await;
}

/// List tools announce paging, and their output schema is the page envelope.
#[tokio::test]
async fn list_tools_declare_the_page_envelope() {
    let forge = FakeForge::start().await;
    let server = Launch::new(&forge).start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    let mut lists = 0;
    for tool in &tools {
        let properties = tool.input_schema["properties"].as_object().unwrap();
        if !properties.contains_key("page") || tool.name == "get_repo_tree" {
            continue;
        }
        lists += 1;
        let name = tool.name.as_ref();
        assert!(properties.contains_key("limit"), "{name}");
        let output = tool
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            output["required"],
            serde_json::json!(["page", "limit", "has_more", "items"]),
            "{name}"
        );
        let description = tool.description.as_deref().unwrap_or("");
        assert!(description.contains("Paged:"), "{name}: {description}");
    }
    assert!(lists > 50, "{lists} list tools");
    server.stop().await;
}
