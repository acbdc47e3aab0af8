//! Forgejo pages by offset: consecutive pages must cover a list exactly once.

use std::collections::HashSet;

use serde_json::json;

use crate::support::{FakeForge, Launch};

#[tokio::test]
async fn pages_one_and_two_with_limit_ten_are_rows_one_to_twenty_once() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let mut names = Vec::new();
    for page in 1..=2 {
        let body = server
            .read_json(&format!(
                "forgejo://repo/acme/many-labels/labels?page={page}&limit=10"
            ))
            .await;
        names.extend(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["name"].as_str().unwrap().to_owned()),
        );
    }
    let expected: Vec<String> = (1..=20).map(|i| format!("label-{i}")).collect();
    assert_eq!(names, expected);
    for (i, request) in forge.requests().iter().enumerate() {
        assert_eq!(
            request.query("limit"),
            Some("10"),
            "exactly `limit` rows are asked for, never limit+1"
        );
        assert_eq!(request.query("page"), Some((i + 1).to_string().as_str()));
    }
    server.stop().await;
}

#[tokio::test]
async fn walking_every_page_sees_every_row_once() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    for limit in [1, 7, 10, 30] {
        let mut seen = Vec::new();
        let mut uri = format!("forgejo://repo/acme/many-labels/labels?limit={limit}");
        loop {
            let body = server.read_json(&uri).await;
            seen.extend(
                body["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l["id"].as_u64().unwrap()),
            );
            match body.get("next") {
                Some(next) => uri = next.as_str().unwrap().to_owned(),
                None => break,
            }
        }
        assert_eq!(seen.len(), 45, "limit {limit}");
        assert_eq!(
            seen.iter().collect::<HashSet<_>>().len(),
            45,
            "limit {limit}: no row twice"
        );
    }
    let mut tool_seen = Vec::new();
    let mut page = 1;
    loop {
        let body = server
            .call_ok(
                "list_repo_labels",
                json!({"owner": "acme", "repo": "many-labels", "page": page, "limit": 10}),
            )
            .await;
        tool_seen.extend(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["id"].as_u64().unwrap()),
        );
        if body["has_more"] == false {
            break;
        }
        page = body["next_page"].as_u64().unwrap();
    }
    assert_eq!(tool_seen, (200..245).collect::<Vec<u64>>());
    server.stop().await;
}
