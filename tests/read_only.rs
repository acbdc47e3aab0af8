//! `--read-only`: only read tools are offered, every one of them works, nothing but GET leaves
//! the process, and every other tool is refused without reaching the forge.

use std::collections::BTreeSet;

use rmcp::model::Tool;
use serde_json::json;

use crate::support::fake_forge::GOOD_TOKEN;
use crate::support::{
    Launch, is_read_only, manifest_tools, required_args, result_text, tool_world,
};

#[tokio::test]
async fn read_only_mode_calls_every_read_tool_with_get_only_and_refuses_the_rest() {
    let forge = tool_world::forge().await;

    let everything = Launch::new(&forge).full().start().await;
    let all = everything.client.list_all_tools().await.unwrap();
    everything.stop().await;
    let all = manifest_tools(&all);
    let writes: Vec<&Tool> = all.iter().copied().filter(|t| !is_read_only(t)).collect();
    let reads: BTreeSet<String> = all
        .iter()
        .filter(|t| is_read_only(t))
        .map(|t| t.name.to_string())
        .collect();
    assert!(!writes.is_empty() && !reads.is_empty());

    let server = Launch::new(&forge)
        .token(GOOD_TOKEN)
        .arg("--read-only")
        .full()
        .start()
        .await;
    let listed = server.client.list_all_tools().await.unwrap();
    let listed = manifest_tools(&listed);
    let listed_names: BTreeSet<String> = listed.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        listed_names, reads,
        "read-only mode lists exactly the read tools"
    );

    forge.clear_log();
    for tool in &listed {
        let args = tool_world::sample_args(&tool.name, &required_args(tool))
            .unwrap_or_else(|e| panic!("{e}"));
        let result = server
            .call(&tool.name, args.clone())
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", tool.name));
        assert_ne!(
            result.is_error,
            Some(true),
            "{} {args}: {}",
            tool.name,
            result_text(&result)
        );
        assert!(
            result.structured_content.is_some(),
            "{}: no structured content",
            tool.name
        );
    }
    let log = forge.requests();
    assert_eq!(
        log.len(),
        listed.len(),
        "one upstream request per read tool"
    );
    assert_only_gets(&forge);

    forge.clear_log();
    for tool in &writes {
        assert!(!listed_names.contains(tool.name.as_ref()), "{}", tool.name);
        let result = server
            .call(&tool.name, json!({}))
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", tool.name));
        assert_eq!(result.is_error, Some(true), "{} was not refused", tool.name);
        let text = result_text(&result);
        assert!(
            text.contains("not offered") && text.contains("read-only"),
            "{}: {text}",
            tool.name
        );
    }
    assert!(
        forge.requests().is_empty(),
        "a refused tool reached the forge: {:?}",
        forge.requests()
    );
    server.stop().await;
}

/// The core surface in read-only mode: no write tool and no `call_write_tool` is listed,
/// `call_read_tool` runs every read tool with GET alone and reaches no write, and
/// `call_write_tool` is refused.
#[tokio::test]
async fn read_only_core_lists_no_write_and_call_read_tool_reaches_none() {
    let forge = tool_world::forge().await;
    let everything = Launch::new(&forge).full().start().await;
    let all = everything.client.list_all_tools().await.unwrap();
    everything.stop().await;
    let all: Vec<Tool> = manifest_tools(&all).into_iter().cloned().collect();

    let server = Launch::new(&forge)
        .token(GOOD_TOKEN)
        .arg("--read-only")
        .start()
        .await;
    let listed = server.client.list_all_tools().await.unwrap();
    for tool in &listed {
        assert!(
            is_read_only(tool),
            "{} is listed in read-only mode",
            tool.name
        );
    }
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    assert!(!names.contains(&"call_write_tool"), "{names:?}");
    assert!(names.contains(&"call_read_tool"), "{names:?}");

    forge.clear_log();
    for tool in &all {
        // A write is refused before its arguments are looked at.
        let args = match is_read_only(tool) {
            true => tool_world::sample_args(&tool.name, &required_args(tool))
                .unwrap_or_else(|e| panic!("{e}")),
            false => json!({}),
        };
        let result = server
            .call_ok_or_error(
                "call_read_tool",
                json!({"name": tool.name, "arguments": args}),
            )
            .await;
        match is_read_only(tool) {
            true => assert_ne!(
                result.is_error,
                Some(true),
                "{}: {}",
                tool.name,
                result_text(&result)
            ),
            false => {
                assert_eq!(
                    result.is_error,
                    Some(true),
                    "{} ran through call_read_tool",
                    tool.name
                );
                assert!(
                    result_text(&result).contains("not offered"),
                    "{}",
                    result_text(&result)
                );
            }
        }
        let write = server
            .call_ok_or_error("call_write_tool", json!({"name": tool.name}))
            .await;
        assert_eq!(
            write.is_error,
            Some(true),
            "call_write_tool ran {}",
            tool.name
        );
    }
    assert_only_gets(&forge);
    assert_eq!(
        forge.requests().len(),
        all.iter().filter(|t| is_read_only(t)).count(),
        "one request per read tool, none for the rest"
    );
    server.stop().await;
}

fn assert_only_gets(forge: &crate::support::FakeForge) {
    let not_get: Vec<String> = forge
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(not_get.is_empty(), "non-GET requests: {not_get:?}");
}
