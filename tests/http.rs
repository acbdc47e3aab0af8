//! The Streamable HTTP transport: the binary started with `serve --http 127.0.0.1:0`, driven by
//! rmcp's HTTP client (both lifecycles) and, for what a client library would never send, by
//! plain HTTP requests.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fake_forge::{GOOD_TOKEN, NO_SCOPE_TOKEN};
use crate::support::fixtures::LABEL_ID;
use crate::support::{FakeForge, Launch, initialize_body, run};

/// The token a server is configured with, in the tests that need one.
const CONFIGURED_TOKEN: &str = "configured-token-4242";

/// Polls `done` until it holds, failing after `within`.
async fn eventually(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn templates_a_read_and_a_tool_call_over_http() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let server = http.connect(None).await;
    let info = server.client.peer_info().expect("initialize answered");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("forgelens")
    );
    let templates = server.client.list_all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "forgejo://repo/{owner}/{repo}/label/{id}"),
        "{templates:?}"
    );
    let label = server
        .read_json(&format!("forgejo://repo/acme/widgets/label/{LABEL_ID}"))
        .await;
    assert_eq!(label["id"], LABEL_ID);
    let page = server
        .call_ok(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets"}),
        )
        .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 3);
    server.stop().await;
}

#[tokio::test]
async fn the_stateless_2026_07_28_revision_is_served() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let server = http
        .connect_stateless(Some(&format!("Bearer {GOOD_TOKEN}")))
        .await;
    let templates = server.client.list_all_resource_templates().await.unwrap();
    assert!(!templates.is_empty());
    assert_eq!(
        server.read_json("forgejo://repo/acme/secret/label/7").await["id"],
        LABEL_ID
    );
    let page = server
        .call_ok("list_org_labels", json!({"org": "acme"}))
        .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    // That revision has no -32002: rmcp rewrites it, and `data.reason` keeps the meaning.
    let scopeless = http
        .connect_stateless(Some(&format!("token {NO_SCOPE_TOKEN}")))
        .await;
    let (code, data) = scopeless
        .read_error("forgejo://repo/acme/secret/label/7")
        .await;
    assert_eq!((code, data["reason"].clone()), (-32602, json!("forbidden")));
    let (code, data) = server
        .read_error("forgejo://repo/acme/widgets/label/999")
        .await;
    // Nor any other legacy code: a resource that is not there is -32602 too.
    assert_eq!((code, data["reason"].clone()), (-32602, json!("not_found")));
    server.stop().await;
    scopeless.stop().await;
}

#[tokio::test]
async fn the_error_codes_of_the_contract_over_http() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let server = http.connect(Some(&format!("token {NO_SCOPE_TOKEN}"))).await;
    let (code, data) = server
        .read_error("forgejo://repo/acme/widgets/label/abc")
        .await;
    assert_eq!(
        (code, data["reason"].clone()),
        (-32602, json!("invalid_params"))
    );
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());
    let (code, data) = server
        .read_error("forgejo://repo/acme/widgets/label/999")
        .await;
    assert_eq!(code, -32003);
    assert_eq!(
        data,
        json!({"uri": "forgejo://repo/acme/widgets/label/999", "reason": "not_found", "upstream_status": 404})
    );
    let (code, data) = server
        .read_error("forgejo://repo/acme/secret/label/7")
        .await;
    assert_eq!(
        (
            code,
            data["reason"].clone(),
            data["upstream_status"].clone()
        ),
        (-32002, json!("forbidden"), json!(403))
    );
    let unknown = server.call("no_such_tool", json!({})).await.unwrap_err();
    assert_eq!(unknown.code.0, -32602);
    let failed = server
        .call(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "secret"}),
        )
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true), "{failed:?}");
    server.stop().await;
}

#[tokio::test]
async fn concurrent_clients_each_send_their_own_token_upstream() {
    let forge = FakeForge::standard().await;
    // Slow answers, so the three clients' requests overlap in the server.
    for path in [
        "/repos/acme/widgets/labels".to_owned(),
        "/orgs/acme/labels".to_owned(),
        format!("/repos/acme/widgets/labels/{LABEL_ID}"),
    ] {
        forge.delay(&path, Duration::from_millis(100));
    }
    let http = Launch::new(&forge)
        .token(CONFIGURED_TOKEN)
        .start_http()
        .await;
    let alice = http.connect(Some(&format!("Bearer {GOOD_TOKEN}"))).await;
    let bob = http.connect(Some(&format!("token {NO_SCOPE_TOKEN}"))).await;
    let carol = http.connect(None).await;
    let label_uri = format!("forgejo://repo/acme/widgets/label/{LABEL_ID}");
    let alice_calls = futures::future::join_all((0..5).map(|_| {
        alice.call_ok(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets"}),
        )
    }));
    let bob_calls = futures::future::join_all(
        (0..5).map(|_| bob.call_ok("list_org_labels", json!({"org": "acme"}))),
    );
    let carol_reads = futures::future::join_all((0..5).map(|_| carol.read_json(&label_uri)));
    let (a, b, c) = tokio::join!(alice_calls, bob_calls, carol_reads);
    assert_eq!((a.len(), b.len(), c.len()), (5, 5, 5));

    let expected = |path: &str| match path {
        "/repos/acme/widgets/labels" => format!("token {GOOD_TOKEN}"),
        "/orgs/acme/labels" => format!("token {NO_SCOPE_TOKEN}"),
        _ => format!("token {CONFIGURED_TOKEN}"),
    };
    let requests = forge.requests();
    // Each client's five identical GETs overlap and may be sent as one; never across tokens.
    for path in [
        "/repos/acme/widgets/labels".to_owned(),
        "/orgs/acme/labels".to_owned(),
        format!("/repos/acme/widgets/labels/{LABEL_ID}"),
    ] {
        let sent = requests.iter().filter(|r| r.path == path).count();
        assert!((1..=5).contains(&sent), "{path}: {requests:?}");
    }
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(expected(&request.path).as_str()),
            "{}",
            request.path
        );
    }

    // Same resource, two tokens, two answers: nothing of one request reaches another.
    assert_eq!(
        alice.read_json("forgejo://repo/acme/secret/label/7").await["id"],
        LABEL_ID
    );
    let (code, _) = bob.read_error("forgejo://repo/acme/secret/label/7").await;
    assert_eq!(code, -32002);

    for server in [alice, bob, carol] {
        server.stop().await;
    }
    let log = http.finish().await;
    for secret in [GOOD_TOKEN, NO_SCOPE_TOKEN, CONFIGURED_TOKEN] {
        assert!(!log.contains(secret), "a token leaked into the log:\n{log}");
    }
    let call_line = log
        .lines()
        .find(|l| l.contains("mcp_method=tools/call") && l.contains("auth=client"))
        .unwrap_or_else(|| panic!("no log line for a tool call:\n{log}"));
    assert!(
        call_line.contains("method=POST")
            && call_line.contains("status=200")
            && call_line.contains("duration_ms="),
        "{call_line}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("mcp_method=resources/read") && l.contains("auth=configured")),
        "{log}"
    );
}

#[tokio::test]
async fn a_client_token_can_be_required() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .token(CONFIGURED_TOKEN)
        .arg("--require-client-token")
        .start_http()
        .await;
    let body = initialize_body("2025-06-18");
    let response = http.post(&body, &[]).await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"forgelens\""
    );
    let text = response.text().await.unwrap();
    assert!(text.contains("requires a token of your own"), "{text}");
    let malformed = http
        .post(&body, &[("authorization", "Basic dXNlcjpwYXNz")])
        .await;
    assert_eq!(malformed.status(), 401);
    assert!(
        malformed
            .text()
            .await
            .unwrap()
            .contains("`token <T>` or `Bearer <T>`")
    );
    assert!(
        http.try_connect(None, None).await.is_err(),
        "a client without a token cannot even initialize"
    );
    let server = http.connect(Some(&format!("BEARER {GOOD_TOKEN}"))).await;
    assert_eq!(
        server.read_json("forgejo://repo/acme/secret/label/7").await["id"],
        LABEL_ID
    );
    assert!(
        forge
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some(&format!("token {GOOD_TOKEN}"))),
        "{:?}",
        forge.requests()
    );
    server.stop().await;
}

#[tokio::test]
async fn a_malformed_authorization_is_refused_even_when_not_required() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .token(CONFIGURED_TOKEN)
        .start_http()
        .await;
    let response = http
        .post(
            &initialize_body("2025-06-18"),
            &[("authorization", "Bearer")],
        )
        .await;
    assert_eq!(response.status(), 401, "never a silent fallback");
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let body = initialize_body("2025-06-18");
    assert_eq!(http.post(&body, &[]).await.status(), 200);
    let rebinding = http.post(&body, &[("host", "evil.example")]).await;
    assert_eq!(rebinding.status(), 403);
    let text = rebinding.text().await.unwrap();
    assert!(text.contains("Host header is not allowed"), "{text}");
    let cross_site = http
        .post(&body, &[("origin", "https://evil.example")])
        .await;
    assert_eq!(cross_site.status(), 403);
    let text = cross_site.text().await.unwrap();
    assert!(text.contains("Origin header is not allowed"), "{text}");
    let local_page = http
        .post(&body, &[("origin", "http://localhost:6274")])
        .await;
    assert_eq!(local_page.status(), 200);

    // A reverse proxy's public name and a web client's origin are allowed by configuration.
    let proxied = Launch::new(&forge)
        .arg("--allowed-hosts")
        .arg("mcp.example.com")
        .arg("--allowed-origins")
        .arg("https://app.example.com")
        .start_http()
        .await;
    let ok = proxied
        .post(
            &body,
            &[
                ("host", "mcp.example.com"),
                ("origin", "https://app.example.com"),
            ],
        )
        .await;
    assert_eq!(ok.status(), 200);
    let other_port = proxied
        .post(&body, &[("origin", "https://app.example.com:8443")])
        .await;
    assert_eq!(other_port.status(), 403);
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .arg("--max-body-bytes")
        .arg("2048")
        .start_http()
        .await;
    assert_eq!(
        http.post(&initialize_body("2025-06-18"), &[])
            .await
            .status(),
        200
    );
    let big = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "x".repeat(4096), "version": "0"}}
    })
    .to_string();
    let response = http.post(&big, &[]).await;
    assert_eq!(response.status(), 413);
    let text = response.text().await.unwrap();
    assert!(
        text.contains("2048-byte limit") && text.contains("--max-body-bytes"),
        "{text}"
    );

    // Without Content-Length the limit holds all the same, while the body streams in.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..4).map(|_| Ok(vec![b' '; 1024])).collect();
    let streamed = reqwest::Client::new()
        .post(http.url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.status(), 413);
    let log = http.finish().await;
    assert!(log.contains("status=413"), "{log}");
}

#[tokio::test]
async fn the_concurrency_limit_answers_503_when_full() {
    let forge = FakeForge::standard().await;
    forge.delay("/orgs/acme/labels", Duration::from_millis(2000));
    let http = Launch::new(&forge)
        .arg("--max-concurrent-requests")
        .arg("1")
        .start_http()
        .await;
    let server = http.connect(None).await;
    let slow = server.call_ok("list_org_labels", json!({"org": "acme"}));
    let probe = async {
        eventually(Duration::from_secs(10), "the upstream request", || {
            forge
                .requests()
                .iter()
                .any(|r| r.path == "/orgs/acme/labels")
        })
        .await;
        http.post(&initialize_body("2025-06-18"), &[]).await
    };
    let (page, busy) = tokio::join!(slow, probe);
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    assert_eq!(busy.status(), 503);
    assert_eq!(busy.headers()["retry-after"], "1");
    let text = busy.text().await.unwrap();
    assert!(text.contains("--max-concurrent-requests"), "{text}");
    server.stop().await;
}

#[tokio::test]
async fn health_and_readiness() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let health = http.get("/healthz").await;
    assert_eq!(health.status(), 200);
    let ready = http.get("/readyz").await;
    assert_eq!(ready.status(), 200);
    assert!(forge.requests().iter().any(|r| r.path == "/version"));
    // A fresh answer is reused: the forge is not asked again at once.
    forge.clear_log();
    assert_eq!(http.get("/readyz").await.status(), 200);
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());

    // A forge nobody answers for: up, but not ready.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let orphan = Launch::new(&forge)
        .env("FORGEJO_URL", &format!("http://{closed}"))
        .start_http()
        .await;
    assert_eq!(orphan.get("/healthz").await.status(), 200);
    let not_ready = orphan.get("/readyz").await;
    assert_eq!(not_ready.status(), 503);
    let text = not_ready.text().await.unwrap();
    assert!(text.starts_with("not ready:"), "{text}");
}

#[tokio::test]
async fn sessions_are_offered_only_when_asked() {
    let forge = FakeForge::standard().await;
    let body = initialize_body("2025-06-18");
    let stateless = Launch::new(&forge).start_http().await;
    let response = stateless.post(&body, &[]).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("mcp-session-id").is_none());

    let sessions = Launch::new(&forge).arg("--sessions").start_http().await;
    let response = sessions.post(&body, &[]).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("mcp-session-id").is_some());
    let server = sessions
        .connect(Some(&format!("Bearer {GOOD_TOKEN}")))
        .await;
    assert_eq!(
        server.read_json("forgejo://repo/acme/secret/label/7").await["id"],
        LABEL_ID
    );
    // A session does not pin a token: each request still carries its own.
    let modern = sessions.connect_stateless(None).await;
    assert_eq!(
        modern
            .read_error("forgejo://repo/acme/secret/label/7")
            .await
            .0,
        -32602,
        "not found, said as the stateless revision says it"
    );
    server.stop().await;
    modern.stop().await;
}

#[tokio::test]
async fn sigterm_lets_the_request_in_flight_finish() {
    let forge = FakeForge::standard().await;
    forge.delay("/orgs/acme/labels", Duration::from_millis(1500));
    let http = Launch::new(&forge).start_http().await;
    let server = http.connect(None).await;
    let pid = http.pid().to_string();
    let call = server.call("list_org_labels", json!({"org": "acme"}));
    let terminate = async {
        eventually(Duration::from_secs(10), "the upstream request", || {
            forge
                .requests()
                .iter()
                .any(|r| r.path == "/orgs/acme/labels")
        })
        .await;
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill runs");
        assert!(status.success());
    };
    let (result, ()) = tokio::join!(call, terminate);
    let result = result.expect("the call in flight is answered");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let structured: Value = result.structured_content.unwrap();
    assert_eq!(structured["items"].as_array().unwrap().len(), 2);
    server.stop().await;
    let (code, log) = http.wait().await;
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("shutting down"), "{log}");
}

#[test]
fn binding_beyond_loopback_needs_an_opt_in() {
    let out = run(&["serve", "--http", "0.0.0.0:0"], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("not a loopback address") && out.stderr.contains("--allow-remote"),
        "{}",
        out.stderr
    );
    let out = run(&["serve", "--http", "localhost:8080"], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("not an IP address and port"),
        "{}",
        out.stderr
    );
}

#[test]
fn http_options_need_http() {
    let out = run(&["serve", "--require-client-token"], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("--require-client-token is an option of the HTTP server"),
        "{}",
        out.stderr
    );
    let out = run(
        &["serve", "--http", "127.0.0.1:0", "--max-body-bytes", "0"],
        &[],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("--max-body-bytes: `0`"),
        "{}",
        out.stderr
    );
}
