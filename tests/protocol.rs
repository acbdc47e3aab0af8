//! Protocol details that clients trip on, through the binary: malformed params are invalid
//! params (with the reason a failed read carries), an unserved method says so, an empty protocol version is refused, a clean end of
//! input before any session is a clean exit, and a session's DELETE answers 204.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::raw::Raw;
use crate::support::{BIN, FakeForge, Launch, initialize_body};

#[tokio::test]
async fn malformed_params_are_invalid_params_and_unserved_methods_say_so() {
    let forge = FakeForge::standard().await;
    let mut raw = Raw::start(&forge).await;
    let cases = [
        (
            json!({"method": "resources/read", "params": {}}),
            -32602,
            "invalid params of resources/read",
        ),
        (
            json!({"method": "resources/read", "params": {"uri": 5}}),
            -32602,
            "invalid type",
        ),
        (
            json!({"method": "tools/call", "params": {"name": 5}}),
            -32602,
            "invalid params of tools/call",
        ),
        (
            json!({"method": "prompts/list"}),
            -32601,
            "Method not found: prompts/list",
        ),
        (
            json!({"method": "prompts/get", "params": {"name": "x"}}),
            -32601,
            "Method not found: prompts/get",
        ),
        (
            json!({"method": "no/such/method"}),
            -32601,
            "Method not found: no/such/method",
        ),
    ];
    for (i, (mut request, code, message)) in cases.into_iter().enumerate() {
        let id = 100 + i as u64;
        request["jsonrpc"] = json!("2.0");
        request["id"] = json!(id);
        raw.send(&request.to_string()).await;
        let answer = raw.answer_to(&json!(id)).await;
        assert_eq!(answer["error"]["code"], code, "{request}: {answer}");
        let text = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(text.contains(message), "{request}: {answer}");
        if code == -32602 {
            assert_eq!(
                answer["error"]["data"]["reason"], "invalid_params",
                "{request}: {answer}"
            );
        }
    }
    assert_eq!(raw.exit_code().await, 0);
}

/// Runs the stdio server on `input` and returns its exit code and stderr.
async fn stdio_once(forge: &FakeForge, input: &str) -> (i32, String, String) {
    let mut child = tokio::process::Command::new(BIN)
        .env_clear()
        .env("FORGEJO_URL", forge.url())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .await
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits")
        .unwrap();
    (status.code().unwrap_or(-1), out, err)
}

#[tokio::test]
async fn input_that_ends_before_a_session_is_a_clean_exit() {
    let forge = FakeForge::standard().await;
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}});
    for input in [String::new(), format!("{discover}\n")] {
        let (code, _, stderr) = stdio_once(&forge, &input).await;
        assert_eq!(code, 0, "{input:?}: {stderr}");
        assert!(!stderr.contains("initialize"), "{input:?}: {stderr}");
    }
}

#[tokio::test]
async fn an_empty_protocol_version_is_an_invalid_request() {
    let forge = FakeForge::standard().await;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let (_, stdout, _) = stdio_once(&forge, &format!("{request}\n")).await;
    let answer: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion is empty"),
        "{answer}"
    );
    // Over HTTP too.
    let http = Launch::new(&forge).start_http().await;
    let response = http.post(&initialize_body(""), &[]).await;
    let text = response.text().await.unwrap();
    assert!(
        text.contains("-32600") && text.contains("protocolVersion is empty"),
        "{text}"
    );
}

#[tokio::test]
async fn a_sessions_delete_answers_204() {
    let forge = FakeForge::standard().await;
    let sessions = Launch::new(&forge).arg("--sessions").start_http().await;
    let opened = sessions.post(&initialize_body("2025-06-18"), &[]).await;
    let id = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let deleted = reqwest::Client::new()
        .delete(sessions.url())
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
}

#[tokio::test]
async fn a_failed_read_is_logged_once() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).spawn().await;
    let error = server
        .read("forgejo://repo/acme/widgets/label/404")
        .await
        .unwrap_err();
    assert_eq!(error.code.0, -32003, "{error:?}");
    let log = server.finish().await;
    // The lines a default log level shows (the test's own level adds debug lines).
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| !l.contains(" DEBUG ") && !l.contains(" TRACE "))
        .filter(|l| l.contains("label/404") || l.contains("labels/404"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("INFO"), "{log}");
}

/// Arguments and answers a model gets wrong get an answer that says what to do: a file's path
/// given to a directory listing names the tool that reads files; a leading `/` in the escape
/// hatch's path is explained in words; a fixed page size is described as fixed.
#[tokio::test]
async fn mistakes_are_answered_with_what_to_do() {
    let forge = FakeForge::standard().await;
    forge.route(
        "GET",
        "/repos/acme/widgets/contents/README.md",
        crate::support::fake_forge::Reply::Json(
            json!({"type": "file", "name": "README.md", "path": "README.md", "size": 12}),
        ),
    );
    let server = Launch::new(&forge).full().start().await;
    let listed = server
        .call_ok_or_error(
            "list_repo_contents",
            json!({"owner": "acme", "repo": "widgets", "path": "README.md"}),
        )
        .await;
    let text = format!("{:?}", listed.content);
    assert_eq!(listed.is_error, Some(true), "{text}");
    assert!(
        text.contains("names a file") && text.contains("get_file_contents"),
        "{text}"
    );
    assert!(
        !text.contains("retrying later") && !text.contains("{+filepath}"),
        "{text}"
    );
    let escape = server
        .call_ok_or_error(
            "forgejo_api_request",
            json!({"method": "GET", "path": "//version"}),
        )
        .await;
    let text = format!("{:?}", escape.content);
    assert!(text.contains("with or without its leading slash"), "{text}");
    assert!(
        !text.contains("\\\\x00") && !text.contains("^(?:"),
        "{text}"
    );
    // The complete description, as describe_tools gives it on request (tools/list shows its
    // first sentence).
    let described = server
        .call_ok(
            "describe_tools",
            json!({"names": ["get_wiki_revisions"], "complete": true}),
        )
        .await;
    let description = described["tools"][0]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(description.contains("50 items per page"), "{description}");
    assert!(!description.contains("`limit` 1 to 50"), "{description}");
    server.stop().await;
}

/// Each kind of caller mistake says, in words, what was wrong and what would be right; the
/// kinds are typed in the engine (`engine::Invalid`), and their words are the contract.
#[tokio::test]
async fn each_kind_of_refusal_says_what_was_wrong() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).full().start().await;
    let reads = [
        (
            "https://repo/acme/widgets/labels",
            "invalid URI `https://repo/acme/widgets/labels`: the scheme must be `forgejo://`",
        ),
        (
            "forgejo://nowhere/at/all",
            "no resource matches `forgejo://nowhere/at/all`; the nearest URI templates: forgejo://repo/{owner}/{repo}, ",
        ),
        (
            "forgejo://repo/acme/widgets/lable/3",
            "no resource matches `forgejo://repo/acme/widgets/lable/3`; the nearest URI templates: forgejo://repo/{owner}/{repo}/label/{id}, ",
        ),
        (
            "forgejo://repo/acme/widgets/labels?sort=name",
            "unknown query parameter `sort` for forgejo://repo/{owner}/{repo}/labels{?page,limit}; accepted: page, limit",
        ),
        (
            "forgejo://repo/acme/widgets/labels?page=0",
            "`page` must be an integer from 1 to 100000; got `0`",
        ),
        (
            "forgejo://repo/acme/widgets/contents/README.md?start_line=9&end_line=3",
            "end_line 3 is before start_line 9",
        ),
    ];
    for (uri, message) in reads {
        let error = server.read(uri).await.expect_err(uri);
        assert!(
            error.message.starts_with(message),
            "{uri}: {}",
            error.message
        );
    }
    let calls = [
        (
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets", "colour": "red"}),
            "unknown argument `colour` for list_repo_labels; it takes: owner, repo, page, limit, sudo",
        ),
        (
            "list_repo_labels",
            json!({"owner": "acme"}),
            "missing required argument `repo`",
        ),
        (
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets", "page": 0}),
            "argument `page` must be an integer from 1, not 0",
        ),
        (
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets", "sudo": 7}),
            "argument `sudo` must be a user name (letters, digits, `_`, `.`, `-`), not 7",
        ),
        (
            "get_issue",
            json!({"owner": "acme", "repo": "widgets", "index": "12a"}),
            "argument `index` must be a positive integer (an id or an index)",
        ),
    ];
    for (tool, args, message) in calls {
        let result = server.call_ok_or_error(tool, args.clone()).await;
        assert_eq!(result.is_error, Some(true), "{tool} {args}");
        let text = crate::support::result_text(&result);
        assert!(text.contains(message), "{tool} {args}: {text}");
    }
    server.stop().await;
}
