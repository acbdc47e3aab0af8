//! The tool surface through the binary: the meta-tools of `core` (search, describe, the two
//! call tools, read_resource), unlisted tools still answering `tools/call`, continuations that
//! name how to reach their tool, and the byte budget of every answer.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::support::fake_forge::{GOOD_TOKEN, Reply};
use crate::support::fixtures::LABEL_ID;
use crate::support::{FakeForge, Launch, Server};

async fn failure(server: &Server, tool: &str, args: Value) -> CallToolResult {
    let result = server.call_ok_or_error(tool, args).await;
    assert_eq!(result.is_error, Some(true), "{tool}: {result:?}");
    result
}

/// A tool `core` does not list runs by its own name, through call_read_tool with the very same
/// answer, and its refusals are the same errors.
#[tokio::test]
async fn an_unlisted_tool_runs_directly_and_through_call_read_tool_alike() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let listed: Vec<String> = server
        .client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(!listed.contains(&"list_org_labels".to_owned()));
    let args = json!({"org": "acme", "limit": 1});
    let direct = server.call_ok("list_org_labels", args.clone()).await;
    let through = server
        .call_ok(
            "call_read_tool",
            json!({"name": "list_org_labels", "arguments": args}),
        )
        .await;
    assert_eq!(direct, through);
    assert_eq!(direct["items"].as_array().unwrap().len(), 1);

    // The same validation: a bad argument is refused before any request, in the same words.
    forge.clear_log();
    let bad = json!({"org": "a/b"});
    let direct = failure(&server, "list_org_labels", bad.clone()).await;
    let through = failure(
        &server,
        "call_read_tool",
        json!({"name": "list_org_labels", "arguments": bad}),
    )
    .await;
    assert_eq!(
        crate::support::result_text(&direct),
        crate::support::result_text(&through)
    );
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());

    // An unknown tool is the same protocol error either way.
    let unknown = server.call("no_such_tool", json!({})).await.unwrap_err();
    let through = server
        .call("call_read_tool", json!({"name": "no_such_tool"}))
        .await
        .unwrap_err();
    assert_eq!(
        (unknown.code, unknown.message.clone()),
        (through.code, through.message)
    );
    server.stop().await;
}

/// call_read_tool refuses anything that is not read-only, naming call_write_tool, before any
/// request; call_write_tool runs it; neither runs a meta-tool.
#[tokio::test]
async fn writes_go_through_call_write_tool_only() {
    let forge = FakeForge::standard().await;
    forge.route(
        "POST",
        "/repos/acme/widgets/labels",
        Reply::Json(json!({"id": 9, "name": "bug", "color": "ff0000"})),
    );
    let server = Launch::new(&forge).token(GOOD_TOKEN).start().await;
    let args = json!({"owner": "acme", "repo": "widgets", "name": "bug", "color": "ff0000"});
    forge.clear_log();
    let refused = failure(
        &server,
        "call_read_tool",
        json!({"name": "create_repo_label", "arguments": args}),
    )
    .await;
    assert!(
        crate::support::result_text(&refused).contains("call_write_tool"),
        "{}",
        crate::support::result_text(&refused)
    );
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());

    let created = server
        .call_ok(
            "call_write_tool",
            json!({"name": "create_repo_label", "arguments": args}),
        )
        .await;
    assert_eq!(created["name"], "bug");
    assert_eq!(forge.requests().last().unwrap().method, "POST");

    let nested = failure(
        &server,
        "call_write_tool",
        json!({"name": "call_read_tool", "arguments": {"name": "get_version"}}),
    )
    .await;
    assert!(
        crate::support::result_text(&nested).contains("meta-tool"),
        "{}",
        crate::support::result_text(&nested)
    );
    server.stop().await;
}

/// search_tools finds unlisted tools and says how to call them; describe_tools gives their
/// whole description and arguments, and on request the complete schema (patterns and all)
/// that tools/list leaves out.
#[tokio::test]
async fn search_and_describe_reach_every_tool() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let found = server
        .call_ok(
            "search_tools",
            json!({"query": "list the labels of an organization"}),
        )
        .await;
    let hit = found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "list_org_labels")
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(hit["call_with"], "call_read_tool");
    assert_eq!(hit["read_only"], true);

    // Lean by default: the whole description and the listed form of the arguments.
    let described = server
        .call_ok(
            "describe_tools",
            json!({"names": ["list_org_labels", "nope"]}),
        )
        .await;
    let tool = &described["tools"][0];
    assert_eq!(tool["name"], "list_org_labels");
    assert!(tool["inputSchema"]["properties"]["org"].is_object());
    assert!(
        tool["inputSchema"]["properties"]["org"]
            .get("pattern")
            .is_none()
    );
    assert!(tool["inputSchema"]["properties"].get("sudo").is_none());
    assert!(tool.get("outputSchema").is_none());
    assert_eq!(tool["read_only"], true);
    assert_eq!(tool["call_with"], "call_read_tool");
    // Complete on request: patterns, sudo, the paging note, the output schema, annotations.
    let complete = server
        .call_ok(
            "describe_tools",
            json!({"names": ["list_org_labels"], "complete": true}),
        )
        .await;
    let whole = &complete["tools"][0];
    assert_eq!(whole["inputSchema"]["additionalProperties"], false);
    assert!(whole["inputSchema"]["properties"]["org"]["pattern"].is_string());
    assert!(whole["inputSchema"]["properties"]["sudo"].is_object());
    assert!(whole["description"].as_str().unwrap().contains("Paged:"));
    assert!(whole["outputSchema"]["properties"]["items"].is_object());
    assert_eq!(whole["annotations"]["readOnlyHint"], true);
    assert_eq!(described["unknown"][0]["name"], "nope");

    let error = failure(&server, "search_tools", json!({"query": 5})).await;
    assert!(
        crate::support::result_text(&error).contains("query"),
        "{}",
        crate::support::result_text(&error)
    );
    server.stop().await;
}

/// read_resource gives the blocks resources/read gives, and the same error (code, message and
/// data) when the read fails.
#[tokio::test]
async fn read_resource_answers_as_resources_read_does() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let uri = format!("forgejo://repo/acme/widgets/label/{LABEL_ID}");
    let blocks: Vec<String> = server
        .read_blocks(&uri)
        .await
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    let result = server
        .call_ok_or_error("read_resource", json!({"uri": uri}))
        .await;
    assert_ne!(result.is_error, Some(true));
    let texts: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert_eq!(texts, blocks);

    for uri in [
        "forgejo://repo/acme/widgets/label/999999",
        "forgejo://repo/acme/widgets/label/x",
    ] {
        let wire = server.read(uri).await.unwrap_err();
        let result = failure(&server, "read_resource", json!({"uri": uri})).await;
        let error = &result.structured_content.as_ref().unwrap()["error"];
        assert_eq!(error["code"], wire.code.0, "{uri}");
        assert_eq!(error["message"], wire.message.as_ref(), "{uri}");
        assert_eq!(error["data"], wire.data.clone().unwrap(), "{uri}");
    }
    server.stop().await;
}

/// A continuation names a tool the surface lists plainly, and one it does not through the
/// meta-tool that runs it; in `full` every tool is named plainly.
#[tokio::test]
async fn continuations_say_how_to_reach_their_tool() {
    let forge = FakeForge::standard().await;
    let core = Launch::new(&forge).start().await;
    let org = core.read_json("forgejo://org/bigorg/labels").await;
    assert!(
        org["truncated"]
            .as_str()
            .unwrap()
            .contains("Use list_org_labels tool (through call_read_tool) with page=2"),
        "{org}"
    );
    let repo = core
        .read_json("forgejo://repo/acme/many-labels/labels")
        .await;
    assert!(
        repo["truncated"]
            .as_str()
            .unwrap()
            .contains("Use list_repo_labels tool with page=2"),
        "{repo}"
    );
    core.stop().await;
    let full = Launch::new(&forge).full().start().await;
    let org = full.read_json("forgejo://org/bigorg/labels").await;
    assert!(
        org["truncated"]
            .as_str()
            .unwrap()
            .contains("Use list_org_labels tool with page=2"),
        "{org}"
    );
    full.stop().await;
}

/// The budget holds for a one-line file of a mebibyte: a first window with the byte to go on
/// from, and the windows join up to the whole line.
#[tokio::test]
async fn a_megabyte_on_one_line_comes_in_bounded_windows() {
    let forge = FakeForge::standard().await;
    let line: String = (0..(1 << 20))
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    forge.route(
        "GET",
        "/repos/acme/widgets/raw/dist/app.min.js",
        Reply::Text(line.clone()),
    );
    let server = Launch::new(&forge)
        .arg("--max-answer-bytes")
        .arg("65536")
        .start()
        .await;
    let args = json!({"owner": "acme", "repo": "widgets", "path": "dist/app.min.js"});
    let mut joined = String::new();
    let mut next = 0u64;
    let mut calls = 0;
    loop {
        let mut call = args.clone();
        call["start_line"] = json!(1);
        call["start_byte"] = json!(next);
        let result = server.call("get_file_contents", call).await.unwrap();
        let text = crate::support::result_text(&result);
        assert!(text.len() <= 65_536, "{} bytes", text.len());
        let value = result.structured_content.unwrap();
        joined.push_str(value["text"].as_str().unwrap());
        calls += 1;
        match value.get("end_byte").and_then(Value::as_u64) {
            Some(end) => {
                let marker = value["truncated"].as_str().unwrap();
                assert!(marker.contains(&format!("start_byte={end}")), "{marker}");
                next = end;
            }
            None => break,
        }
    }
    assert_eq!(joined, line);
    assert!(calls > 16, "{calls} windows of at most 64 KiB for 1 MiB");
    server.stop().await;
}

/// A 50 000-line job log comes back as its bounded tail, saying which lines and how to go on.
#[tokio::test]
async fn a_long_log_comes_back_as_its_bounded_tail() {
    let forge = FakeForge::standard().await;
    let log: String = (1..=50_000)
        .map(|i| {
            format!("2026-12-01T10:00:00Z step {i}: compiling crate number {i} of the workspace\n")
        })
        .collect();
    forge.route(
        "GET",
        "/repos/acme/widgets/actions/jobs/7/logs",
        Reply::Text(log),
    );
    let server = Launch::new(&forge).start().await;
    let result = server
        .call(
            "get_action_job_logs",
            json!({"owner": "acme", "repo": "widgets", "job_id": 7}),
        )
        .await
        .unwrap();
    assert!(
        crate::support::result_text(&result).len() <= 48 * 1024,
        "{}",
        crate::support::result_text(&result).len()
    );
    let value = result.structured_content.unwrap();
    assert_eq!(value["end_line"], 50_000);
    assert_eq!(value["total_lines"], 50_000);
    let marker = value["truncated"].as_str().unwrap();
    assert!(marker.contains("for earlier lines"), "{marker}");
    server.stop().await;
}

/// A page whose items are too large for the budget becomes a smaller page at the same offset,
/// and following its continuation gives every item once.
#[tokio::test]
async fn an_oversized_page_becomes_a_smaller_page_that_continues_exactly() {
    let forge = FakeForge::standard().await;
    let items: Vec<Value> = (1..=60)
        .map(|i| {
            json!({"id": i, "name": format!("label-{i}"), "color": "00ff00",
            "description": "x".repeat(3_000), "exclusive": false, "is_archived": false})
        })
        .collect();
    forge.route(
        "GET",
        "/repos/acme/fat/labels",
        Reply::List { items, link: false },
    );
    let server = Launch::new(&forge).start().await;
    let mut seen = Vec::new();
    let (mut page, mut limit) = (1u64, 50u64);
    loop {
        let result = server
            .call(
                "list_repo_labels",
                json!({"owner": "acme", "repo": "fat", "page": page, "limit": limit}),
            )
            .await
            .unwrap();
        assert!(
            crate::support::result_text(&result).len() <= 48 * 1024,
            "{}",
            crate::support::result_text(&result).len()
        );
        let value = result.structured_content.unwrap();
        seen.extend(
            value["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["id"].as_u64().unwrap()),
        );
        if value["has_more"] != true {
            break;
        }
        let asked = limit;
        (page, limit) = (
            value["next_page"].as_u64().unwrap(),
            value["limit"].as_u64().unwrap(),
        );
        // Cut below the limit asked for: the answer says so, and names the next call.
        if limit < asked {
            let note = value["truncated"].as_str().unwrap();
            assert!(
                note.contains(&format!("page={page} and limit={limit}")),
                "{note}"
            );
        }
    }
    assert_eq!(seen, (1..=60).collect::<Vec<_>>());
    server.stop().await;
}

/// The escape hatch is bounded too: a huge answer is cut where it is largest, and says so.
#[tokio::test]
async fn the_escape_hatch_answer_is_bounded() {
    let forge = FakeForge::standard().await;
    let tree: Vec<Value> = (0..20_000)
        .map(|i| json!({"path": format!("src/module_{i}/file.rs"), "type": "blob", "sha": "0123456789abcdef0123456789abcdef01234567"}))
        .collect();
    forge.route(
        "GET",
        "/repos/acme/widgets/git/trees/main",
        Reply::Json(json!({"sha": "abc", "truncated": false, "tree": tree})),
    );
    let server = Launch::new(&forge).start().await;
    let result = server
        .call(
            "forgejo_api_request",
            json!({"path": "repos/acme/widgets/git/trees/main"}),
        )
        .await
        .unwrap();
    assert!(
        crate::support::result_text(&result).len() <= 48 * 1024,
        "{}",
        crate::support::result_text(&result).len()
    );
    let value = result.structured_content.unwrap();
    assert_eq!(value["truncated"], false, "the forge's own field stays");
    let note = value["_truncated"].as_str().unwrap();
    assert!(
        note.contains("`$.tree` holds") && note.contains("of 20000 items"),
        "{note}"
    );
    server.stop().await;
}

/// Resources keep the budget too: a one-line file read as a resource comes in windows whose
/// continuation is a URI with `start_byte`, and the blocks of each stay under the budget.
#[tokio::test]
async fn a_resource_of_one_long_line_continues_by_uri() {
    use base64::Engine as _;
    let forge = FakeForge::standard().await;
    let line: String = (0..200_000)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    forge.route(
        "GET",
        "/repos/acme/widgets/contents/dist/app.min.js",
        Reply::Json(json!({
            "name": "app.min.js", "path": "dist/app.min.js", "type": "file",
            "size": line.len(), "sha": "4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d",
            "encoding": "base64",
            "content": base64::engine::general_purpose::STANDARD.encode(&line),
        })),
    );
    let server = Launch::new(&forge).start().await;
    let mut uri = "forgejo://repo/acme/widgets/contents/dist/app.min.js".to_owned();
    let mut joined = String::new();
    for _ in 0..10 {
        let blocks = server.read_blocks(&uri).await;
        let size: usize = blocks.iter().map(|(_, text)| text.len()).sum();
        assert!(size <= 48 * 1024, "{uri}: {size} bytes");
        let json: Value = serde_json::from_str(&blocks[0].1).unwrap();
        joined.push_str(crate::support::enveloped(&blocks[1].1).1);
        let Some(end) = json.get("end_byte").and_then(Value::as_u64) else {
            break;
        };
        let marker = json["truncated"].as_str().unwrap();
        let next = marker
            .split("Read ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("{marker}"));
        assert!(next.contains(&format!("start_byte={end}")), "{marker}");
        uri = next.to_owned();
    }
    assert_eq!(joined, line, "the windows join up to the whole line");
    server.stop().await;
}
