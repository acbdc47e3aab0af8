//! Whole-surface guards over `tools/list` as a client sees it: names, annotations, schemas.

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
