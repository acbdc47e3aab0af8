//! The catalog's list resources through the binary: comment threads, issues, pull requests,
//! branch protection rules, webhooks, contents (files as line ranges, directories as pages),
//! releases, milestones and branches.

use serde_json::{Value, json};

use crate::support::catalog_world::{self, FILE_LINES, ISSUE_COMMENTS, SRC_ENTRIES, lib_rs};
use crate::support::fake_forge::Logged;
use crate::support::{FakeForge, Launch, Server};

async fn start() -> (FakeForge, Server) {
    let forge = catalog_world::forge().await;
    let server = Launch::new(&forge).start().await;
    (forge, server)
}

fn field(list: &Value, name: &str) -> Vec<Value> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {list}"))
        .iter()
        .map(|i| i[name].clone())
        .collect()
}

fn only(log: Vec<Logged>, path: &str) -> Logged {
    let found: Vec<Logged> = log.into_iter().filter(|r| r.path == path).collect();
    assert_eq!(found.len(), 1, "one request to {path}: {found:?}");
    found.into_iter().next().unwrap()
}

#[tokio::test]
async fn thread_page_two_is_exactly_comments_21_to_40_although_the_forge_ignores_paging() {
    let (forge, server) = start().await;
    let page = server
        .read_json("forgejo://repo/acme/widgets/issue/12/comments?page=2&limit=20")
        .await;
    let ids: Vec<u64> = field(&page, "id")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(ids, (1021..=1040).collect::<Vec<u64>>());
    assert_eq!(
        page["items"][0],
        json!({"id": 1021, "author": "carol", "created_at": "2026-10-03T20:00:00Z",
               "updated_at": "2026-10-03T20:00:00Z", "body": "Comment 21 on #12"})
    );
    assert_eq!(
        (
            page["page"].clone(),
            page["limit"].clone(),
            page["total_count"].clone(),
            page["has_more"].clone()
        ),
        (json!(2), json!(20), json!(ISSUE_COMMENTS), json!(true))
    );
    assert_eq!(
        page["next"],
        "forgejo://repo/acme/widgets/issue/12/comments?page=3&limit=20"
    );
    assert_eq!(
        page["truncated"],
        "[truncated: 20 of 45 items shown. Use list_issue_comments tool with page=3 and limit=20 to fetch more.]"
    );
    let last = server.read_json(page["next"].as_str().unwrap()).await;
    assert_eq!(
        field(&last, "id"),
        (1041..=1045).map(|i| json!(i)).collect::<Vec<_>>()
    );
    assert_eq!(last["has_more"], false);
    assert!(last.get("next").is_none() && last.get("truncated").is_none());
    let thread: Vec<Logged> = forge
        .requests()
        .into_iter()
        .filter(|r| r.path == "/repos/acme/widgets/issues/12/comments")
        .collect();
    assert_eq!(thread.len(), 2);
    assert!(
        thread.iter().all(|r| r.query.is_empty()),
        "the whole thread is asked for: {thread:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_thread_is_served_only_under_the_kind_of_its_parent() {
    let (_forge, server) = start().await;
    let pr = server
        .read_json("forgejo://repo/acme/widgets/pr/14/comments?limit=5")
        .await;
    assert_eq!(
        field(&pr, "id"),
        (2001..=2005).map(|i| json!(i)).collect::<Vec<_>>()
    );
    assert_eq!(pr["total_count"], 33);
    for uri in [
        "forgejo://repo/acme/widgets/pr/12/comments",
        "forgejo://repo/acme/widgets/issue/14/comments",
    ] {
        let (code, data) = server.read_error(uri).await;
        assert_eq!(
            (code, data["reason"].clone()),
            (-32003, json!("not_found")),
            "{uri}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn issues_default_to_open_and_pass_state_and_labels_upstream() {
    let (forge, server) = start().await;
    let page = server.read_json("forgejo://repo/acme/widgets/issues").await;
    assert_eq!(field(&page, "index"), [json!(12), json!(3), json!(5)]);
    assert_eq!(
        page["items"][0],
        json!({
            "index": 12, "title": "The widget cache grows without bound", "state": "open",
            "labels": ["kind/bug", "area/cache"], "author": "alice", "assignees": ["bob"],
            "comments_count": 45, "created_at": "2026-10-02T08:15:00Z",
            "updated_at": "2026-11-20T14:05:00Z"
        })
    );
    assert_eq!(page["total_count"], 3);
    assert_eq!(page["has_more"], false);
    let request = only(forge.requests(), "/repos/acme/widgets/issues");
    assert_eq!(
        (
            request.query("type"),
            request.query("state"),
            request.query("labels"),
            request.query("page"),
            request.query("limit")
        ),
        (Some("issues"), Some("open"), None, Some("1"), Some("30"))
    );
    forge.clear_log();
    server
        .read_json(
            "forgejo://repo/acme/widgets/issues?state=closed&labels=kind/bug,area/cache&limit=2",
        )
        .await;
    let request = only(forge.requests(), "/repos/acme/widgets/issues");
    assert_eq!(
        (
            request.query("state"),
            request.query("labels"),
            request.query("limit")
        ),
        (Some("closed"), Some("kind/bug,area/cache"), Some("2"))
    );
    server.stop().await;
}

#[tokio::test]
async fn pulls_default_to_open_without_descriptions() {
    let (forge, server) = start().await;
    let page = server.read_json("forgejo://repo/acme/widgets/pulls").await;
    assert_eq!(
        page["items"][1],
        json!({
            "index": 15, "title": "Faster start-up", "state": "open", "draft": true,
            "merged": false, "author": "bob", "head": "fast-start", "base": "main",
            "labels": ["kind/bug"], "requested_reviewers": [],
            "created_at": "2026-11-20T14:06:00Z", "updated_at": "2026-11-21T09:00:00Z",
            "closed_at": null
        })
    );
    let request = only(forge.requests(), "/repos/acme/widgets/pulls");
    assert_eq!(request.query("state"), Some("open"));
    server.stop().await;
}

#[tokio::test]
async fn branch_protections_are_listed_whole_and_paged_here() {
    let (forge, server) = start().await;
    let page = server
        .read_json("forgejo://repo/acme/widgets/branch_protections?limit=1")
        .await;
    assert_eq!(field(&page, "rule_name"), [json!("main")]);
    assert_eq!(
        page["truncated"],
        "[truncated: 1 of 2 items shown. Use list_branch_protections tool (through call_read_tool) with page=2 and limit=1 to fetch more.]"
    );
    let rest = server
        .read_json("forgejo://repo/acme/widgets/branch_protections?page=2&limit=1")
        .await;
    assert_eq!(field(&rest, "rule_name"), [json!("release/*")]);
    assert_eq!(rest["items"][0]["required_approvals"], 2);
    assert!(
        forge.requests().iter().all(|r| r.query.is_empty()),
        "the forge lists every rule at once"
    );
    server.stop().await;
}

#[tokio::test]
async fn releases_milestones_and_branches_are_pages_of_their_lists() {
    let (forge, server) = start().await;
    let releases = server
        .read_json("forgejo://repo/acme/widgets/releases")
        .await;
    assert_eq!(
        field(&releases, "tag_name"),
        [json!("v1.2.0"), json!("v1.1.0"), json!("v1.0.0")]
    );
    assert_eq!(
        releases["items"][0],
        json!({"id": 42, "tag_name": "v1.2.0", "name": "Widgets 1.2.0", "draft": false,
               "prerelease": false, "author": "alice", "published_at": "2026-11-01T12:00:00Z",
               "html_url": "http://fake/acme/widgets/releases/tag/v1.2.0"})
    );
    let limited = server
        .read_json("forgejo://repo/acme/widgets/releases?limit=2")
        .await;
    assert_eq!(
        limited["truncated"],
        "[truncated: 2 of 3 items shown. Use list_releases tool (through call_read_tool) with page=2 and limit=2 to fetch more.]"
    );

    let milestones = server
        .read_json("forgejo://repo/acme/widgets/milestones?state=all")
        .await;
    assert_eq!(field(&milestones, "title"), [json!("1.3"), json!("1.2")]);
    assert_eq!(
        field(&milestones, "state"),
        [json!("open"), json!("closed")]
    );
    let request = only(forge.requests(), "/repos/acme/widgets/milestones");
    assert_eq!(request.query("state"), Some("all"));

    let branches = server
        .read_json("forgejo://repo/acme/widgets/branches")
        .await;
    assert_eq!(
        branches["items"],
        json!([
            {"name": "main", "commit_sha": "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
             "commit_subject": "Bound the widget cache by entry count", "protected": true},
            {"name": "feature/login", "commit_sha": "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
             "commit_subject": "Log in with a token", "protected": false}
        ])
    );
    server.stop().await;
}

#[tokio::test]
async fn a_file_range_returns_only_those_lines_and_says_how_many_the_file_has() {
    let (forge, server) = start().await;
    let uri = "forgejo://repo/acme/widgets/contents/src/lib.rs?ref=v1.2.0&start_line=3&end_line=5";
    let blocks = server.read_blocks(uri).await;
    let mimes: Vec<&str> = blocks.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(mimes, ["application/json", "text/plain"]);
    assert_eq!(
        crate::support::enveloped(&blocks[1].1).1,
        "// line 3\n// line 4\n// line 5\n"
    );
    let file: Value = serde_json::from_str(&blocks[0].1).unwrap();
    assert_eq!(
        file,
        json!({
            "name": "lib.rs", "path": "src/lib.rs", "type": "file", "size": lib_rs().len(),
            "sha": "3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c",
            "start_line": 3, "end_line": 5, "total_lines": FILE_LINES,
            "truncated": "[truncated: lines 3–5 of 12 shown. Read forgejo://repo/acme/widgets/contents/src/lib.rs?ref=v1.2.0&start_line=6 for the next lines.]"
        })
    );
    let request = only(forge.requests(), "/repos/acme/widgets/contents/src/lib.rs");
    assert_eq!(request.query("ref"), Some("v1.2.0"));

    // Without a range, a short file is shown whole.
    let whole = server
        .read_blocks("forgejo://repo/acme/widgets/contents/src/lib.rs")
        .await;
    assert_eq!(crate::support::enveloped(&whole[1].1).1, lib_rs());
    let file: Value = serde_json::from_str(&whole[0].1).unwrap();
    assert_eq!(
        (
            file["start_line"].clone(),
            file["end_line"].clone(),
            file["total_lines"].clone()
        ),
        (json!(1), json!(12), json!(12))
    );
    assert!(file.get("truncated").is_none(), "{file}");

    let (code, _) = server
        .read_error("forgejo://repo/acme/widgets/contents/src/lib.rs?start_line=13")
        .await;
    assert_eq!(code, -32602, "a start past the end is the caller's mistake");
    server.stop().await;
}

#[tokio::test]
async fn a_directory_is_a_bounded_listing_with_its_sentinel() {
    let (forge, server) = start().await;
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/contents/src")
        .await;
    assert_eq!(blocks.len(), 1, "no text block for a directory: {blocks:?}");
    let page: Value = serde_json::from_str(&blocks[0].1).unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 30);
    assert_eq!(
        page["items"][0],
        json!({"name": "mod_01.rs", "path": "src/mod_01.rs", "type": "file", "size": 101,
               "sha": "3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c"})
    );
    assert_eq!(page["total_count"], SRC_ENTRIES);
    assert_eq!(
        page["next"],
        "forgejo://repo/acme/widgets/contents/src?page=2&limit=30"
    );
    assert_eq!(
        page["truncated"],
        "[truncated: 30 of 35 items shown. Use list_repo_contents tool with path=src, page=2 and limit=30 to fetch more.]"
    );
    let rest = server.read_json(page["next"].as_str().unwrap()).await;
    assert_eq!(
        field(&rest, "name"),
        (31..=35)
            .map(|i| json!(format!("mod_{i}.rs")))
            .collect::<Vec<_>>()
    );
    assert!(forge.requests().iter().all(|r| r.query("page").is_none()));

    let root = server
        .read_json("forgejo://repo/acme/widgets/contents?ref=main")
        .await;
    assert_eq!(
        field(&root, "path"),
        [json!("README.md"), json!("assets"), json!("src")]
    );
    assert_eq!(
        field(&root, "type"),
        [json!("file"), json!("dir"), json!("dir")]
    );
    let request = only(forge.requests(), "/repos/acme/widgets/contents");
    assert_eq!(request.query("ref"), Some("main"));
    server.stop().await;
}

#[tokio::test]
async fn a_binary_file_is_described_not_shown() {
    let (_forge, server) = start().await;
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/contents/assets/logo.png")
        .await;
    assert_eq!(blocks.len(), 1, "no text block: {blocks:?}");
    let file: Value = serde_json::from_str(&blocks[0].1).unwrap();
    assert_eq!(
        file,
        json!({
            "name": "logo.png", "path": "assets/logo.png", "type": "file", "size": 11,
            "sha": "3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c",
            "note": "The content is not text (binary, or not UTF-8) and is not shown."
        })
    );
    server.stop().await;
}
