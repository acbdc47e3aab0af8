//! The 2026-07-28 revision to the letter, through the binary over raw HTTP and stdio: what its
//! MUSTs and SHOULDs ask of a server like this one (docs/protocol.md lists each with the test
//! that holds it), and the small things a newcomer met first (issue 31): one form for "method
//! not found", a line that is not JSON answered, the start-up line after the bind, hints that
//! fit the error, `forgelens list tools` as a client sees it.

use serde_json::{Value, json};

use crate::support::fake_forge::{FakeForge, GOOD_TOKEN, NO_SCOPE_TOKEN};
use crate::support::fixtures::LABEL_ID;
use crate::support::{BIN, HttpServer, Launch, run};

const MODERN: &str = "2026-07-28";

/// A stateless request's body: the method, its params, and the `_meta` that revision requires.
fn modern(id: u64, method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "revision-test", "version": "0"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// POSTs a stateless request with its mirrored headers (or others the test gives).
async fn post(http: &HttpServer, body: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut all = vec![("mcp-protocol-version", MODERN)];
    all.extend_from_slice(headers);
    let response = http.post(body, &all).await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let answer = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, answer)
}

#[tokio::test]
async fn a_method_the_stateless_revision_lacks_is_a_404_with_minus_32601_in_both_modes() {
    let forge = FakeForge::standard().await;
    for sessions in [false, true] {
        let mut launch = Launch::new(&forge);
        if sessions {
            launch = launch.arg("--sessions");
        }
        let http = launch.start_http().await;
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": MODERN, "capabilities": {},
            "clientInfo": {"name": "x", "version": "0"}}})
        .to_string();
        let cases = [
            ("initialize", initialize),
            ("ping", modern(2, "ping", json!({}))),
            (
                "logging/setLevel",
                modern(3, "logging/setLevel", json!({"level": "info"})),
            ),
            ("prompts/list", modern(4, "prompts/list", json!({}))),
        ];
        for (method, body) in cases {
            let (status, answer) = post(&http, &body, &[("mcp-method", method)]).await;
            assert_eq!(status, 404, "{method} (sessions: {sessions}): {answer}");
            assert_method_not_found(&answer, method);
        }
    }
}

#[tokio::test]
async fn every_method_not_found_has_one_form_on_stdio_too() {
    let forge = FakeForge::standard().await;
    let mut raw = crate::support::raw::Raw::start(&forge).await;
    for (id, method) in [(7, "logging/setLevel"), (8, "prompts/get"), (9, "no/such")] {
        raw.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"level": "info", "name": "x"}})
                .to_string(),
        )
        .await;
        let answer = raw.answer_to(&json!(id)).await;
        assert_method_not_found(&answer, method);
    }
}

/// The one form both transports give a method the server does not serve.
fn assert_method_not_found(answer: &Value, method: &str) {
    assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    assert_eq!(
        answer["error"]["message"],
        format!("Method not found: {method}"),
        "{method}"
    );
}

#[tokio::test]
async fn mirrored_headers_must_match_the_body() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let call = modern(
        1,
        "tools/call",
        json!({"name": "search_tools", "arguments": {"query": "labels"}}),
    );
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[("mcp-method", "tools/list"), ("mcp-name", "search_tools")],
            "Mcp-Method",
        ),
        (
            &[("mcp-method", "tools/call"), ("mcp-name", "describe_tools")],
            "Mcp-Name",
        ),
        (&[("mcp-name", "search_tools")], "Mcp-Method"),
    ];
    for (headers, named) in cases {
        let (status, answer) = post(&http, &call, headers).await;
        assert_eq!(status, 400, "{headers:?}: {answer}");
        assert_eq!(answer["error"]["code"], -32020, "{headers:?}: {answer}");
        assert!(
            answer["error"]["message"].as_str().unwrap().contains(named),
            "{answer}"
        );
    }
    let (status, answer) = post(
        &http,
        &call,
        &[("mcp-method", "tools/call"), ("mcp-name", "search_tools")],
    )
    .await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn cacheable_results_say_how_long_and_for_whom_and_every_result_names_its_server() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).token(GOOD_TOKEN).start_http().await;
    let label = format!("forgejo://repo/acme/widgets/label/{LABEL_ID}");
    let surface = forgelens::mcp::SURFACE_TTL_MS;
    // (method, params, its Mcp-Name, ttlMs expected, cacheScope expected)
    let cases = [
        (
            "server/discover",
            json!({}),
            None,
            Some(surface),
            Some("public"),
        ),
        ("tools/list", json!({}), None, Some(surface), Some("public")),
        (
            "resources/templates/list",
            json!({}),
            None,
            Some(surface),
            Some("public"),
        ),
        ("resources/list", json!({}), None, Some(0), Some("private")),
        (
            "resources/read",
            json!({"uri": label}),
            Some(label.as_str()),
            Some(0),
            Some("private"),
        ),
        (
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "labels"}}),
            Some("search_tools"),
            None,
            None,
        ),
    ];
    for (id, (method, params, name, ttl, scope)) in cases.into_iter().enumerate() {
        let mut headers = vec![("mcp-method", method)];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        let (status, answer) = post(&http, &modern(id as u64, method, params), &headers).await;
        assert_eq!(status, 200, "{method}: {answer}");
        let result = &answer["result"];
        if let Some(ttl) = ttl {
            assert_eq!(result["ttlMs"], ttl, "{method}: {result}");
        }
        if let Some(scope) = scope {
            assert_eq!(result["cacheScope"], scope, "{method}: {result}");
        }
        if method != "server/discover" {
            assert_eq!(
                result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "forgelens",
                "{method}: {result}"
            );
        }
    }
    // Without a token, a read is anyone's.
    let anonymous = Launch::new(&forge).start_http().await;
    let (_, answer) = post(
        &anonymous,
        &modern(9, "resources/read", json!({"uri": "forgejo://instance"})),
        &[
            ("mcp-method", "resources/read"),
            ("mcp-name", "forgejo://instance"),
        ],
    )
    .await;
    assert_eq!(answer["result"]["cacheScope"], "public", "{answer}");
}

#[tokio::test]
async fn tools_are_listed_in_one_order_every_time() {
    let forge = FakeForge::standard().await;
    for surface in ["core", "full"] {
        let names = || async {
            let server = Launch::new(&forge)
                .arg("--tool-surface")
                .arg(surface)
                .start()
                .await;
            let tools: Vec<String> = server
                .client
                .list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            server.stop().await;
            tools
        };
        let first = names().await;
        assert_eq!(first, names().await, "{surface}");
        let mut unique = first.clone();
        unique.dedup();
        assert_eq!(unique.len(), first.len(), "{surface}: a name twice");
    }
}

#[tokio::test]
async fn a_legacy_client_keeps_the_legacy_codes_and_a_stateless_one_gets_minus_32602() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let missing = "forgejo://repo/acme/widgets/label/999";
    let legacy = http.connect(None).await;
    let (code, data) = legacy.read_error(missing).await;
    assert_eq!((code, data["reason"].as_str()), (-32003, Some("not_found")));
    legacy.stop().await;
    let (status, answer) = post(
        &http,
        &modern(1, "resources/read", json!({"uri": missing})),
        &[("mcp-method", "resources/read"), ("mcp-name", missing)],
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (
            answer["error"]["code"].as_i64(),
            answer["error"]["data"]["reason"].as_str()
        ),
        (Some(-32602), Some("not_found"))
    );
}

#[tokio::test]
async fn a_line_that_is_not_json_is_answered_and_logged() {
    use std::io::Write as _;
    let forge = FakeForge::standard().await;
    let mut child = std::process::Command::new(BIN)
        .env_clear()
        .env("FORGEJO_URL", forge.url())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"hello, is this thing on?\n").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let answer: Value = serde_json::from_str(stdout.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("no JSON answer ({e}): {stdout}"));
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(
        stderr.contains("not JSON") && stderr.contains("hello, is this thing on?"),
        "{stderr}"
    );
    // A client waiting after such a line is answered without sending another.
    let mut raw = crate::support::raw::Raw::start(&forge).await;
    raw.send("{oops").await;
    let line = tokio::time::timeout(std::time::Duration::from_secs(20), raw.stdout.next_line())
        .await
        .expect("an answer in time")
        .unwrap()
        .expect("a line");
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#)
        .await;
    assert_eq!(raw.answer_to(&json!(5)).await["result"], json!({}));
}

#[tokio::test]
async fn the_start_up_line_comes_after_the_bind() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = run(
        &["serve", "--http", &addr],
        &[("FORGEJO_URL", "http://127.0.0.1:9")],
    );
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("cannot listen"), "{}", out.stderr);
    assert!(!out.stderr.contains("serving MCP"), "{}", out.stderr);
}

#[test]
fn list_tools_shows_what_a_client_is_offered() {
    let env = [("FORGEJO_URL", "http://127.0.0.1:9")];
    let core = run(&["list", "tools"], &env);
    assert_eq!(core.code, 0, "{}", core.stderr);
    let lines: Vec<&str> = core.stdout.lines().collect();
    assert_eq!(lines.len(), 33, "{}", core.stdout);
    assert!(lines[0].starts_with("search_tools\tmeta\t"), "{}", lines[0]);
    let all = run(&["list", "tools", "--all"], &env);
    let every: Vec<&str> = all.stdout.lines().collect();
    assert!(every.len() > 200, "{}", every.len());
    assert!(
        every
            .iter()
            .any(|l| l.starts_with("list_notifications\t") && l.ends_with("through call_read_tool")),
        "{}",
        all.stdout
    );
    let read_only = run(&["list", "tools", "--read-only"], &env);
    assert!(
        !read_only.stdout.contains("call_write_tool"),
        "{}",
        read_only.stdout
    );
}

#[tokio::test]
async fn hints_fit_the_error() {
    // A tool's bad arguments point to its schema; a read's bad URI to its template.
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let tool = server
        .call_ok_or_error(
            "get_issue",
            json!({"owner": "acme", "repo": "widgets", "index": "x"}),
        )
        .await;
    let text = crate::support::result_text(&tool);
    assert!(
        text.contains("describe_tools") && !text.contains("resources/templates/list"),
        "{text}"
    );
    // A bad URI names its template, and the tool that finds a tool reading the same: both
    // reachable through read_resource, where resources/templates/list is not.
    let read = server
        .read("forgejo://repo/acme/widgets/label/abc")
        .await
        .unwrap_err();
    assert!(
        read.message
            .contains("forgejo://repo/{owner}/{repo}/label/{id}")
            && read.message.contains("search_tools")
            && !read.message.contains("resources/templates/list"),
        "{}",
        read.message
    );
    assert!(!read.message.contains("describe_tools"), "{}", read.message);
    server.stop().await;

    // A forge that cannot be reached is not one to retry later.
    let nowhere = run(
        &["call", "get_version"],
        &[("FORGEJO_URL", "http://127.0.0.1:9")],
    );
    assert!(
        nowhere.stderr.contains("check FORGEJO_URL"),
        "{}",
        nowhere.stderr
    );
    assert!(
        !nowhere.stderr.contains("retrying later"),
        "{}",
        nowhere.stderr
    );

    // A client's own token that lacks a scope is the client's to change.
    forge.private_repo("acme/secret");
    let http = Launch::new(&forge).token(GOOD_TOKEN).start_http().await;
    let client = http
        .connect(Some(&format!("Bearer {NO_SCOPE_TOKEN}")))
        .await;
    let err = client
        .read("forgejo://repo/acme/secret/label/7")
        .await
        .unwrap_err();
    assert!(
        err.message.contains("Authorization header"),
        "{}",
        err.message
    );
    assert!(!err.message.contains("FORGEJO_TOKEN"), "{}", err.message);
    client.stop().await;
    let configured = Launch::new(&forge).token(NO_SCOPE_TOKEN).start().await;
    let err = configured
        .read("forgejo://repo/acme/secret/label/7")
        .await
        .unwrap_err();
    assert!(err.message.contains("FORGEJO_TOKEN"), "{}", err.message);
    configured.stop().await;
}

#[test]
fn read_and_call_failures_say_the_same_things() {
    let env = [("FORGEJO_URL", "http://127.0.0.1:9")];
    let read = run(&["read", "forgejo://instance"], &env);
    let call = run(&["call", "get_version"], &env);
    for out in [&read, &call] {
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(
            out.stderr.contains("[upstream_error, code -32603]"),
            "{}",
            out.stderr
        );
    }
}

/// `scripts/try_client.py` says what it needs when the SDK is missing, rather than a traceback.
#[test]
fn the_helper_script_says_what_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    // A package named `mcp` that cannot be imported stands for the SDK being absent.
    std::fs::create_dir(dir.path().join("mcp")).unwrap();
    std::fs::write(
        dir.path().join("mcp/__init__.py"),
        "raise ImportError('absent')\n",
    )
    .unwrap();
    let output = match std::process::Command::new("python3")
        .arg("scripts/try_client.py")
        .env("PYTHONPATH", dir.path())
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            eprintln!("skipped the helper script's check: python3 does not run here ({e})");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("pip install mcp"), "{stderr}");
    assert!(!stderr.contains("Traceback"), "{stderr}");
}
