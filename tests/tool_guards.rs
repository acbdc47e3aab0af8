//! Whole-surface guards over `tools/list` as a client sees it, in both surfaces: names,
//! annotations, the lean schemas it advertises, and the complete ones `describe_tools` gives.

use std::collections::BTreeSet;

use forgelens::engine::tool::Form;
use forgelens::forge::Method;
use forgelens::manifest::Sources;
use forgelens::surface::Meta;
use serde_json::{Value, json};

use crate::support::{FakeForge, Launch, manifest_tools};

/// Keywords only the checker needs: they stay out of what `tools/list` advertises.
const CHECKER_ONLY: [&str; 5] = [
    "pattern",
    "maxLength",
    "minLength",
    "format",
    "additionalProperties",
];

fn catalog() -> forgelens::engine::Catalog {
    forgelens::service::compile(&Sources::builtin()).expect("the built-in manifests compile")
}

/// Every key of a schema, at every depth.
fn keys(schema: &Value, out: &mut Vec<String>) {
    if let Value::Object(map) = schema {
        for (k, v) in map {
            out.push(k.clone());
            if k != "properties" {
                keys(v, out);
            } else if let Value::Object(props) = v {
                props.values().for_each(|p| keys(p, out));
            }
        }
    }
}

/// In the complete form every argument is described: in its own words, or its rule's.
#[test]
fn every_argument_is_described_in_the_complete_form() {
    let catalog = catalog();
    for tool in catalog.tools() {
        let complete = tool.input_schema(Form::Complete);
        for (name, schema) in complete["properties"].as_object().unwrap() {
            let description = schema["description"].as_str().unwrap_or("");
            assert!(
                !description.trim().is_empty(),
                "{}: argument `{name}` has no description: {schema}",
                tool.name
            );
        }
    }
}

/// The lean form keeps types, required, enums and defaults, and leaves out what only the
/// checker needs; `sudo` is advertised only when asked for.
#[test]
fn lean_schemas_leave_out_what_only_the_checker_needs() {
    let catalog = catalog();
    for tool in catalog.tools() {
        let complete = Value::Object(tool.input_schema(Form::Complete));
        let lean = Value::Object(tool.input_schema(Form::Lean { sudo: false }));
        let mut found = Vec::new();
        keys(&lean, &mut found);
        for key in CHECKER_ONLY {
            assert!(
                !found.iter().any(|k| k == key),
                "{}: `{key}` in {lean}",
                tool.name
            );
        }
        assert_eq!(lean["required"], complete["required"], "{}", tool.name);
        assert!(lean["properties"].get("sudo").is_none(), "{}", tool.name);
        for (name, schema) in complete["properties"].as_object().unwrap() {
            // `page` starts at 1 everywhere; saying so on every list would cost more than it tells.
            if name == "sudo" || name == "page" {
                continue;
            }
            let l = &lean["properties"][name];
            for key in ["type", "enum", "default"] {
                assert_eq!(l.get(key), schema.get(key), "{}: `{name}`.{key}", tool.name);
            }
        }
        let with_sudo = tool.input_schema(Form::Lean { sudo: true });
        assert_eq!(
            with_sudo["properties"]["sudo"]["type"], "string",
            "{}",
            tool.name
        );
        assert_eq!(complete["additionalProperties"], false, "{}", tool.name);
    }
}

/// Over the wire, in the full surface: every declared tool is listed once beside the
/// meta-tools the full surface keeps; every GET-backed tool has `readOnlyHint` (and is
/// idempotent, not destructive); no tool with another method has it; DELETE tools are
/// destructive; every name is unique snake_case of at most 64 characters; every read tool
/// declares an output schema.
#[tokio::test]
async fn annotations_follow_the_method_and_names_are_sound() {
    let manifests = forgelens::manifest::parse(&Sources::builtin()).unwrap();
    let declared: Vec<&str> = manifests
        .tools
        .tools()
        .map(|(_, t)| t.name.value.as_str())
        .collect();
    let unique: BTreeSet<&str> = declared.iter().copied().collect();
    assert_eq!(
        unique.len(),
        declared.len(),
        "a tool name is declared twice"
    );
    assert!(declared.len() >= 120, "{} tools", declared.len());
    let snake = regex::Regex::new("^[a-z][a-z0-9]*(_[a-z0-9]+)*$").unwrap();

    let catalog = catalog();
    let forge = FakeForge::start().await;
    let server = Launch::new(&forge).full().start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    let listed: BTreeSet<&str> = manifest_tools(&tools)
        .iter()
        .map(|t| t.name.as_ref())
        .collect();
    assert_eq!(listed, unique, "tools/list offers every declared tool once");
    let metas: BTreeSet<&str> = tools
        .iter()
        .map(|t| t.name.as_ref())
        .filter(|n| Meta::named(n).is_some())
        .collect();
    assert_eq!(
        metas,
        BTreeSet::from(["describe_tools", "read_resource", "search_tools"])
    );
    for tool in manifest_tools(&tools) {
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
        assert_eq!(
            tool.description.as_deref(),
            Some(catalog.tool(name).unwrap().summary.as_str()),
            "{name}: tools/list shows the first sentence"
        );
    }
    server.stop().await;
}

/// List tools take `page` and `limit` (its range advertised); their complete description
/// states the paging, and their output schema is the page envelope.
#[tokio::test]
async fn list_tools_declare_the_page_envelope() {
    let catalog = catalog();
    let forge = FakeForge::start().await;
    let server = Launch::new(&forge).full().start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    let mut lists = 0;
    for tool in manifest_tools(&tools) {
        let properties = tool.input_schema["properties"].as_object().unwrap();
        if !properties.contains_key("page") || tool.name == "get_repo_tree" {
            continue;
        }
        lists += 1;
        let name = tool.name.as_ref();
        let limit = &properties["limit"];
        assert!(
            limit["maximum"].is_u64() && limit["default"].is_u64(),
            "{name}: {limit}"
        );
        let output = tool
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            output["required"],
            json!(["page", "limit", "has_more", "items"]),
            "{name}"
        );
        let complete = catalog.tool(name).unwrap().complete_description();
        assert!(complete.contains("Paged:"), "{name}: {complete}");
    }
    assert!(lists > 50, "{lists} list tools");
    server.stop().await;
}

/// The core surface: at most 40 tools, each declared under `core:` or a meta-tool, and every
/// core tool of the manifest is listed; `--sudo` advertises `sudo` on each.
#[tokio::test]
async fn the_core_surface_lists_the_core_tools_and_the_meta_tools() {
    let catalog = catalog();
    let forge = FakeForge::start().await;
    let server = Launch::new(&forge).start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(tools.len() <= 40, "{} tools", tools.len());
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for meta in Meta::ALL {
        assert!(names.contains(&meta.name()), "{names:?}");
    }
    let listed: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| Meta::named(n).is_none())
        .collect();
    assert_eq!(
        listed,
        catalog.core.iter().map(String::as_str).collect::<Vec<_>>()
    );
    let write = tools.iter().find(|t| t.name == "call_write_tool").unwrap();
    assert_eq!(
        write.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    let read = tools.iter().find(|t| t.name == "call_read_tool").unwrap();
    assert_eq!(
        read.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert!(
        tools
            .iter()
            .all(|t| t.input_schema["properties"].get("sudo").is_none())
    );
    server.stop().await;

    let server = Launch::new(&forge).arg("--sudo").start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    for tool in manifest_tools(&tools) {
        assert!(
            tool.input_schema["properties"].get("sudo").is_some(),
            "{}",
            tool.name
        );
    }
    server.stop().await;
}
