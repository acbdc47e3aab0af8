//! Replicas sharing one store: two forgelens processes behind a round-robin proxy, every
//! sign-in kept in a real Redis server (`support::redis`). Each step of a sign-in lands on
//! whichever process the proxy picks next, so a sign-in that works at all works across
//! replicas; a refresh token rotated on one is spent on the other; a store that stops makes
//! every replica refuse sign-ins plainly (`503`, never an anonymous answer) and no request
//! wait past the store timeout, and its return needs no restart.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::oauth::World;
use crate::support::redis::Redis;

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
    world.assert_no_forge_secret();
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
    world.assert_no_forge_secret();
}
