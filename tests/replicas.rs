//! Replicas sharing one store: forgelens processes behind a round-robin proxy, with a real
//! Redis server (`support::redis`) between them. Each step of a sign-in lands on whichever
//! process the proxy picks next, so a sign-in that works at all works across replicas; a
//! refresh token rotated on one is spent on the other; a store that stops makes every replica
//! refuse sign-ins plainly (`503`, never an anonymous answer) and no request wait past the
//! store timeout, and its return needs no restart. With personal tokens, a read one replica
//! made is a hit on the others, the forge's budget is one for all of them (a `429` seen by one
//! holds back all), a store outage loses no request, and a replica stopped mid-request still
//! answers.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::oauth::World;
use crate::support::fake_forge::{FakeForge, Reply};
use crate::support::proxy::Proxy;
use crate::support::redis::Redis;
use crate::support::{HttpServer, Launch, modern_request};

pub(crate) const LABELS: &str = "/repos/acme/widgets/labels";

/// Replicas serving with a personal token, sharing the store at `store`, behind a proxy.
pub(crate) struct Fleet {
    pub(crate) forge: FakeForge,
    pub(crate) servers: Vec<HttpServer>,
    proxy: Proxy,
    http: reqwest::Client,
}

impl Fleet {
    pub(crate) async fn start(count: usize, store: &str, extra: &[&str]) -> Fleet {
        let forge = FakeForge::standard().await;
        Fleet::with_forge(forge, count, store, extra).await
    }

    pub(crate) async fn with_forge(
        forge: FakeForge,
        count: usize,
        store: &str,
        extra: &[&str],
    ) -> Fleet {
        let proxy = Proxy::start().await;
        let mut servers = Vec::new();
        for _ in 0..count {
            let mut launch = Launch::new(&forge)
                .token("fleet-token")
                .arg("--store")
                .arg(store);
            for arg in extra {
                launch = launch.arg(arg);
            }
            let server = launch.start_http().await;
            proxy.add(&server.base);
            servers.push(server);
        }
        Fleet {
            forge,
            servers,
            proxy,
            http: reqwest::Client::new(),
        }
    }

    /// One stand-alone (2026-07-28) request through the proxy: its status and JSON-RPC answer.
    pub(crate) async fn mcp(&self, method: &str, params: Value) -> (u16, Value) {
        let request = modern_request(&self.http, &self.proxy.base, method, params);
        let answer = request.send().await.unwrap();
        let status = answer.status().as_u16();
        let text = answer.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub(crate) async fn labels(&self) -> (u16, Value) {
        self.mcp("tools/call", labels_call()).await
    }

    /// How many requests for `path` reached the forge.
    fn forge_saw(&self, path: &str) -> usize {
        self.forge
            .requests()
            .iter()
            .filter(|r| r.path == path)
            .count()
    }

    fn logs(&self) -> Vec<String> {
        self.servers.iter().map(HttpServer::log).collect()
    }
}

/// The text of a tool's answer, and whether it is an error.
pub(crate) fn tool_text(answer: &Value) -> (String, bool) {
    let result = &answer["result"];
    let text = result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_else(|| answer.to_string());
    (text, result["isError"] == true)
}

fn labels_call() -> serde_json::Value {
    json!({"name": "list_repo_labels", "arguments": {"owner": "acme", "repo": "widgets"}})
}

#[tokio::test]
async fn a_sign_in_made_across_replicas_holds_on_each_and_ends_on_each() {
    let redis = Redis::start().await;
    let world = World::replicated(2, &redis.url(), &[]).await;
    let (client, tokens) = world.sign_in(None).await;
    let spread = world.spread();
    assert!(
        spread.iter().all(|&n| n >= 2),
        "the sign-in's steps went to both replicas: {spread:?}"
    );
    let access = tokens["access_token"].as_str().unwrap();
    for _ in 0..4 {
        let (status, _, answer) = world.mcp(Some(access), "tools/call", labels_call()).await;
        assert_eq!(status, 200, "{answer}");
        assert_ne!(answer["result"]["isError"], true, "{answer}");
    }
    // Rotated on one replica, presented again on the other: the whole sign-in ends.
    let first = tokens["refresh_token"].as_str().unwrap();
    let (status, rotated) = world.refresh(&client, first).await;
    assert_eq!(status, 200, "{rotated}");
    let (status, answer) = world.refresh(&client, first).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let rotated = rotated["access_token"].as_str().unwrap();
    for _ in 0..2 {
        let (status, challenge, _) = world.mcp(Some(rotated), "tools/list", json!({})).await;
        assert_eq!(status, 401, "revoked on every replica");
        assert!(challenge.contains("invalid_token"), "{challenge}");
    }
    // Revoked (RFC 7009) through one replica: the next request on each is refused at once.
    let (client, tokens) = world.sign_in(None).await;
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, _, _) = world
        .form("/revoke", &[("token", refresh), ("client_id", &client)])
        .await;
    assert_eq!(status, 200);
    let revoked = Instant::now();
    let before = world.spread();
    for _ in 0..2 {
        let (status, _, _) = world.mcp(Some(access), "tools/list", json!({})).await;
        assert_eq!(status, 401, "refused on every replica");
    }
    let after = world.spread();
    assert!(
        before.iter().zip(&after).all(|(b, a)| a > b),
        "both replicas were asked: {before:?} → {after:?}"
    );
    assert!(revoked.elapsed() < Duration::from_secs(1));
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn a_store_outage_refuses_sign_ins_plainly_and_ends_by_itself() {
    let mut redis = Redis::start().await;
    let world = World::replicated(2, &redis.url(), &["--store-timeout-ms", "300"]).await;
    let (client, tokens) = world.sign_in(None).await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        world.mcp(Some(access), "tools/list", json!({})).await.0,
        200
    );
    redis.stop();
    for _ in 0..2 {
        let started = Instant::now();
        let (status, challenge, answer) = world.mcp(Some(access), "tools/list", json!({})).await;
        assert_eq!(status, 503, "fails closed on each replica: {answer}");
        assert!(challenge.is_empty(), "no sign-in challenge for an outage");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "held to the store timeout, not hung: {:?}",
            started.elapsed()
        );
    }
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, answer) = world.refresh(&client, refresh).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (503, Some("temporarily_unavailable")),
        "{answer}"
    );
    let (status, _, text) = world.get(&format!("{}/readyz", world.base), None).await;
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("shared store"), "{text}");
    // Back again (with what it held): every replica serves the same sign-in, unrestarted.
    redis.start_again().await;
    let mut served = 0;
    for _ in 0..200 {
        served = match world.mcp(Some(access), "tools/list", json!({})).await.0 {
            200 => served + 1,
            _ => 0,
        };
        if served == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(served, 2, "both replicas recovered by themselves");
    let (status, rotated) = world.refresh(&client, refresh).await;
    assert_eq!(
        status, 200,
        "the refresh token outlived the outage: {rotated}"
    );
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn a_read_cached_by_one_replica_is_a_hit_on_the_others() {
    let redis = Redis::start().await;
    let fleet = Fleet::start(3, &redis.url(), &["--cache-ttl-ms", "60000"]).await;
    let uri = "forgejo://repo/acme/widgets/labels";
    let mut answers = Vec::new();
    for _ in 0..3 {
        let (status, answer) = fleet.mcp("resources/read", json!({"uri": uri})).await;
        assert_eq!(status, 200, "{answer}");
        assert!(answer["result"]["contents"].is_array(), "{answer}");
        answers.push(answer["result"]["contents"].clone());
    }
    assert_eq!(
        fleet.proxy.spread(),
        vec![1, 1, 1],
        "one read on each replica"
    );
    assert_eq!(
        fleet.forge_saw(LABELS),
        1,
        "read once at the forge, then shared"
    );
    assert!(
        answers.windows(2).all(|w| w[0] == w[1]),
        "the same answer everywhere"
    );
    // Another token's read is its own: nothing crosses between users.
    let other = Launch::new(&fleet.forge)
        .token("someone-else")
        .arg("--store")
        .arg(&redis.url())
        .arg("--cache-ttl-ms")
        .arg("60000")
        .start_http()
        .await;
    fleet.proxy.add(&other.base);
    for _ in 0..4 {
        let (status, answer) = fleet.mcp("resources/read", json!({"uri": uri})).await;
        assert_eq!(status, 200, "{answer}");
    }
    assert_eq!(
        fleet.forge_saw(LABELS),
        2,
        "the other token read for itself, once"
    );
    // The store holds hashes, never a token.
    let keys = redis.keys();
    assert!(
        keys.iter().any(|k| k.starts_with("forgelens:cache:")),
        "{keys:?}"
    );
    let dump = redis.dump();
    for token in ["fleet-token", "someone-else"] {
        assert!(!dump.contains(token), "{token} is in the store");
    }
}

#[tokio::test]
async fn the_forge_budget_is_one_for_every_replica() {
    let redis = Redis::start().await;
    let fleet = Fleet::start(3, &redis.url(), &["--forge-rate", "5/m"]).await;
    let mut refused = Vec::new();
    for _ in 0..12 {
        let (status, answer) = fleet.labels().await;
        assert_eq!(status, 200, "{answer}");
        let (text, error) = tool_text(&answer);
        if error {
            refused.push(text);
        }
    }
    assert_eq!(fleet.proxy.spread(), vec![4, 4, 4]);
    assert_eq!(
        fleet.forge_saw(LABELS),
        5,
        "five a minute, over all replicas"
    );
    assert_eq!(refused.len(), 7, "{refused:?}");
    for text in &refused {
        assert!(text.contains("5 requests per 60 s"), "{text}");
        assert!(text.contains("Retry after"), "says how long: {text}");
    }
}

#[tokio::test]
async fn a_429_seen_by_one_replica_holds_back_every_replica() {
    let redis = Redis::start().await;
    let forge = FakeForge::standard().await;
    forge.route(
        "GET",
        LABELS,
        Reply::Headers {
            status: 429,
            headers: vec![("Retry-After".into(), "30".into())],
            body: json!({"message": "slow down"}),
        },
    );
    let fleet = Fleet::with_forge(forge, 2, &redis.url(), &[]).await;
    let (_, first) = fleet.labels().await;
    let (text, error) = tool_text(&first);
    assert!(error && text.contains("429"), "{text}");
    for _ in 0..3 {
        let (_, answer) = fleet.labels().await;
        let (text, error) = tool_text(&answer);
        assert!(
            error && text.contains("was not sent: the forge answered 429"),
            "held back: {text}"
        );
        let wait: u64 = text
            .split("Retry after ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no wait in {text}"));
        assert!((25..=30).contains(&wait), "{text}");
    }
    assert_eq!(fleet.proxy.spread(), vec![2, 2]);
    assert_eq!(
        fleet.forge_saw(LABELS),
        1,
        "only the first request reached the forge"
    );
}

#[tokio::test]
async fn a_store_outage_loses_no_personal_token_request() {
    let mut redis = Redis::start().await;
    let fleet = Fleet::start(
        2,
        &redis.url(),
        &["--cache-ttl-ms", "60000", "--store-timeout-ms", "300"],
    )
    .await;
    let uri = "forgejo://repo/acme/widgets/labels";
    assert_eq!(
        fleet.mcp("resources/read", json!({"uri": uri})).await.0,
        200
    );
    redis.stop();
    // Ten seconds without the store: every request is answered, none waits long.
    let outage = Instant::now();
    let mut answered = 0;
    while outage.elapsed() < Duration::from_secs(10) {
        let started = Instant::now();
        let (status, answer) = fleet.labels().await;
        assert_eq!(status, 200, "{answer}");
        let (text, error) = tool_text(&answer);
        assert!(!error, "{text}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "held to the store timeout: {:?}",
            started.elapsed()
        );
        answered += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(answered >= 40, "{answered} requests in the outage");
    for server in &fleet.servers {
        let ready = reqwest::get(format!("{}/readyz", server.base))
            .await
            .unwrap();
        assert_eq!(ready.status(), 200);
        let text = ready.text().await.unwrap();
        assert!(text.contains("without the shared cache"), "{text}");
    }
    for log in fleet.logs() {
        assert_eq!(
            log.matches("the shared store does not answer").count(),
            1,
            "logged once, not per request:\n{log}"
        );
    }
    redis.start_again().await;
    // Back by itself: a read made now on one replica is a hit on the other.
    let mut shared = false;
    for limit in 1..100 {
        let fresh = format!("forgejo://repo/acme/widgets/labels?limit={limit}");
        fleet.forge.clear_log();
        let a = fleet.mcp("resources/read", json!({"uri": fresh})).await;
        let b = fleet.mcp("resources/read", json!({"uri": fresh})).await;
        assert_eq!((a.0, b.0), (200, 200), "{a:?} {b:?}");
        if fleet.forge.requests().len() == 1 {
            shared = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(shared, "the shared cache came back without a restart");
    for log in fleet.logs() {
        assert!(log.contains("the shared store answers again"), "{log}");
    }
}

#[tokio::test]
async fn a_store_over_tls_with_a_private_authority_and_a_password() {
    let redis = Redis::start_tls("store-secret").await;
    let dir = tempfile::tempdir().unwrap();
    let password = dir.path().join("password");
    std::fs::write(&password, "store-secret\n").unwrap();
    let (ca, password) = (
        redis.ca().display().to_string(),
        password.display().to_string(),
    );
    let fleet = Fleet::start(
        2,
        &redis.url(),
        &[
            "--store-ca-file",
            &ca,
            "--store-password-file",
            &password,
            "--cache-ttl-ms",
            "60000",
        ],
    )
    .await;
    let uri = "forgejo://repo/acme/widgets/labels";
    for _ in 0..2 {
        let (status, answer) = fleet.mcp("resources/read", json!({"uri": uri})).await;
        assert_eq!(status, 200, "{answer}");
    }
    assert_eq!(fleet.forge_saw(LABELS), 1, "shared over TLS");
    for log in fleet.logs() {
        assert!(!log.contains("does not answer"), "{log}");
        assert!(!log.contains("store-secret"), "{log}");
    }
    // Without the authority, the store's certificate is not trusted: the replica says so and
    // serves without it.
    let untrusting = Launch::new(&fleet.forge)
        .token("fleet-token")
        .arg("--store")
        .arg(&redis.url())
        .arg("--store-password-file")
        .arg(&password)
        .start_http()
        .await;
    let ready = reqwest::get(format!("{}/readyz", untrusting.base))
        .await
        .unwrap();
    let text = ready.text().await.unwrap();
    assert!(text.contains("without the shared cache"), "{text}");
}

#[tokio::test]
async fn a_store_that_never_answers_delays_no_request_past_its_timeout() {
    // A listener that takes connections and never says a word: a store behind a dead route.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("redis://{}/0", silent.local_addr().unwrap());
    let fleet = Fleet::start(
        2,
        &url,
        &["--cache-ttl-ms", "60000", "--store-timeout-ms", "300"],
    )
    .await;
    // Each read is a new one, so each asks the store for it (and would keep it there).
    for limit in 1..=20 {
        let started = Instant::now();
        let uri = format!("forgejo://repo/acme/widgets/labels?limit={limit}");
        let (status, answer) = fleet.mcp("resources/read", json!({"uri": uri})).await;
        assert_eq!(status, 200, "{answer}");
        assert!(answer["result"]["contents"].is_array(), "{answer}");
        // One store call may wait out the timeout; the ones after it in the same second do
        // not (two calls waiting would be 600 ms).
        assert!(
            started.elapsed() < Duration::from_millis(550),
            "{:?}",
            started.elapsed()
        );
    }
    for log in fleet.logs() {
        assert!(log.contains("no answer within 300 ms"), "{log}");
    }
    drop(silent);
}

#[cfg(unix)]
#[tokio::test]
async fn a_replica_stopped_mid_request_still_answers_it() {
    let redis = Redis::start().await;
    let forge = FakeForge::standard().await;
    let gate = forge.gate(LABELS);
    let fleet = Fleet::with_forge(forge, 2, &redis.url(), &[]).await;
    let first = fleet.servers[0].base.clone();
    let call = tokio::spawn({
        let proxy = fleet.proxy.base.clone();
        async move {
            let answer =
                modern_request(&reqwest::Client::new(), &proxy, "tools/call", labels_call())
                    .send()
                    .await
                    .unwrap();
            (answer.status().as_u16(), answer.text().await.unwrap())
        }
    });
    fleet
        .forge
        .wait_for("the call at the forge", |log| {
            log.iter().any(|r| r.path == LABELS)
        })
        .await;
    // The load balancer takes the replica out; it is told to stop with the call in flight.
    fleet.proxy.remove(&first);
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &fleet.servers[0].pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    gate.add_permits(100);
    let (status, text) = call.await.unwrap();
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    let (text, error) = tool_text(&answer);
    assert!(!error, "{text}");
    assert!(text.contains("label-3"), "the whole answer: {text}");
    // The other replica goes on serving.
    let (status, answer) = fleet.labels().await;
    assert_eq!(status, 200, "{answer}");
    assert!(!tool_text(&answer).1, "{answer}");
}

#[tokio::test]
async fn one_process_without_a_store_keeps_the_budget_itself() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge)
        .token("alone")
        .arg("--forge-rate")
        .arg("2/m")
        .start()
        .await;
    let args = json!({"owner": "acme", "repo": "widgets"});
    for _ in 0..2 {
        let answer = server
            .call_ok_or_error("list_repo_labels", args.clone())
            .await;
        assert_ne!(answer.is_error, Some(true), "{answer:?}");
    }
    let refused = server.call_ok_or_error("list_repo_labels", args).await;
    let text = crate::support::result_text(&refused);
    assert_eq!(refused.is_error, Some(true), "{text}");
    assert!(
        text.contains("2 requests per 60 s that --forge-rate allows"),
        "{text}"
    );
    assert!(text.contains("Retry after"), "{text}");
    let sent = forge.requests().iter().filter(|r| r.path == LABELS).count();
    assert_eq!(sent, 2);
}
