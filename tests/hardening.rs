//! Hostile clients, hostile forges and muddled settings, through the binary: backpressure on
//! stdio, settings that fail closed, and (in the sections below) connection limits, secrets
//! kept out of logs and errors, strict answer shapes and control characters in arguments.

use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::support::fake_forge::Reply;
use crate::support::fixtures::LABEL_ID;
use crate::support::raw::Raw;
use crate::support::wire::{HeldSlot, authority, exchange, open_fds, read_response, rss_kib};
use crate::support::{FakeForge, Launch, run, write_catalog};

/// A client that writes requests and does not read the answers: the server stops reading
/// once its requests in flight are full, its memory stays small, and when the client reads
/// again every request is answered once.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_does_not_read_stops_the_server_reading() {
    // The server stops reading after about 1 500 (its requests in flight, its read buffer and
    // the pipe): 2 000 is past that with room to spare.
    const SENT: usize = 2000;
    let forge = FakeForge::standard().await;
    let mut raw = Raw::start(&forge).await;
    let pid = raw.child.id().unwrap();
    let unread = raw.write_unread(SENT);
    // Finishing instead of stalling means the server read every request while none was
    // answered.
    let written = unread.stalled().await;
    assert!(
        written.is_some_and(|n| n < SENT),
        "the server read all {SENT} requests while nobody read its answers"
    );
    let rss = rss_kib(pid);
    assert!(rss < 150 * 1024, "the server holds {rss} KiB while blocked");
    // Reading again: every request answered, each once.
    let mut seen = std::collections::HashSet::new();
    while seen.len() < SENT {
        let answer = raw.answer_to_any().await;
        assert!(answer["result"]["resourceTemplates"].is_array(), "{answer}");
        let id = answer["id"].as_u64().unwrap();
        assert!(seen.insert(id), "request {id} answered twice");
    }
    let stdin = unread.writer.await.unwrap();
    raw.stdin = Some(stdin);
    assert_eq!(raw.exit_code().await, 0);
}

/// A second request under the id of one still in flight is refused; the first is answered.
#[tokio::test]
async fn a_repeated_request_id_in_flight_is_refused() {
    let forge = FakeForge::standard().await;
    let gate = forge.gate(&format!("/repos/acme/widgets/labels/{LABEL_ID}"));
    let mut raw = Raw::start(&forge).await;
    let read = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
            "params": {"uri": format!("forgejo://repo/acme/widgets/label/{LABEL_ID}")}})
        .to_string()
    };
    raw.send(&read(7)).await;
    forge
        .wait_for("the first read", |log| {
            log.iter()
                .any(|r| r.path.ends_with(&format!("/labels/{LABEL_ID}")))
        })
        .await;
    raw.send(&read(7)).await;
    let refused = raw.answer_to(&json!(7)).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already in use"),
        "{refused}"
    );
    gate.add_permits(1);
    let answered = raw.answer_to(&json!(7)).await;
    assert!(answered["result"]["contents"].is_array(), "{answered}");
    assert_eq!(raw.exit_code().await, 0);
}

/// Two read-only aliases that disagree: the one asking for read-only wins, so no write tool
/// is offered and none runs.
#[tokio::test]
async fn conflicting_read_only_aliases_fail_closed() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge)
        .env("FORGEJO_READ_ONLY", "false")
        .env("READ_ONLY", "true")
        .full()
        .start()
        .await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
    for tool in &tools {
        let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
        assert_eq!(read_only, Some(true), "{} is offered", tool.name);
    }
    let refused = server
        .call_ok_or_error(
            "create_issue",
            json!({"owner": "acme", "repo": "widgets", "title": "t"}),
        )
        .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        forge.requests().iter().all(|r| r.method == "GET"),
        "a write left the process"
    );
    server.stop().await;
}

/// An answer of the wrong shape is an error that says so, for tools and resources alike: no
/// resource of null fields, no `{"ok": true}` for a read, no silently empty list.
#[tokio::test]
async fn answers_of_the_wrong_shape_are_errors() {
    let forge = FakeForge::standard().await;
    let empty = Reply::Raw {
        status: 200,
        content_type: "application/json".into(),
        body: Vec::new(),
    };
    let server = Launch::new(&forge).full().start().await;
    let label = format!("/repos/acme/widgets/labels/{LABEL_ID}");
    let label_uri = format!("forgejo://repo/acme/widgets/label/{LABEL_ID}");
    for (reply, got) in [
        (Reply::NoContent, "nothing"),
        (empty.clone(), "nothing"),
        (Reply::Json(json!(null)), "nothing"),
        (Reply::Json(json!("a string")), "got string"),
        (Reply::Json(json!([{"id": 1}])), "got array"),
    ] {
        forge.route("GET", &label, reply.clone());
        forge.route("GET", "/repos/acme/widgets", reply);
        let error = server.read(&label_uri).await.unwrap_err();
        assert!(
            error.message.contains("expected an object") && error.message.contains(got),
            "{}",
            error.message
        );
        for (tool, args) in [
            (
                "get_repo_label",
                json!({"owner": "acme", "repo": "widgets", "id": LABEL_ID}),
            ),
            ("get_repo", json!({"owner": "acme", "repo": "widgets"})),
        ] {
            let result = server.call_ok_or_error(tool, args).await;
            let text = format!("{:?}", result.content);
            assert_eq!(result.is_error, Some(true), "{tool}: {text}");
            assert!(text.contains("expected an object"), "{tool}: {text}");
        }
    }
    // An object where a list belongs.
    forge.route(
        "GET",
        "/repos/acme/widgets/labels",
        Reply::Json(json!({"message": "not a list"})),
    );
    let error = server
        .read("forgejo://repo/acme/widgets/labels")
        .await
        .unwrap_err();
    assert!(
        error.message.contains("expected a list, got object"),
        "{}",
        error.message
    );
    let listed = server
        .call_ok_or_error(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets"}),
        )
        .await;
    assert_eq!(listed.is_error, Some(true));
    // A write that answers with no body is still a success.
    forge.route(
        "DELETE",
        &format!("/repos/acme/widgets/labels/{LABEL_ID}"),
        Reply::NoContent,
    );
    let deleted = server
        .call_ok(
            "delete_repo_label",
            json!({"owner": "acme", "repo": "widgets", "id": LABEL_ID}),
        )
        .await;
    assert_eq!(deleted["ok"], true, "{deleted}");
    server.stop().await;
}

/// Control characters in a path argument are refused before any request, for curated tools
/// (whose schema pattern admits NUL) and generated ones (a bare string) alike.
#[tokio::test]
async fn control_characters_never_reach_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write_catalog(dir.path(), include_str!("fixtures/mini.swagger.json"));
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge)
        .full()
        .arg("--catalog")
        .arg(&catalog.display().to_string())
        .start()
        .await;
    for bad in ["\u{0}", "v1\n", "a\r\nb", "\u{7f}", "x\u{85}"] {
        let calls = [
            (
                "get_release_by_tag",
                json!({"owner": "acme", "repo": "widgets", "tag": bad}),
            ),
            (
                "forgejo_repo_get_archive",
                json!({"owner": "acme", "repo": "widgets", "archive": bad}),
            ),
        ];
        for (tool, args) in calls {
            let result = server.call_ok_or_error(tool, args).await;
            let text = format!("{:?}", result.content);
            assert_eq!(result.is_error, Some(true), "{tool} {bad:?}: {text}");
            // The schema's own pattern may catch it first; either way it is named and refused.
            assert!(
                text.contains("control character") || text.contains("must match"),
                "{tool} {bad:?}: {text}"
            );
        }
    }
    assert!(
        forge.requests().is_empty(),
        "a request was sent: {:?}",
        forge.requests()
    );
    server.stop().await;
}

/// Secret argument values (an Actions secret, a webhook's secret and authorization header, a
/// file's content) reach the forge and no log line, at any level.
#[tokio::test]
async fn secret_arguments_reach_no_log_line_at_any_level() {
    const SECRET: &str = "actions-secret-value-4242";
    const HOOK_SECRET: &str = "hook-signing-secret-4343";
    const HOOK_HEADER: &str = "Bearer hook-header-4444";
    const CONTENT: &str = "ZmlsZS1jb250ZW50LTQ1NDU="; // "file-content-4545"
    for level in ["trace", "debug", "info", "rmcp=trace,forgelens=trace"] {
        let forge = FakeForge::standard().await;
        let server = Launch::new(&forge)
            .token("tok-secret-test")
            .env("RUST_LOG", level)
            .full()
            .spawn()
            .await;
        server
            .call_ok_or_error(
                "set_repo_action_secret",
                json!({"owner": "acme", "repo": "widgets", "secret_name": "DEPLOY", "data": SECRET}),
            )
            .await;
        server
            .call_ok_or_error(
                "create_repo_hook",
                json!({"owner": "acme", "repo": "widgets", "type": "forgejo",
                    "config": {"url": "https://hooks.example/x", "content_type": "json", "secret": HOOK_SECRET},
                    "authorization_header": HOOK_HEADER}),
            )
            .await;
        server
            .call_ok_or_error(
                "create_file",
                json!({"owner": "acme", "repo": "widgets", "path": "a.txt", "content": CONTENT}),
            )
            .await;
        let sent = forge.requests();
        assert!(
            sent.iter()
                .any(|r| String::from_utf8_lossy(&r.raw_body).contains(SECRET)),
            "the secret reached the forge"
        );
        let log = server.finish().await;
        if level != "info" {
            assert!(
                log.contains("DEBUG"),
                "{level}: the log ran at debug or below"
            );
        }
        for value in [SECRET, HOOK_SECRET, HOOK_HEADER, CONTENT] {
            assert!(!log.contains(value), "{level}: {value} was logged:\n{log}");
        }
    }
}

/// A forge (or a proxy) that echoes the `Authorization` header puts the token in its body; the
/// token is scrubbed from the error the agent gets, the log and a successful result, for the
/// configured token and for an HTTP client's own.
#[tokio::test]
async fn a_token_echoed_by_the_forge_is_scrubbed() {
    const TOKEN: &str = "echoed-token-0123456789";
    const CLIENT_TOKEN: &str = "client-token-9876543210";
    let forge = FakeForge::standard().await;
    let echo = |token: &str| {
        Reply::Status(
            400,
            json!({"message": format!("bad request; you sent Authorization: token {token}")}),
        )
    };
    forge.route("GET", "/repos/acme/widgets/labels/1", echo(TOKEN));
    forge.route("GET", "/repos/acme/widgets/labels/2", echo(CLIENT_TOKEN));
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/3",
        Reply::Json(json!({"id": 3, "name": format!("token {TOKEN}"), "color": "ffffff"})),
    );
    let server = Launch::new(&forge)
        .token(TOKEN)
        .env("RUST_LOG", "info")
        .full()
        .spawn()
        .await;
    let error = server
        .read("forgejo://repo/acme/widgets/label/1")
        .await
        .unwrap_err();
    let called = server
        .call_ok_or_error(
            "get_repo_label",
            json!({"owner": "acme", "repo": "widgets", "id": 1}),
        )
        .await;
    let result = server
        .read("forgejo://repo/acme/widgets/label/3")
        .await
        .unwrap();
    let seen = format!("{error:?} {called:?} {result:?} {}", server.finish().await);
    assert!(seen.contains("Authorization: token ***"), "{seen}");
    assert!(!seen.contains(TOKEN), "the token leaked: {seen}");

    let http = Launch::new(&forge)
        .env("RUST_LOG", "info")
        .start_http()
        .await;
    let client = http.connect(Some(&format!("Bearer {CLIENT_TOKEN}"))).await;
    let error = client
        .read("forgejo://repo/acme/widgets/label/2")
        .await
        .unwrap_err();
    client.stop().await;
    let seen = format!("{error:?} {}", http.finish().await);
    assert!(seen.contains("Authorization: token ***"), "{seen}");
    assert!(
        !seen.contains(CLIENT_TOKEN),
        "the client's token leaked: {seen}"
    );
}

/// A newline in the forge's message cannot start a log line of its own, and does not reach the
/// agent raw either.
#[tokio::test]
async fn forge_text_cannot_forge_a_log_line() {
    let forge = FakeForge::standard().await;
    let forged = "nope\n2026-12-01T00:00:00Z  INFO forgelens: all is well";
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/1",
        Reply::Status(422, json!({"message": forged})),
    );
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/2",
        Reply::Raw {
            status: 500,
            content_type: "text/plain".into(),
            body: b"\x1b[2Jcleared\x07".to_vec(),
        },
    );
    let server = Launch::new(&forge).env("RUST_LOG", "info").spawn().await;
    let error = server
        .read("forgejo://repo/acme/widgets/label/1")
        .await
        .unwrap_err();
    assert!(error.message.contains("nope\\n2026"), "{}", error.message);
    let called = server
        .call_ok_or_error(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets", "page": 1}),
        )
        .await;
    let _ = called;
    let error = server
        .read("forgejo://repo/acme/widgets/label/2")
        .await
        .unwrap_err();
    assert!(
        error.message.contains("\\u{1b}[2Jcleared"),
        "{}",
        error.message
    );
    let log = server.finish().await;
    assert!(
        log.contains("nope\\n2026"),
        "the forge's message is logged escaped:\n{log}"
    );
    assert!(
        !log.lines()
            .any(|l| l.contains("all is well") && !l.contains("nope")),
        "a forged line:\n{log}"
    );
    assert!(!log.contains('\u{1b}'), "an escape reached the log:\n{log}");
}

/// Smaller faults: a `Retry-After` date is waited for, a binary error body is described and
/// not quoted, a broken connection reports no made-up status.
#[tokio::test]
async fn retry_dates_binary_bodies_and_broken_connections() {
    let forge = FakeForge::standard().await;
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/2",
        Reply::Raw {
            status: 500,
            content_type: "application/octet-stream".into(),
            body: vec![0x89, b'P', b'N', b'G', 0, 0, 0xff, 0xfe, 0x00, 0x01],
        },
    );
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/3",
        Reply::Reset {
            head: b"[{\"id\": 1,".to_vec(),
        },
    );
    let server = Launch::new(&forge).full().start().await;
    // Routed once the server runs, so that its start-up does not eat into the wait.
    let soon = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/1",
        Reply::Sequence(vec![
            Reply::Headers {
                status: 429,
                headers: vec![("Retry-After".into(), soon)],
                body: json!({"message": "slow down"}),
            },
            Reply::Json(json!({"id": 1, "name": "bug", "color": "ff0000"})),
        ]),
    );
    let started = std::time::Instant::now();
    let label = server
        .read_json("forgejo://repo/acme/widgets/label/1")
        .await;
    assert_eq!(label["name"], "bug");
    // The date's whole seconds: at least one second of waiting, where a misread date waits none.
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    let hits = forge
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/labels/1"))
        .count();
    assert_eq!(hits, 2, "one wait, one retry");
    let binary = server
        .read("forgejo://repo/acme/widgets/label/2")
        .await
        .unwrap_err();
    assert!(
        binary.message.contains("10 bytes that are not text"),
        "{}",
        binary.message
    );
    assert!(!binary.message.contains('\u{fffd}'), "{}", binary.message);
    let broken = server
        .call_ok_or_error(
            "get_repo_label",
            json!({"owner": "acme", "repo": "widgets", "id": 3}),
        )
        .await;
    assert_eq!(broken.is_error, Some(true));
    let text = format!("{broken:?}");
    assert!(text.contains("broke during"), "{text}");
    assert!(!text.contains("upstream_status"), "{text}");
    server.stop().await;
}

/// A token file is checked at start-up: two lines stop the server with a message that does not
/// show them; a file others can read is warned about, and still used.
#[cfg(unix)]
#[tokio::test]
async fn token_files_are_checked_at_start_up() {
    use std::os::unix::fs::PermissionsExt;
    let forge = FakeForge::standard().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token");
    let file = path.display().to_string();
    let url = forge.url();
    let uri = format!("forgejo://repo/acme/widgets/label/{LABEL_ID}");
    let read = move |file: String, url: String, uri: String| {
        tokio::task::spawn_blocking(move || {
            run(
                &["read", &uri, "--token-file", &file],
                &[("FORGEJO_URL", &url)],
            )
        })
    };
    std::fs::write(&path, "first-line-token\nsecond-line\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let two = read(file.clone(), url.clone(), uri.clone()).await.unwrap();
    assert_eq!(two.code, 2, "{}", two.stderr);
    assert!(two.stderr.contains("holds 2 lines"), "{}", two.stderr);
    assert!(!two.stderr.contains("first-line-token"), "{}", two.stderr);
    assert!(forge.requests().is_empty(), "nothing was sent");

    std::fs::write(&path, "one-line-token\n").unwrap();
    let private = read(file.clone(), url.clone(), uri.clone()).await.unwrap();
    assert_eq!(private.code, 0, "{}", private.stderr);
    assert!(!private.stderr.contains("chmod"), "{}", private.stderr);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let open = read(file, url, uri).await.unwrap();
    assert_eq!(open.code, 0, "{}", open.stderr);
    assert!(
        open.stderr.contains("can be read by other users") && open.stderr.contains("chmod 600"),
        "{}",
        open.stderr
    );
}

/// Two `Host` or `Origin` headers, or an absolute-form target naming another host, cannot slip
/// past the checks against DNS rebinding; a body that is not JSON is a JSON-RPC parse error.
#[tokio::test]
async fn ambiguous_targets_and_bodies_are_refused() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let address = authority(&http);
    let body = crate::support::initialize_body("2025-06-18");
    let head = |line: &str, extra: &str| {
        format!(
            "{line}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream{extra}"
        )
    };
    let plain = exchange(
        &address,
        &head("POST /mcp HTTP/1.1", &format!("\r\nHost: {address}")),
        &body,
    )
    .await
    .unwrap();
    assert!(plain.starts_with("HTTP/1.1 200"), "{plain}");
    for (line, extra) in [
        (
            "POST /mcp HTTP/1.1".to_owned(),
            format!("\r\nHost: {address}\r\nHost: evil.example"),
        ),
        (
            "POST /mcp HTTP/1.1".to_owned(),
            format!(
                "\r\nHost: {address}\r\nOrigin: http://localhost:6274\r\nOrigin: https://evil.example"
            ),
        ),
        (
            "POST http://evil.example/mcp HTTP/1.1".to_owned(),
            format!("\r\nHost: {address}"),
        ),
    ] {
        let answer = exchange(&address, &head(&line, &extra), &body)
            .await
            .unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 400"),
            "{line} {extra}: {answer}"
        );
    }
    let garbled = exchange(
        &address,
        &head("POST /mcp HTTP/1.1", &format!("\r\nHost: {address}")),
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ",
    )
    .await
    .unwrap();
    assert!(garbled.starts_with("HTTP/1.1 400"), "{garbled}");
    assert!(garbled.contains("-32700"), "{garbled}");
}

/// Over `--max-concurrent-requests`, the 503 comes after the body was read, so the client's
/// next request on the same connection is answered instead of meeting a reset.
#[tokio::test]
async fn a_503_keeps_the_connection_usable() {
    let forge = FakeForge::standard().await;
    let slot = HeldSlot::start(&forge, Launch::new(&forge)).await;
    let address = authority(&slot.http);
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let padding = " ".repeat(256 * 1024);
    let body = format!("{}{padding}", crate::support::initialize_body("2025-06-18"));
    for round in 0..3 {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let answer = read_response(&mut stream)
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            !answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
    }
    stream
        .write_all(format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let health = read_response(&mut stream).await.unwrap();
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    slot.release().await;
}

/// Slow senders and idle connections are closed after the header timeout, at most
/// `--max-connections` are held at once, and a normal request gets through all the same.
#[tokio::test(flavor = "multi_thread")]
async fn slow_and_idle_connections_are_closed_and_capped() {
    const CAP: usize = 40;
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .arg("--header-timeout")
        .arg("1")
        .arg("--max-connections")
        .arg(&CAP.to_string())
        .start_http()
        .await;
    let address = authority(&http);
    let before = open_fds(http.pid());
    let mut sockets = Vec::new();
    for i in 0..150 {
        let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
        if i % 2 == 0 {
            // Slowloris: headers begun, never finished.
            socket
                .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\n").as_bytes())
                .await
                .unwrap();
        }
        sockets.push(socket);
    }
    let held = open_fds(http.pid()) - before;
    assert!(
        held <= CAP,
        "{held} descriptors for 150 connections at a cap of {CAP}"
    );
    // A normal request waits at most for a round of timeouts, not for the attacker to leave.
    let health = tokio::time::timeout(Duration::from_secs(30), http.get("/healthz"))
        .await
        .expect("a normal request is answered while the attack goes on");
    assert_eq!(health.status(), 200);
    // Every attacking connection is closed by the server.
    for (i, socket) in sockets.iter_mut().enumerate() {
        use tokio::io::AsyncReadExt;
        let mut byte = [0u8; 64];
        let closed = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                match socket.read(&mut byte).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(closed.is_ok(), "connection {i} is still held");
    }
}
