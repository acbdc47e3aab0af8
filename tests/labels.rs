//! The label resources and tools: every scenario of the label specification, through the binary.

use serde_json::{Value, json};

use crate::support::fake_forge::{GOOD_TOKEN, NO_SCOPE_TOKEN};
use crate::support::fixtures::LABEL_ID;
use crate::support::{FakeForge, Launch};

#[tokio::test]
async fn an_existing_label_resolves() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let blocks = server
        .read_blocks(&format!("forgejo://repo/acme/widgets/label/{LABEL_ID}"))
        .await;
    assert_eq!(blocks.len(), 1, "one application/json block");
    let label: serde_json::Value = serde_json::from_str(&blocks[0].1).unwrap();
    assert_eq!(label["id"], LABEL_ID);
    assert!(label["name"].as_str().is_some_and(|n| !n.is_empty()));
    assert_eq!(label["color"], "d73a4a");
    assert_eq!(
        forge.requests()[0].path,
        format!("/repos/acme/widgets/labels/{LABEL_ID}")
    );
    server.stop().await;
}

#[tokio::test]
async fn a_non_numeric_id_is_refused_before_any_request() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    for uri in [
        "forgejo://repo/acme/widgets/label/abc",
        "forgejo://repo/acme/widgets/label/0",
        "forgejo://repo/acme/widgets/label/-1",
        "forgejo://repo/acme/widgets/label/1.5",
        "forgejo://label/5",
    ] {
        let (code, data) = server.read_error(uri).await;
        assert_eq!(code, -32602, "{uri}");
        assert_eq!(data["reason"], "invalid_params", "{uri}");
        assert_eq!(data["uri"], uri);
    }
    assert!(
        forge.requests().is_empty(),
        "no upstream request: {:?}",
        forge.requests()
    );
    server.stop().await;
}

#[tokio::test]
async fn a_missing_label_is_not_found() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let (code, data) = server
        .read_error("forgejo://repo/acme/widgets/label/999")
        .await;
    assert_eq!(code, -32003);
    assert_eq!(
        data,
        json!({"uri": "forgejo://repo/acme/widgets/label/999", "reason": "not_found", "upstream_status": 404})
    );
    server.stop().await;
}

#[tokio::test]
async fn a_private_repo_without_access_is_forbidden() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).token(NO_SCOPE_TOKEN).start().await;
    let (code, data) = server
        .read_error("forgejo://repo/acme/secret/label/7")
        .await;
    assert_eq!(code, -32002);
    assert_eq!(data["reason"], "forbidden");
    assert_eq!(data["upstream_status"], 403);
    let err = server
        .read("forgejo://repo/acme/secret/label/7")
        .await
        .unwrap_err();
    assert!(
        err.message.contains("read:repository"),
        "the forge's scope message is kept: {}",
        err.message
    );
    server.stop().await;

    // Without a token the forge hides the repository: not found, as it says.
    let anonymous = Launch::new(&forge).start().await;
    assert_eq!(
        anonymous
            .read_error("forgejo://repo/acme/secret/label/7")
            .await
            .0,
        -32003
    );
    anonymous.stop().await;

    // With a good token the label is there.
    let member = Launch::new(&forge).token(GOOD_TOKEN).start().await;
    assert_eq!(
        member.read_json("forgejo://repo/acme/secret/label/7").await["id"],
        LABEL_ID
    );
    member.stop().await;
}

#[tokio::test]
async fn a_client_limit_bounds_the_page_and_the_sentinel_names_the_next_page() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let page = server
        .read_json("forgejo://repo/acme/many-labels/labels?limit=10")
        .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 10);
    assert_eq!(
        (
            page["page"].clone(),
            page["limit"].clone(),
            page["total_count"].clone()
        ),
        (json!(1), json!(10), json!(45))
    );
    assert_eq!(page["has_more"], true);
    assert_eq!(
        page["truncated"],
        "[truncated: 10 of 45 items shown. Use list_repo_labels tool with page=2 and limit=10 to fetch more.]"
    );
    assert_eq!(
        page["next"],
        "forgejo://repo/acme/many-labels/labels?page=2&limit=10"
    );
    let request = &forge.requests()[0];
    assert_eq!(
        (request.query("page"), request.query("limit")),
        (Some("1"), Some("10"))
    );
    server.stop().await;
}

#[tokio::test]
async fn under_the_cap_every_label_and_no_sentinel() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    for uri in [
        "forgejo://repo/acme/widgets/labels",
        "forgejo://org/acme/labels",
    ] {
        let page = server.read_json(uri).await;
        let expected = if uri.starts_with("forgejo://org/") {
            2
        } else {
            3
        };
        assert_eq!(page["items"].as_array().unwrap().len(), expected, "{uri}");
        assert_eq!(page["has_more"], false, "{uri}");
        assert!(
            page.get("truncated").is_none() && page.get("next").is_none(),
            "{uri}: {page}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn over_the_cap_truncated_with_a_sentinel_naming_the_list_tool() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let cases = [
        (
            "forgejo://repo/acme/many-labels/labels",
            "list_repo_labels tool",
            45,
        ),
        (
            "forgejo://repo/acme/many-labels/labels?limit=500",
            "list_repo_labels tool",
            45,
        ),
        // Not a core tool: the sentinel says how to reach it.
        (
            "forgejo://org/bigorg/labels",
            "list_org_labels tool (through call_read_tool)",
            35,
        ),
    ];
    for (uri, tool, total) in cases {
        let page = server.read_json(uri).await;
        assert_eq!(
            page["items"].as_array().unwrap().len(),
            30,
            "{uri}: capped at 30"
        );
        assert_eq!(page["limit"], 30, "{uri}: limit clamped to the cap");
        assert_eq!(
            page["truncated"],
            format!(
                "[truncated: 30 of {total} items shown. Use {tool} with page=2 and limit=30 to fetch more.]"
            ),
            "{uri}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_missing_org_or_repo_is_not_found() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    for uri in [
        "forgejo://org/nobody/labels",
        "forgejo://repo/acme/nothing/labels",
    ] {
        let (code, data) = server.read_error(uri).await;
        assert_eq!(code, -32003, "{uri}");
        assert_eq!(data["reason"], "not_found", "{uri}");
    }
    server.stop().await;
}

#[tokio::test]
async fn bad_page_and_limit_are_refused_before_any_request() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    for uri in [
        "forgejo://repo/acme/widgets/labels?page=0",
        "forgejo://repo/acme/widgets/labels?page=x",
        "forgejo://repo/acme/widgets/labels?limit=-3",
        "forgejo://repo/acme/widgets/labels?sort=name",
        "forgejo://repo/acme/widgets/labels?page=1&page=2",
        "forgejo://repo/acme/wid%2Fgets/labels",
        "forgejo://repo/acme/../labels",
        "forgejo://repo/acme//labels",
        "https://repo/acme/widgets/labels",
    ] {
        assert_eq!(server.read_error(uri).await.0, -32602, "{uri}");
    }
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());
    server.stop().await;
}

#[tokio::test]
async fn list_tools_page_and_report_totals() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).full().start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    for name in ["list_repo_labels", "list_org_labels", "get_commit_statuses"] {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        let annotations = tool.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(true), "{name}");
        assert!(tool.output_schema.is_some(), "{name}");
        let limit = &tool.input_schema["properties"]["limit"];
        assert_eq!(
            (&limit["minimum"], &limit["maximum"]),
            (&json!(1), &json!(50)),
            "{name}"
        );
    }
    let page = server
        .call_ok(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "many-labels", "page": 2, "limit": 20}),
        )
        .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 20);
    assert_eq!(
        (
            page["total_count"].clone(),
            page["has_more"].clone(),
            page["next_page"].clone()
        ),
        (json!(45), json!(true), json!(3))
    );
    assert_eq!(page["items"][0]["name"], "label-21");
    let last = server
        .call_ok(
            "list_org_labels",
            json!({"org": "bigorg", "page": 2, "limit": 30}),
        )
        .await;
    assert_eq!(
        (
            last["items"].as_array().unwrap().len(),
            last["has_more"].clone()
        ),
        (5, json!(false))
    );
    server.stop().await;
}

/// One policy for both faces of a list: a `limit` above the largest page is read as that page,
/// and the answer says the limit it used; both answer with the same envelope.
#[tokio::test]
async fn an_oversized_limit_is_read_as_the_largest_page_by_both_faces() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).full().start().await;
    let by_tool = server
        .call_ok(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "many-labels", "limit": 500}),
        )
        .await;
    let asked = forge.requests();
    let request = asked.last().expect("the call reached the forge");
    assert_eq!(request.query("limit"), Some("50"), "{request:?}");
    assert_eq!(
        (
            by_tool["limit"].clone(),
            by_tool["items"].as_array().unwrap().len()
        ),
        (json!(50), 45)
    );
    let by_uri = server
        .read_json("forgejo://repo/acme/many-labels/labels?limit=500")
        .await;
    assert_eq!(
        (
            by_uri["limit"].clone(),
            by_uri["items"].as_array().unwrap().len()
        ),
        (json!(30), 30)
    );
    let keys =
        |page: &Value| -> Vec<String> { page.as_object().unwrap().keys().cloned().collect() };
    let continued = server
        .call_ok(
            "list_repo_labels",
            json!({"owner": "acme", "repo": "many-labels", "limit": 20}),
        )
        .await;
    // The resource's envelope is the tool's, with how to go on by URI added.
    assert_eq!(
        keys(&by_uri),
        [
            "page",
            "limit",
            "total_count",
            "has_more",
            "next_page",
            "items",
            "next",
            "truncated"
        ]
    );
    assert_eq!(
        keys(&continued),
        [
            "page",
            "limit",
            "total_count",
            "has_more",
            "next_page",
            "items"
        ]
    );
    assert_eq!(by_uri["next_page"], 2);
    server.stop().await;
}
