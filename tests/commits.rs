//! The commit and combined-status resources, and the statuses tools.

use serde_json::json;

use crate::support::fake_forge::GOOD_TOKEN;
use crate::support::fixtures::{SHA, SHA_FEW, SHA_UNKNOWN};
use crate::support::{FakeForge, Launch};

#[tokio::test]
async fn a_commit_is_immutable_json_plus_its_full_message() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let uri = format!("forgejo://repo/acme/widgets/commit/{SHA}");
    let result = server.read(&uri).await.unwrap();
    assert_eq!(
        result.ttl_ms,
        Some(86_400_000),
        "immutable results carry ttlMs"
    );
    assert_eq!(
        result.cache_scope,
        Some(rmcp::model::CacheScope::Public),
        "read without a token: anyone's"
    );
    let blocks = server.read_blocks(&uri).await;
    let mimes: Vec<&str> = blocks.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(mimes, ["application/json", "text/markdown"]);
    let commit: serde_json::Value = serde_json::from_str(&blocks[0].1).unwrap();
    assert_eq!(commit["sha"], SHA);
    assert_eq!(
        commit["message_subject"],
        "Bound the widget cache by entry count"
    );
    assert_eq!(commit["parents"], json!([SHA_FEW]));
    assert_eq!(commit["author"]["login"], "alice");
    assert_eq!(commit["committer"]["login"], serde_json::Value::Null);
    assert!(
        blocks[1].1.contains("evict the least recently used") && blocks[1].1.contains("Fixes #12")
    );
    let request = &forge.requests()[0];
    assert_eq!(
        request.path,
        format!("/repos/acme/widgets/git/commits/{SHA}")
    );
    assert_eq!(
        (request.query("stat"), request.query("files")),
        (Some("false"), Some("false"))
    );

    let templates = server.client.list_all_resource_templates().await.unwrap();
    let t = templates.iter().find(|t| t.name == "commit").unwrap();
    let a = t
        .annotations
        .as_ref()
        .expect("immutable templates are annotated");
    assert_eq!(
        (a.audience.clone(), a.priority),
        (Some(vec![rmcp::model::Role::Assistant]), Some(1.0))
    );
    assert!(t.description.as_deref().unwrap().contains("Immutable"));
    server.stop().await;
}

#[tokio::test]
async fn with_a_token_the_cache_scope_is_private() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).token(GOOD_TOKEN).start().await;
    let result = server
        .read(&format!("forgejo://repo/acme/widgets/commit/{SHA}"))
        .await
        .unwrap();
    assert_eq!(result.cache_scope, Some(rmcp::model::CacheScope::Private));
    assert_eq!(
        forge.requests()[0].header("authorization"),
        Some(format!("token {GOOD_TOKEN}").as_str())
    );
    server.stop().await;
}

#[tokio::test]
async fn a_sha_must_be_exactly_40_hex() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    for sha in [
        "abc123",
        &SHA[..39],
        &format!("{SHA}0"),
        &format!("{}g", &SHA[..39]),
        "HEAD",
        "main",
    ] {
        for uri in [
            format!("forgejo://repo/acme/widgets/commit/{sha}"),
            format!("forgejo://repo/acme/widgets/commit/{sha}/status"),
        ] {
            assert_eq!(server.read_error(&uri).await.0, -32602, "{uri}");
        }
    }
    assert!(forge.requests().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn combined_status_caps_statuses_and_names_the_tool() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let uri = format!("forgejo://repo/acme/widgets/commit/{SHA}/status");
    let result = server.read(&uri).await.unwrap();
    assert!(result.ttl_ms.is_some());
    let status = server.read_json(&uri).await;
    assert_eq!(status["state"], "success");
    assert_eq!(
        status["total_count"], 35,
        "X-Total-Count counts every status, the body only the page"
    );
    assert_eq!(status["statuses"].as_array().unwrap().len(), 30);
    assert_eq!(
        status["statuses"][0],
        json!({
            "context": "ci/job-1", "state": "success", "target_url": "http://ci.example.org/runs/1",
            "description": "Build passed", "creator_login": "ci-bot",
            "created_at": "2026-11-20T14:10:00Z", "updated_at": "2026-11-20T14:12:00Z"
        })
    );
    assert_eq!(
        status["statuses_truncated"],
        "[truncated: 30 of 35 items shown. Use get_commit_statuses tool (through call_read_tool) with page=2 and limit=30 to fetch more.]"
    );
    let few = server
        .read_json(&format!(
            "forgejo://repo/acme/widgets/commit/{SHA_FEW}/status"
        ))
        .await;
    assert_eq!(few["statuses"].as_array().unwrap().len(), 2);
    assert!(few.get("statuses_truncated").is_none());
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_sha_has_state_unknown() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let status = server
        .read_json(&format!(
            "forgejo://repo/acme/widgets/commit/{SHA_UNKNOWN}/status"
        ))
        .await;
    assert_eq!(status["state"], "unknown");
    assert_eq!(status["sha"], SHA_UNKNOWN);
    assert_eq!(status["statuses"], json!([]));
    server.stop().await;
}

/// "Is CI green?" is answered by the combined `state` beside the page of statuses, which a
/// tight budget shrinks without losing the state; a ref nothing reported on is `unknown`.
#[tokio::test]
async fn the_combined_status_tool_keeps_the_combined_state() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let ask = |sha: &str, limit: u64| json!({"owner": "acme", "repo": "widgets", "ref": sha, "limit": limit});
    let whole = server.call_ok("get_combined_status", ask(SHA, 30)).await;
    assert_eq!(whole["state"], "success");
    assert_eq!(whole["sha"], SHA);
    assert_eq!(whole["items"].as_array().unwrap().len(), 30);
    assert_eq!(whole["total_count"], 35);
    let one = server.call_ok("get_combined_status", ask(SHA, 1)).await;
    assert_eq!(
        (&one["state"], one["items"].as_array().unwrap().len()),
        (&json!("success"), 1)
    );
    let nothing = server
        .call_ok("get_combined_status", ask(SHA_UNKNOWN, 30))
        .await;
    assert_eq!(nothing["state"], "unknown");
    assert_eq!(nothing["items"], json!([]));
    server.stop().await;

    let small = Launch::new(&forge)
        .arg("--max-answer-bytes")
        .arg("4096")
        .start()
        .await;
    let cut = small.call_ok("get_combined_status", ask(SHA, 30)).await;
    assert_eq!(cut["state"], "success");
    assert!(cut["items"].as_array().unwrap().len() < 30, "{cut}");
    assert!(serde_json::to_string(&cut).unwrap().len() <= 4096);
    small.stop().await;
}

#[tokio::test]
async fn the_statuses_tool_continues_where_the_sentinel_says() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let page = server
        .call_ok(
            "get_commit_statuses",
            json!({"owner": "acme", "repo": "widgets", "sha": SHA, "page": 2, "limit": 30}),
        )
        .await;
    let contexts: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["context"].as_str().unwrap())
        .collect();
    assert_eq!(
        contexts,
        (31..=35).map(|i| format!("ci/job-{i}")).collect::<Vec<_>>()
    );
    assert_eq!(page["has_more"], false);
    server.stop().await;
}
