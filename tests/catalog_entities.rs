//! The catalog's entity resources through the binary: owner, repository, issue, pull request,
//! comment, webhooks, wiki page, branch protection rule, release, milestone and branch.

use serde_json::{Value, json};

use crate::support::catalog_world::{
    self, HOOK_SECRETS, ISSUE_COMMENTS, PR_COMMENTS, PR_REVIEWS, WIKI_HOME, WIKI_REVISIONS,
    long_body,
};
use crate::support::fake_forge::{GOOD_TOKEN, Logged};
use crate::support::{Launch, Server};

/// The text of the block with `mime`, failing when there is none or more than one.
fn block<'a>(blocks: &'a [(String, String)], mime: &str) -> &'a str {
    let found: Vec<&(String, String)> = blocks.iter().filter(|(m, _)| m == mime).collect();
    assert_eq!(found.len(), 1, "one {mime} block in {blocks:?}");
    &found[0].1
}

fn json_block(blocks: &[(String, String)]) -> Value {
    serde_json::from_str(block(blocks, "application/json")).unwrap()
}

/// The paths requested, in order.
fn paths(log: &[Logged]) -> Vec<String> {
    log.iter().map(|r| r.path.clone()).collect()
}

fn ids(list: &Value) -> Vec<u64> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|c| c["id"].as_u64().unwrap())
        .collect()
}

async fn start() -> (crate::support::FakeForge, Server) {
    let forge = catalog_world::forge().await;
    let server = Launch::new(&forge).start().await;
    (forge, server)
}

#[tokio::test]
async fn an_organization_resolves_from_the_org_lookup_alone() {
    let (forge, server) = start().await;
    let owner = server.read_json("forgejo://owner/acme").await;
    assert_eq!(
        owner,
        json!({
            "login": "acme", "full_name": "Acme Widgets Ltd", "kind": "organization",
            "description": "Makers of fine widgets", "website": "https://acme.example.org",
            "location": "Leeds", "avatar_url": "http://fake/avatars/21"
        })
    );
    // `/users/acme` would also have answered (as a user): it must not be asked.
    assert_eq!(paths(&forge.requests()), ["/orgs/acme"]);
    server.stop().await;
}

#[tokio::test]
async fn a_user_resolves_after_the_org_lookup_is_not_found() {
    let (forge, server) = start().await;
    let owner = server.read_json("forgejo://owner/alice").await;
    assert_eq!(owner["kind"], "user");
    assert_eq!(owner["login"], "alice");
    assert_eq!(owner["full_name"], "Alice Liddell");
    // An organization's object carries neither, so the owner answer promises neither.
    assert!(owner.get("created_at").is_none(), "{owner}");
    assert!(owner.get("html_url").is_none(), "{owner}");
    assert_eq!(paths(&forge.requests()), ["/orgs/alice", "/users/alice"]);

    forge.clear_log();
    let (code, data) = server.read_error("forgejo://owner/nobody").await;
    assert_eq!(
        (code, data),
        (
            -32003,
            json!({"uri": "forgejo://owner/nobody", "reason": "not_found", "upstream_status": 404})
        )
    );
    assert_eq!(paths(&forge.requests()), ["/orgs/nobody", "/users/nobody"]);
    server.stop().await;
}

#[tokio::test]
async fn a_repository_has_its_facts_and_no_embedded_lists() {
    let (_forge, server) = start().await;
    let blocks = server.read_blocks("forgejo://repo/acme/widgets").await;
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert_eq!(
        json_block(&blocks),
        json!({
            "full_name": "acme/widgets", "owner": "acme", "description": "The widget library",
            "website": "", "language": "Rust", "topics": ["widgets", "cache"],
            "default_branch": "main", "visibility": "public", "archived": false, "empty": false,
            "template": false, "fork": false, "parent": null, "mirror": false,
            "permissions": {"admin": false, "push": true, "pull": true},
            "units": {"issues": true, "pull_requests": true, "wiki": true, "releases": true,
                      "actions": false},
            "merge_styles": {"merge": true, "rebase": false, "rebase-merge": false,
                             "squash": true, "fast-forward-only": false},
            "default_merge_style": "squash",
            "created_at": "2024-01-05T09:30:00Z",
            "updated_at": "2026-11-20T14:05:00Z", "open_issues_count": 4, "open_pr_count": 2,
            "stars_count": 17, "forks_count": 3, "html_url": "http://fake/acme/widgets",
            "clone_url": "http://fake/acme/widgets.git", "ssh_url": "git@fake:acme/widgets.git"
        })
    );
    server.stop().await;
}

#[tokio::test]
async fn an_issue_embeds_the_newest_30_comments_with_a_sentinel_and_a_markdown_block() {
    let (forge, server) = start().await;
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/issue/12")
        .await;
    let mimes: Vec<&str> = blocks.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(mimes, ["application/json", "text/markdown"]);
    let issue = json_block(&blocks);
    assert_eq!(issue["index"], 12);
    assert_eq!(issue["title"], "The widget cache grows without bound");
    assert_eq!(issue["labels"], json!(["kind/bug", "area/cache"]));
    assert_eq!(issue["assignees"], json!(["bob"]));
    assert_eq!(issue["milestone"], "1.3");
    assert_eq!(issue["author"], "alice");
    assert_eq!(issue["comments_count"], ISSUE_COMMENTS);
    assert_eq!(issue["is_pull"], false);

    // The thread has 45 comments, oldest first: the newest 30 are 1016..=1045.
    let shown = ids(&issue["recent_comments"]);
    assert_eq!(shown, (1016..=1045).collect::<Vec<u64>>());
    assert_eq!(
        issue["recent_comments_truncated"],
        "[truncated: the newest 30 of 45 items shown. Use list_issue_comments tool with page=1 and limit=15 to fetch the 15 older ones.]"
    );
    let first = &issue["recent_comments"][0];
    assert_eq!(
        first,
        &json!({"id": 1016, "author": "alice", "created_at": "2026-10-03T15:00:00Z",
                "body_excerpt": "Comment 16 on #12"})
    );
    let last = issue["recent_comments"][29]["body_excerpt"]
        .as_str()
        .unwrap();
    assert_eq!(
        last.chars().count(),
        280,
        "an excerpt is at most 280 characters"
    );
    assert!(last.ends_with('…') && long_body().starts_with(last.trim_end_matches('…')));

    assert_eq!(
        crate::support::enveloped(block(&blocks, "text/markdown")).1,
        "# The widget cache grows without bound\n\nAfter a long session the cache holds every widget ever rendered.\n\nSteps: open 10 000 widgets, watch the memory."
    );
    // The thread is asked for whole: the forge ignores paging there.
    let thread: Vec<Logged> = forge
        .requests()
        .into_iter()
        .filter(|r| r.path == "/repos/acme/widgets/issues/12/comments")
        .collect();
    assert_eq!(thread.len(), 1);
    assert!(thread[0].query.is_empty(), "{:?}", thread[0].query);
    server.stop().await;
}

#[tokio::test]
async fn a_short_thread_is_embedded_whole_without_a_sentinel() {
    let (_forge, server) = start().await;
    let issue = server
        .read_json("forgejo://repo/acme/widgets/issue/3")
        .await;
    assert_eq!(ids(&issue["recent_comments"]), [1101, 1102]);
    assert!(issue.get("recent_comments_truncated").is_none(), "{issue}");
    server.stop().await;
}

#[tokio::test]
async fn a_pull_request_caps_comments_and_reviews_each_with_its_own_sentinel() {
    let (_forge, server) = start().await;
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/pr/14")
        .await;
    let pr = json_block(&blocks);
    assert_eq!(pr["index"], 14);
    assert_eq!(pr["author"], "bob");
    assert_eq!(
        pr["head"],
        json!({"label": "bob:bounded-cache", "ref": "bounded-cache", "sha": "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
               "repo": "bob/widgets"})
    );
    assert_eq!(pr["base"]["ref"], "main");
    assert_eq!(
        (
            pr["merged"].clone(),
            pr["mergeable"].clone(),
            pr["draft"].clone()
        ),
        (json!(false), json!(true), json!(false))
    );
    assert_eq!(
        (
            pr["additions"].clone(),
            pr["deletions"].clone(),
            pr["changed_files"].clone()
        ),
        (json!(120), json!(15), json!(3))
    );
    assert_eq!(pr["comments_count"], PR_COMMENTS);

    assert_eq!(
        ids(&pr["recent_comments"]),
        (2004..=2033).collect::<Vec<u64>>()
    );
    assert_eq!(
        pr["recent_comments_truncated"],
        "[truncated: the newest 30 of 33 items shown. Use list_issue_comments tool with page=1 and limit=3 to fetch the 3 older ones.]"
    );
    assert_eq!(pr["recent_reviews"].as_array().unwrap().len(), 30);
    assert_eq!(
        pr["recent_reviews_truncated"],
        "[truncated: the newest 30 of 35 items shown. Use list_pull_reviews tool with page=1 and limit=5 to fetch the 5 older ones.]"
    );
    assert_eq!(
        crate::support::enveloped(block(&blocks, "text/markdown")).1,
        "# Bound the widget cache by entry count\n\nKeeps at most 1024 entries.\n\nFixes #12"
    );
    server.stop().await;
}

#[tokio::test]
async fn pull_request_reviews_keep_the_newest_by_fetching_the_tail_page() {
    let (forge, server) = start().await;
    let pr = server.read_json("forgejo://repo/acme/widgets/pr/14").await;
    // 35 reviews, oldest first: the newest 30 are 3006..=3035, the last one approving.
    assert_eq!(
        ids(&pr["recent_reviews"]),
        (3006..=3035).collect::<Vec<u64>>()
    );
    assert_eq!(
        pr["recent_reviews"][29],
        json!({"id": 3035, "reviewer": "alice", "state": "APPROVED",
               "submitted_at": "2026-11-08T10:00:00Z", "body_excerpt": "Review 35"})
    );
    let pages: Vec<(Option<String>, Option<String>)> = forge
        .requests()
        .iter()
        .filter(|r| r.path == "/repos/acme/widgets/pulls/14/reviews")
        .map(|r| {
            (
                r.query("page").map(str::to_owned),
                r.query("limit").map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        pages,
        [
            (Some("1".into()), Some("30".into())),
            (Some("2".into()), Some("30".into()))
        ],
        "page 1 first (it tells the total), then the tail page"
    );
    assert_eq!(PR_REVIEWS, 35);
    server.stop().await;
}

#[tokio::test]
async fn a_comment_resolves_under_its_own_parent() {
    let (forge, server) = start().await;
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/issue/12/comment/1005")
        .await;
    assert_eq!(
        json_block(&blocks),
        json!({
            "id": 1005, "kind": "issue", "index": 12, "author": "bob", "body": "Comment 5 on #12",
            "created_at": "2026-10-03T04:00:00Z", "updated_at": "2026-10-03T04:00:00Z",
            "html_url": "http://fake/acme/widgets/issues/12#issuecomment-1005"
        })
    );
    let (open, inner) = crate::support::enveloped(block(&blocks, "text/markdown"));
    assert_eq!(inner, "Comment 5 on #12");
    assert!(
        open.ends_with(
            " kind=\"comment\" author=\"bob\" uri=\"forgejo://repo/acme/widgets/issue/12/comment/1005\">"
        ),
        "{open}"
    );
    assert_eq!(
        paths(&forge.requests()),
        ["/repos/acme/widgets/issues/comments/1005"]
    );
    let pr = server
        .read_json("forgejo://repo/acme/widgets/pr/14/comment/2001")
        .await;
    assert_eq!(
        (pr["id"].clone(), pr["kind"].clone(), pr["index"].clone()),
        (json!(2001), json!("pr"), json!(14))
    );
    server.stop().await;
}

#[tokio::test]
async fn a_comment_under_the_wrong_parent_is_not_found() {
    let (_forge, server) = start().await;
    for uri in [
        // An issue comment under another issue, or under a pull request.
        "forgejo://repo/acme/widgets/issue/13/comment/1005",
        "forgejo://repo/acme/widgets/issue/1/comment/1005",
        "forgejo://repo/acme/widgets/pr/12/comment/1005",
        // A pull request comment under an issue, or under another pull request.
        "forgejo://repo/acme/widgets/issue/14/comment/2001",
        "forgejo://repo/acme/widgets/pr/4/comment/2001",
    ] {
        let (code, data) = server.read_error(uri).await;
        assert_eq!(code, -32003, "{uri}");
        assert_eq!(data["reason"], "not_found", "{uri}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_kind_other_than_issue_or_pr_is_refused_before_any_request() {
    let (forge, server) = start().await;
    for uri in [
        "forgejo://repo/acme/widgets/mr/12/comment/1005",
        "forgejo://repo/acme/widgets/pull/14/comment/2001",
        "forgejo://repo/acme/widgets/ISSUE/12/comment/1005",
        "forgejo://repo/acme/widgets/mr/12/comments",
        "forgejo://repo/acme/widgets/issues/12/comments",
    ] {
        let (code, data) = server.read_error(uri).await;
        assert_eq!(code, -32602, "{uri}");
        assert_eq!(data["reason"], "invalid_params", "{uri}");
    }
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());
    server.stop().await;
}

#[tokio::test]
async fn a_hook_secret_never_appears_in_any_output() {
    let forge = catalog_world::forge().await;
    // With a token too: nothing depends on who asks.
    let server = Launch::new(&forge).token(GOOD_TOKEN).spawn().await;
    let mut outputs = Vec::new();
    let hook = server
        .read_blocks("forgejo://repo/acme/widgets/hook/5")
        .await;
    let h = json_block(&hook);
    assert_eq!(
        h,
        json!({
            "id": 5, "type": "forgejo", "active": true,
            "url": "https://ci.acme.example.org/hooks/widgets", "content_type": "json",
            "http_method": "post", "events": ["push", "pull_request"], "branch_filter": "main",
            "created_at": "2025-03-01T10:00:00Z", "updated_at": "2026-11-01T10:00:00Z"
        })
    );
    outputs.extend(hook.into_iter().map(|(_, t)| t));
    let hooks = server
        .read_blocks("forgejo://repo/acme/widgets/hooks")
        .await;
    let list = json_block(&hooks);
    assert_eq!(ids(&list["items"]), [5, 6]);
    assert_eq!(
        list["items"][0]["url"],
        "https://ci.acme.example.org/hooks/widgets"
    );
    outputs.extend(hooks.into_iter().map(|(_, t)| t));
    let tool = server
        .call_ok(
            "list_repo_hooks",
            json!({"owner": "acme", "repo": "widgets"}),
        )
        .await;
    assert_eq!(ids(&tool["items"]), [5, 6]);
    outputs.push(tool.to_string());
    outputs.push(server.finish().await);
    for output in &outputs {
        for secret in HOOK_SECRETS {
            assert!(!output.contains(secret), "`{secret}` leaked into: {output}");
        }
    }
    // The forge did send them: the test would catch a leak.
    let hook_answer = std::fs::read_to_string(format!(
        "{}/tests/fixtures/catalog/hook.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(HOOK_SECRETS.iter().all(|s| hook_answer.contains(s)));
}

#[tokio::test]
async fn a_wiki_page_is_its_decoded_markdown_with_its_newest_revisions_one_forge_page() {
    let (forge, server) = start().await;
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/wiki/Home")
        .await;
    assert_eq!(
        crate::support::enveloped(block(&blocks, "text/markdown")).1,
        WIKI_HOME
    );
    let page = json_block(&blocks);
    assert_eq!(page["title"], "Home");
    assert_eq!(
        (
            &page["page_name"],
            &page["last_commit_sha"],
            &page["last_author"],
            &page["last_changed_at"],
            &page["last_message"]
        ),
        (
            &json!("Home"),
            &json!("5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d01"),
            &json!("Alice Liddell"),
            &json!("2026-11-18T10:00:00Z"),
            &json!("Explain the cache settings")
        )
    );
    let revisions = page["revisions"].as_array().unwrap();
    // The forge pages revisions by a fixed 50, newest first: the embed is its first page, so
    // the sentinel's next page is the forge's own page 2.
    assert_eq!(revisions.len(), 50);
    assert_eq!(revisions[0]["subject"], "Revision 60 of Home");
    assert_eq!(revisions[49]["subject"], "Revision 11 of Home");
    assert!(
        page.get("content_base64").is_none(),
        "the JSON block does not repeat the page"
    );
    // The forge's `count` is the length of the history, not the 50 rows of its answer.
    assert_eq!(
        page["revisions_truncated"],
        format!(
            "[truncated: 50 of {WIKI_REVISIONS} items shown. Use get_wiki_revisions tool (through call_read_tool) with page=2 and limit=50 to fetch more.]"
        )
    );
    // One answer of the forge's fixed page size is all the embed needs.
    let asked: Vec<Logged> = forge
        .requests()
        .into_iter()
        .filter(|r| r.path == "/repos/acme/widgets/wiki/revisions/Home")
        .collect();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].query.is_empty(), "{:?}", asked[0].query);
    server.stop().await;
}

#[tokio::test]
async fn a_wiki_page_over_the_markdown_cap_is_cut_with_a_marker() {
    let (_forge, server) = start().await;
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/wiki/Huge")
        .await;
    let markdown = crate::support::enveloped(block(&blocks, "text/markdown")).1;
    assert!(
        markdown.ends_with(
            "[truncated: markdown cut at 20000 of 25000 characters; the JSON block has the fields.]"
        ),
        "{}",
        &markdown[markdown.len().saturating_sub(200)..]
    );
    assert!(markdown.starts_with(&"x".repeat(20_000)));
    assert!(json_block(&blocks).get("revisions_truncated").is_none());
    server.stop().await;
}

#[tokio::test]
async fn a_branch_protection_rule_is_read_by_name_even_with_a_slash() {
    let (forge, server) = start().await;
    let main = server
        .read_json("forgejo://repo/acme/widgets/branch_protection/main")
        .await;
    assert_eq!(main["rule_name"], "main");
    assert_eq!(main["push_whitelist_usernames"], json!(["alice"]));
    assert_eq!(main["status_check_contexts"], json!(["ci/build"]));
    assert_eq!(main["required_approvals"], 1);
    let release = server
        .read_json("forgejo://repo/acme/widgets/branch_protection/release/*")
        .await;
    assert_eq!(
        (
            release["rule_name"].clone(),
            release["required_approvals"].clone()
        ),
        (json!("release/*"), json!(2))
    );
    // A rule name is one path segment upstream.
    assert_eq!(
        forge.requests()[1].path,
        "/repos/acme/widgets/branch_protections/release%2F%2A"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_release_is_read_by_tag_with_its_notes_as_markdown() {
    let (forge, server) = start().await;
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/release/v1.2.0")
        .await;
    let release = json_block(&blocks);
    assert_eq!(
        (
            release["id"].clone(),
            release["tag_name"].clone(),
            release["target_commitish"].clone()
        ),
        (json!(42), json!("v1.2.0"), json!("main"))
    );
    assert_eq!(release["assets"], json!([]));
    assert_eq!(
        crate::support::enveloped(block(&blocks, "text/markdown")).1,
        "# Widgets 1.2.0\n\n## Changes\n\n- Bounded the widget cache\n- Faster start-up\n"
    );
    let team = server
        .read_json("forgejo://repo/acme/widgets/release/team/v2.0")
        .await;
    assert_eq!(
        (team["tag_name"].clone(), team["prerelease"].clone()),
        (json!("team/v2.0"), json!(true))
    );
    assert_eq!(
        forge.requests()[1].path,
        "/repos/acme/widgets/releases/tags/team%2Fv2.0"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_milestone_is_read_by_id() {
    let (_forge, server) = start().await;
    let milestone = server
        .read_json("forgejo://repo/acme/widgets/milestone/1")
        .await;
    assert_eq!(
        milestone,
        json!({
            "id": 1, "title": "1.3", "description": "Cache work and start-up speed",
            "state": "open", "open_issues": 3, "closed_issues": 5,
            "due_on": "2026-12-31T23:59:59Z", "created_at": "2026-09-01T10:00:00Z",
            "updated_at": "2026-11-01T10:00:00Z", "closed_at": null
        })
    );
    server.stop().await;
}

#[tokio::test]
async fn a_branch_is_read_by_name_even_with_a_slash() {
    let (forge, server) = start().await;
    let main = server
        .read_json("forgejo://repo/acme/widgets/branch/main")
        .await;
    assert_eq!(
        main,
        json!({
            "name": "main",
            "commit_sha": "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
            "commit_subject": "Bound the widget cache by entry count", "commit_author": "Alice Liddell",
            "commit_date": "2026-11-20T14:03:11Z",
            "protected": true, "protection_rule": "main", "required_approvals": 1,
            "status_check_contexts": ["ci/build"], "user_can_push": false, "user_can_merge": true
        })
    );
    let feature = server
        .read_json("forgejo://repo/acme/widgets/branch/feature/login")
        .await;
    assert_eq!(feature["name"], "feature/login");
    assert_eq!(feature["commit_subject"], "Log in with a token");
    assert_eq!(
        forge.requests()[1].path,
        "/repos/acme/widgets/branches/feature/login"
    );
    server.stop().await;
}
