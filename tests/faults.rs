//! Every fault of the forge, survived: a clear, mapped error, and the next request answered
//! normally.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fake_forge::{GOOD_TOKEN, Reply};
use crate::support::fixtures::LABEL_ID;
use crate::support::{FakeForge, Launch, Server};

const LABEL: &str = "/repos/acme/widgets/labels/9";
const URI: &str = "forgejo://repo/acme/widgets/label/9";

/// After a fault, the server still answers a good read.
async fn still_answers(server: &Server) {
    let label = server
        .read_json(&format!("forgejo://repo/acme/widgets/label/{LABEL_ID}"))
        .await;
    assert_eq!(
        label["id"], LABEL_ID,
        "the server answers normally after the fault"
    );
}

fn label() -> Value {
    crate::support::fixtures::load("label.json")
}

/// The text of an `isError` tool result.
async fn tool_error(server: &Server, tool: &str, args: Value) -> String {
    let result = server
        .call(tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e:?}"));
    assert_eq!(result.is_error, Some(true), "{tool}: {result:?}");
    format!("{:?}", result.content)
}

#[tokio::test]
async fn error_statuses_are_mapped_with_the_forges_message_and_a_hint() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).token(GOOD_TOKEN).start().await;
    let cases = [
        (
            401,
            json!({"message": "token is required"}),
            -32002,
            "forbidden",
            "token is required",
            "FORGEJO_TOKEN",
        ),
        (
            403,
            json!({"message": "token does not have at least one of required scope(s): [read:issue]"}),
            -32002,
            "forbidden",
            "[read:issue]",
            "scope",
        ),
        (
            404,
            json!({"message": "The target couldn't be found."}),
            -32003,
            "not_found",
            "couldn't be found",
            "private",
        ),
        (
            409,
            json!({"message": "a label with this name already exists"}),
            -32603,
            "upstream_error",
            "already exists",
            "retrying",
        ),
        (
            422,
            json!({"message": "", "errors": ["name: must not be empty", "color: invalid"]}),
            -32603,
            "upstream_error",
            "name: must not be empty; color: invalid",
            "retrying",
        ),
    ];
    for (status, body, code, reason, message, hint) in cases {
        forge.route("GET", LABEL, Reply::Status(status, body.clone()));
        let err = server.read(URI).await.unwrap_err();
        assert_eq!(err.code.0, code, "{status}");
        let data = err.data.clone().unwrap();
        assert_eq!(
            (data["reason"].as_str(), data["upstream_status"].as_u64()),
            (Some(reason), Some(status as u64))
        );
        assert!(
            err.message.contains(message) && err.message.contains(hint),
            "{status}: {}",
            err.message
        );
        forge.route(
            "GET",
            "/repos/acme/widgets/labels",
            Reply::Status(status, body),
        );
        let text = tool_error(
            &server,
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets"}),
        )
        .await;
        assert!(
            text.contains(&format!("{reason} (forge status {status})")) && text.contains(message),
            "{text}"
        );
        still_answers(&server).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn rate_limits_are_waited_out_within_the_budget_and_reported_past_it() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let limited = |seconds: &str| Reply::Headers {
        status: 429,
        headers: vec![("retry-after".into(), seconds.into())],
        body: json!({"message": "rate limit exceeded"}),
    };
    forge.route(
        "GET",
        LABEL,
        Reply::Sequence(vec![limited("1"), Reply::Json(label())]),
    );
    assert_eq!(server.read_json(URI).await["id"], LABEL_ID);
    assert_eq!(
        forge.requests().iter().filter(|r| r.path == LABEL).count(),
        2,
        "retried once after Retry-After"
    );

    forge.clear_log();
    forge.route("GET", LABEL, limited("3600"));
    let err = server.read(URI).await.unwrap_err();
    assert_eq!(err.code.0, -32603);
    assert_eq!(err.data.unwrap()["reason"], "rate_limited");
    assert!(
        err.message.contains("Retry after 3600 seconds"),
        "{}",
        err.message
    );
    assert_eq!(
        forge.requests().len(),
        1,
        "a wait past the budget is not attempted"
    );
    still_answers(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn server_errors_are_retried_for_reads_and_never_for_writes() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).token(GOOD_TOKEN).start().await;
    let failing = |status: u16| Reply::Status(status, json!({"message": "upstream trouble"}));
    forge.route(
        "GET",
        LABEL,
        Reply::Sequence(vec![failing(503), failing(502), Reply::Json(label())]),
    );
    assert_eq!(server.read_json(URI).await["id"], LABEL_ID);
    assert_eq!(
        forge.requests().iter().filter(|r| r.path == LABEL).count(),
        3
    );

    forge.clear_log();
    forge.route("GET", LABEL, failing(500));
    let err = server.read(URI).await.unwrap_err();
    assert_eq!(
        (err.code.0, err.data.unwrap()["reason"].clone()),
        (-32603, json!("upstream_error"))
    );
    assert_eq!(forge.requests().len(), 3, "a bounded number of retries");

    forge.clear_log();
    forge.route("POST", "/repos/acme/widgets/labels", failing(503));
    let text = tool_error(
        &server,
        "create_repo_label",
        json!({"owner": "acme", "repo": "widgets", "name": "x", "color": "00ff00"}),
    )
    .await;
    assert!(text.contains("503"), "{text}");
    let posts = forge
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 1, "a write is never retried");
    still_answers(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn an_unreachable_forge_is_named_and_the_token_is_not() {
    for url in ["http://127.0.0.1:9", "http://forge.invalid"] {
        let forge = FakeForge::start().await;
        let server = Launch::new(&forge)
            .env("FORGEJO_URL", url)
            .token(GOOD_TOKEN)
            .arg("--timeout")
            .arg("5")
            .start()
            .await;
        let err = server.read(URI).await.unwrap_err();
        assert_eq!(err.code.0, -32603, "{url}");
        let host = url.trim_start_matches("http://");
        assert!(err.message.contains(host), "{url}: {}", err.message);
        assert!(!err.message.contains(GOOD_TOKEN));
        let text = tool_error(
            &server,
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets"}),
        )
        .await;
        assert!(text.contains(host) && !text.contains(GOOD_TOKEN), "{text}");
        server.stop().await;
    }
}

#[tokio::test]
async fn stalls_and_resets_end_within_the_timeout() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).arg("--timeout").arg("1").start().await;
    // Headers that never arrive.
    let _held = forge.gate(LABEL);
    forge.route("GET", LABEL, Reply::Json(label()));
    let err = server.read(URI).await.unwrap_err();
    assert!(err.message.contains("within 1s"), "{}", err.message);
    still_answers(&server).await;
    // A body that stops halfway.
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/10",
        Reply::Stall {
            head: b"{\"id\": 10, \"na".to_vec(),
            declared: 400,
        },
    );
    let err = server
        .read("forgejo://repo/acme/widgets/label/10")
        .await
        .unwrap_err();
    assert_eq!(err.code.0, -32603);
    assert_eq!(err.data.unwrap()["reason"], "upstream_error");
    still_answers(&server).await;
    // A connection reset mid-body.
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/11",
        Reply::Reset {
            head: b"{\"id\": 11, \"na".to_vec(),
        },
    );
    let err = server
        .read("forgejo://repo/acme/widgets/label/11")
        .await
        .unwrap_err();
    assert_eq!(err.code.0, -32603);
    still_answers(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn answers_that_are_not_json_are_unexpected_responses() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let cases = [
        (
            "text/html",
            b"<html><body><h1>502 Bad Gateway</h1></body></html>".to_vec(),
            "502 Bad Gateway",
        ),
        (
            "application/json",
            b"{\"id\": 9, \"name\": \"trunc".to_vec(),
            "{\"id\": 9",
        ),
        ("text/plain", b"all good".to_vec(), "all good"),
    ];
    for (content_type, body, excerpt) in cases {
        forge.route(
            "GET",
            LABEL,
            Reply::Raw {
                status: 200,
                content_type: content_type.into(),
                body,
            },
        );
        let err = server.read(URI).await.unwrap_err();
        assert_eq!(err.code.0, -32603, "{content_type}");
        assert!(
            err.message.contains("unexpected response")
                && err.message.contains("status 200")
                && err.message.contains(excerpt),
            "{content_type}: {}",
            err.message
        );
        still_answers(&server).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_without_reading_it_all() {
    const HUGE: usize = 64 * 1024 * 1024;
    for declare_length in [true, false] {
        let forge = FakeForge::standard().await;
        let server = Launch::new(&forge).start().await;
        forge.route(
            "GET",
            LABEL,
            Reply::Huge {
                bytes: HUGE,
                declare_length,
            },
        );
        let err = server.read(URI).await.unwrap_err();
        assert!(err.message.contains("larger than the"), "{}", err.message);
        assert!(
            forge.bytes_sent() < HUGE / 2,
            "stopped early: {} of {HUGE} bytes sent",
            forge.bytes_sent()
        );
        still_answers(&server).await;
        server.stop().await;
    }
}

/// A redirect is followed only within the forge's API: there the token goes along, since it
/// is the same API; to another host, or to a page of the forge outside its API, it is not
/// followed at all, so neither the token nor a request of this server reaches it. A write never
/// follows one.
#[tokio::test]
async fn redirects_stay_inside_the_forges_api_and_writes_in_place() {
    let forge = FakeForge::standard().await;
    let elsewhere = FakeForge::start().await;
    elsewhere.route(
        "GET",
        "/moved/label",
        Reply::List {
            items: vec![label()],
            link: false,
        },
    );
    forge.route(
        "GET",
        "/moved/labels",
        Reply::List {
            items: vec![label()],
            link: false,
        },
    );
    let server = Launch::new(&forge).token(GOOD_TOKEN).start().await;
    forge.route(
        "GET",
        "/repos/acme/widgets/labels",
        Reply::Redirect(format!("{}/api/v1/moved/labels", forge.url())),
    );
    let result = server
        .call(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets", "sudo": "bob"}),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let followed = forge
        .requests()
        .into_iter()
        .find(|r| r.path == "/moved/labels")
        .expect("the redirect inside the API was followed");
    assert!(followed.header("authorization").is_some());
    assert_eq!(followed.header("sudo"), Some("bob"));

    let target = format!("{}/api/v1/moved/label", elsewhere.url());
    for location in [
        target.clone(),
        format!("{}/acme/widgets/labels", forge.url()),
    ] {
        forge.route(
            "GET",
            "/repos/acme/widgets/labels",
            Reply::Redirect(location.clone()),
        );
        let text = tool_error(
            &server,
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets"}),
        )
        .await;
        assert!(
            text.contains("followed only within the forge's API"),
            "{location}: {text}"
        );
    }
    assert!(
        elsewhere.requests().is_empty(),
        "nothing reached another host"
    );

    forge.route(
        "POST",
        "/repos/acme/widgets/labels",
        Reply::Redirect(target),
    );
    let text = tool_error(
        &server,
        "create_repo_label",
        json!({"owner": "acme", "repo": "widgets", "name": "x", "color": "00ff00"}),
    )
    .await;
    assert!(
        text.contains("only GET requests follow redirects"),
        "{text}"
    );
    assert!(elsewhere.requests().is_empty(), "the write was not sent on");
    still_answers(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn sixty_four_reads_are_in_flight_at_once() {
    let forge = FakeForge::standard().await;
    let gates: Vec<_> = (1..=64)
        .map(|i| {
            let path = format!("/repos/acme/widgets/labels/{i}");
            let mut l = label();
            l["id"] = json!(i);
            forge.route("GET", &path, Reply::Json(l));
            forge.gate(&path)
        })
        .collect();
    let server = std::sync::Arc::new(Launch::new(&forge).start().await);
    let reads: Vec<_> = (1..=64)
        .map(|i| {
            let server = server.clone();
            tokio::spawn(async move {
                server
                    .read_json(&format!("forgejo://repo/acme/widgets/label/{i}"))
                    .await
            })
        })
        .collect();
    // All 64 reach the forge while none has been answered: they run concurrently.
    forge
        .wait_for("64 reads in flight", |log| log.len() == 64)
        .await;
    for gate in &gates {
        gate.add_permits(1);
    }
    for (i, read) in reads.into_iter().enumerate() {
        assert_eq!(
            read.await.unwrap()["id"],
            i as u64 + 1,
            "every id answered once, correctly"
        );
    }
}

#[tokio::test]
async fn reads_beyond_the_upstream_cap_wait_and_are_not_dropped() {
    let forge = FakeForge::standard().await;
    let gates: Vec<_> = (1..=4)
        .map(|i| {
            let path = format!("/repos/acme/widgets/labels/{i}");
            let mut l = label();
            l["id"] = json!(i);
            forge.route("GET", &path, Reply::Json(l));
            forge.gate(&path)
        })
        .collect();
    let server = std::sync::Arc::new(
        Launch::new(&forge)
            .arg("--max-upstream-requests")
            .arg("4")
            .start()
            .await,
    );
    let held: Vec<_> = (1..=4)
        .map(|i| {
            let server = server.clone();
            tokio::spawn(async move {
                server
                    .read_json(&format!("forgejo://repo/acme/widgets/label/{i}"))
                    .await
            })
        })
        .collect();
    forge
        .wait_for("four held reads", |log| log.len() == 4)
        .await;
    // A fifth read needs a permit the four hold: it waits (it is not refused)...
    let fifth = tokio::spawn({
        let server = server.clone();
        async move {
            server
                .read_json(&format!("forgejo://repo/acme/widgets/label/{LABEL_ID}"))
                .await
        }
    });
    assert!(
        tokio::time::timeout(Duration::from_millis(300), async {
            while !fifth.is_finished() {
                tokio::task::yield_now().await
            }
        })
        .await
        .is_err(),
        "the fifth read waits while four requests hold the forge"
    );
    assert_eq!(
        forge.requests().len(),
        4,
        "nothing beyond the cap reached the forge"
    );
    // ...and goes through as soon as one finishes.
    gates[0].add_permits(1);
    assert_eq!(fifth.await.unwrap()["id"], LABEL_ID);
    for gate in &gates[1..] {
        gate.add_permits(1);
    }
    for (i, read) in held.into_iter().enumerate() {
        assert_eq!(read.await.unwrap()["id"], i as u64 + 1);
    }
}

/// A read assembled without the answers it planned is an error the caller can report, not a
/// panic that takes the server down.
#[test]
fn a_read_assembled_without_its_answers_is_an_error() {
    let catalog = forgelens::service::compile(&forgelens::manifest::Sources::builtin())
        .expect("the built-in manifests compile");
    let read = catalog
        .route("forgejo://repo/acme/widgets/issue/12")
        .unwrap();
    let error = read
        .assemble(Vec::new(), &crate::support::serving())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the read is missing the answer to its primary request"
    );
}
