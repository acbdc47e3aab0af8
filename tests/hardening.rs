//! Hostile clients, hostile forges and muddled settings, through the binary: backpressure on
//! stdio, settings that fail closed, and (in the sections below) connection limits, secrets
//! kept out of logs and errors, strict answer shapes and control characters in arguments.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::support::fake_forge::Reply;
use crate::support::fixtures::LABEL_ID;
use crate::support::raw::Raw;
use crate::support::{FakeForge, Launch};

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A client that writes requests and does not read the answers: the server stops reading
/// once its requests in flight are full, its memory stays small, and when the client reads
/// again every request is answered once.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_does_not_read_stops_the_server_reading() {
    const SENT: usize = 3000;
    let forge = FakeForge::standard().await;
    let mut raw = Raw::start(&forge).await;
    let pid = raw.child.id().unwrap();
    let mut stdin = raw.stdin.take().unwrap();
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let written = written.clone();
        tokio::spawn(async move {
            for id in 1..=SENT {
                let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
                stdin
                    .write_all(format!("{line}\n").as_bytes())
                    .await
                    .unwrap();
                written.fetch_add(1, Ordering::SeqCst);
            }
            stdin
        })
    };
    // Poll until the writer has made no progress for half a second: the server has stopped
    // reading. Finishing instead means it read every request while none was answered.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let (mut last, mut still) = (usize::MAX, 0);
    while still < 25 {
        assert!(
            !writer.is_finished(),
            "the server read all {SENT} requests while nobody read its answers"
        );
        assert!(
            tokio::time::Instant::now() < deadline,
            "the writer never settled"
        );
        let now = written.load(Ordering::SeqCst);
        (last, still) = if now == last {
            (now, still + 1)
        } else {
            (now, 0)
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(last < SENT, "{last} of {SENT} written");
    let rss = rss_kib(pid);
    assert!(rss < 150 * 1024, "the server holds {rss} KiB while blocked");
    // Reading again: every request answered, each once.
    let mut seen = std::collections::HashSet::new();
    while seen.len() < SENT {
        let answer = raw.answer_to_any().await;
        assert!(answer["result"]["tools"].is_array(), "{answer}");
        let id = answer["id"].as_u64().unwrap();
        assert!(seen.insert(id), "request {id} answered twice");
    }
    let stdin = writer.await.unwrap();
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
    let (_, yaml) = forgelens::catalog::generate_text(
        include_str!("fixtures/mini.swagger.json"),
        Default::default(),
    )
    .unwrap();
    let catalog = dir.path().join("catalog.yaml");
    std::fs::write(&catalog, yaml).unwrap();
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
