//! Sparing the forge repeated work: the read cache (immutable answers, provisional ones, the
//! opt-in for mutable ones, token scoping) and the coalescing of identical GETs in flight.

use std::time::Duration;

use forgelens::forge::{Client, ClientOptions, Request, Token};
use serde_json::json;

use crate::support::fake_forge::Reply;
use crate::support::fake_forge::{GOOD_TOKEN, NO_SCOPE_TOKEN};
use crate::support::fixtures::{LABEL_ID, SHA, SHA_UNKNOWN};
use crate::support::{FakeForge, Launch};

const DAY_MS: u64 = 86_400_000;

fn hits(forge: &FakeForge, path: &str) -> usize {
    forge.requests().iter().filter(|r| r.path == path).count()
}

#[tokio::test]
async fn a_second_read_of_the_same_commit_makes_no_upstream_request() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let uri = format!("forgejo://repo/acme/widgets/commit/{SHA}");
    let first = server.read(&uri).await.unwrap();
    assert_eq!(first.ttl_ms, Some(DAY_MS));
    assert_eq!(forge.requests().len(), 1);
    let second = server.read(&uri).await.unwrap();
    assert_eq!(forge.requests().len(), 1, "the second read was served here");
    assert_eq!(first.contents, second.contents);
    let left = second
        .ttl_ms
        .expect("a kept immutable answer still says how long it lasts");
    assert!(left > 0 && left <= DAY_MS, "{left}");
    server.stop().await;
}

#[tokio::test]
async fn a_final_status_is_kept_a_day_and_an_unfinished_one_ten_seconds() {
    let forge = FakeForge::standard().await;
    let pending = "1111111111111111111111111111111111111111";
    let status_path = format!("/repos/acme/widgets/commits/{pending}/status");
    forge.route(
        "GET",
        &status_path,
        Reply::PagedObject {
            body: json!({
                "state": "pending", "sha": pending, "total_count": 1,
                "statuses": [{"context": "ci", "status": "pending", "target_url": "",
                              "description": "Running", "creator": {"login": "ci-bot"},
                              "created_at": "2026-11-29T10:00:00Z", "updated_at": "2026-11-29T10:00:00Z"}]
            }),
            inner: "statuses".into(),
        },
    );
    let server = Launch::new(&forge).start().await;
    let read = |sha: &str| format!("forgejo://repo/acme/widgets/commit/{sha}/status");

    let success = server.read(&read(SHA)).await.unwrap();
    assert_eq!(success.ttl_ms, Some(DAY_MS), "success is final");

    let running = server.read(&read(pending)).await.unwrap();
    assert_eq!(running.ttl_ms, Some(10_000), "pending may still change");
    let again = server.read(&read(pending)).await.unwrap();
    assert_eq!(
        hits(&forge, &status_path),
        1,
        "reused within its ten seconds"
    );
    assert!(again.ttl_ms.is_some_and(|ms| ms <= 10_000));

    let nothing_yet = server.read(&read(SHA_UNKNOWN)).await.unwrap();
    assert_eq!(
        nothing_yet.ttl_ms,
        Some(10_000),
        "no context has reported yet: one may still"
    );

    let template = server
        .client
        .list_all_resource_templates()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.name == "commit_status")
        .unwrap();
    let description = template.description.unwrap();
    assert!(
        description.contains("pending or unknown") && description.contains("10000 ms"),
        "{description}"
    );
    server.stop().await;
}

#[tokio::test]
async fn mutable_resources_are_read_afresh_unless_a_ttl_is_configured() {
    let forge = FakeForge::standard().await;
    let uri = format!("forgejo://repo/acme/widgets/label/{LABEL_ID}");
    let path = format!("/repos/acme/widgets/labels/{LABEL_ID}");

    let fresh = Launch::new(&forge).start().await;
    for _ in 0..2 {
        let result = fresh.read(&uri).await.unwrap();
        assert_eq!(result.ttl_ms, Some(0), "a mutable answer is stale at once");
    }
    assert_eq!(hits(&forge, &path), 2);
    fresh.stop().await;

    forge.clear_log();
    let kept = Launch::new(&forge)
        .arg("--cache-ttl-ms=60000")
        .start()
        .await;
    for _ in 0..2 {
        let result = kept.read(&uri).await.unwrap();
        assert_eq!(
            result.ttl_ms,
            Some(0),
            "kept here, still no promise to the client"
        );
    }
    assert_eq!(hits(&forge, &path), 1);
    kept.stop().await;
}

#[tokio::test]
async fn users_never_share_kept_answers() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge).start_http().await;
    let alice = http.connect(Some(&format!("Bearer {GOOD_TOKEN}"))).await;
    let bob = http
        .connect(Some(&format!("Bearer {NO_SCOPE_TOKEN}")))
        .await;
    let uri = format!("forgejo://repo/acme/widgets/commit/{SHA}");
    alice.read(&uri).await.unwrap();
    bob.read(&uri).await.unwrap();
    alice.read(&uri).await.unwrap();
    let sent: Vec<String> = forge
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        sent,
        [
            format!("token {GOOD_TOKEN}"),
            format!("token {NO_SCOPE_TOKEN}")
        ],
        "bob's read went to the forge with his token; alice's second read was kept"
    );
    alice.stop().await;
    bob.stop().await;
}

fn client(forge: &FakeForge) -> Client {
    Client::new(ClientOptions::new(forge.url().parse().unwrap())).unwrap()
}

/// Sends `request` with `token` on a task of its own.
fn spawn_get(
    client: &Client,
    request: &Request,
    token: Option<&str>,
) -> tokio::task::JoinHandle<Result<forgelens::forge::Response, forgelens::forge::ForgeError>> {
    let (client, request) = (client.clone(), request.clone());
    let token = token.and_then(Token::new);
    tokio::spawn(async move { client.send(&request, token.as_ref()).await })
}

#[tokio::test]
async fn identical_gets_in_flight_are_sent_once() {
    let forge = FakeForge::standard().await;
    let path = format!("/repos/acme/widgets/labels/{LABEL_ID}");
    let gate = forge.gate(&path);
    let client = client(&forge);
    let request = Request::get(&path);
    let callers: Vec<_> = (0..5)
        .map(|_| spawn_get(&client, &request, Some(GOOD_TOKEN)))
        .collect();
    // Another token is another request, though the URL is the same.
    let other = spawn_get(&client, &request, Some(NO_SCOPE_TOKEN));
    forge
        .wait_for("both distinct GETs", |log| {
            log.iter().filter(|r| r.path == path).count() == 2
        })
        .await;
    // The forge holds both answers; every caller has long since joined one of them.
    gate.add_permits(2);
    let mut bodies = Vec::new();
    for caller in callers {
        bodies.push(caller.await.unwrap().unwrap().body);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
    assert!(other.await.unwrap().is_ok());
    assert_eq!(hits(&forge, &path), 2);

    // Once answered, the same GET goes to the forge again: coalescing is not caching.
    gate.add_permits(1);
    client
        .send(&request, Token::new(GOOD_TOKEN).as_ref())
        .await
        .unwrap();
    assert_eq!(hits(&forge, &path), 3);
}

#[tokio::test]
async fn a_get_abandoned_by_every_caller_is_dropped_and_the_next_one_is_sent() {
    let forge = FakeForge::standard().await;
    let path = format!("/repos/acme/widgets/labels/{LABEL_ID}");
    let gate = forge.gate(&path);
    let client = client(&forge);
    let request = Request::get(&path);
    let callers: Vec<_> = (0..2).map(|_| spawn_get(&client, &request, None)).collect();
    forge
        .wait_for("the GET", |log| log.iter().any(|r| r.path == path))
        .await;
    for caller in &callers {
        caller.abort();
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !forge.abandoned().iter().any(|p| p.ends_with(&path)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the forge never saw the request dropped"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    gate.add_permits(1);
    let answer = client.send(&request, None).await.unwrap();
    assert_eq!(answer.body.into_json()["id"], LABEL_ID);
    assert_eq!(
        hits(&forge, &path),
        2,
        "a fresh request, not the abandoned one"
    );
}
