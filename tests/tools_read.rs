//! The read tools of every toolset, through the binary against the tool world: the upstream
//! request each makes (path and query) and the projection it returns.

use serde_json::{Value, json};

use crate::support::fake_forge::Logged;
use crate::support::fixtures::{SHA, SHA_FEW};
use crate::support::tool_world::{self, HOOK_AUTH, HOOK_SECRET};
use crate::support::{FakeForge, Launch, Server};

/// Calls `tool` expecting success and exactly one upstream request; returns both.
async fn call(server: &Server, forge: &FakeForge, tool: &str, args: Value) -> (Value, Logged) {
    forge.clear_log();
    let out = server.call_ok(tool, args).await;
    let log = forge.requests();
    assert_eq!(log.len(), 1, "{tool}: {log:?}");
    (out, log[0].clone())
}

/// One read and what it must do.
struct Case {
    tool: &'static str,
    args: Value,
    path: String,
    /// Query pairs the request must carry.
    query: Vec<(&'static str, &'static str)>,
    /// Query names the request must not carry.
    no_query: Vec<&'static str>,
    /// JSON pointers into the result and their expected values (`null`: null or absent).
    expect: Vec<(&'static str, Value)>,
}

fn case(tool: &'static str, args: Value, path: &str) -> Case {
    Case {
        tool,
        args,
        path: path.to_owned(),
        query: Vec::new(),
        no_query: Vec::new(),
        expect: Vec::new(),
    }
}

impl Case {
    fn query(mut self, pairs: &[(&'static str, &'static str)]) -> Case {
        self.query.extend_from_slice(pairs);
        self
    }

    /// `name` is not sent.
    fn absent(mut self, name: &'static str) -> Case {
        self.no_query.push(name);
        self
    }

    /// The endpoint ignores paging: neither `page` nor `limit` is sent.
    fn unpaged(mut self) -> Case {
        self.no_query.extend(["page", "limit"]);
        self
    }

    fn expect(mut self, pointer: &'static str, value: Value) -> Case {
        self.expect.push((pointer, value));
        self
    }
}

fn cases() -> Vec<Case> {
    let w = "/repos/acme/widgets";
    let ow = || json!({"owner": "acme", "repo": "widgets"});
    let with = |extra: Value| {
        let mut v = json!({"owner": "acme", "repo": "widgets"});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    vec![
        // user
        case("get_me", json!({}), "/user")
            .expect("/login", json!("alice"))
            .expect("/created_at", json!("2024-02-03T10:11:12Z"))
            .expect("/followers_count", json!(3)),
        case("list_user_followers", json!({"username": "alice"}), "/users/alice/followers")
            .query(&[("page", "1"), ("limit", "30")])
            .expect("/items/0/login", json!("bob"))
            .expect("/total_count", json!(2))
            .expect("/has_more", json!(false)),
        // notifications
        case(
            "list_notifications",
            json!({"all": true, "status": "unread", "subject_type": "issue", "since": "2026-11-01T00:00:00Z"}),
            "/notifications",
        )
        .query(&[
            ("all", "true"),
            ("status-types", "unread"),
            ("subject-type", "issue"),
            ("since", "2026-11-01T00:00:00Z"),
        ])
        .expect("/items/0/subject_title", json!("Widget cache grows without bound"))
        .expect("/items/0/subject_type", json!("Issue"))
        .expect("/items/0/repository", json!("acme/widgets")),
        case("get_unread_notification_count", json!({}), "/notifications/new")
            .expect("/unread", json!(2)),
        // search
        case(
            "search_repos",
            json!({"q": "widg", "include_description": true, "sort": "stars", "order": "desc"}),
            "/repos/search",
        )
        .query(&[("q", "widg"), ("includeDesc", "true"), ("sort", "stars"), ("order", "desc")])
        .expect("/items/0/full_name", json!("acme/widgets"))
        .expect("/items/0/open_pr_count", json!(2))
        .expect("/total_count", json!(3)),
        case(
            "search_issues",
            json!({"q": "cache", "labels": ["kind/bug", "priority/high"], "type": "issues"}),
            "/repos/issues/search",
        )
        .query(&[("q", "cache"), ("labels", "kind/bug,priority/high"), ("type", "issues")])
        .expect("/items/0/repository", json!("acme/widgets"))
        .expect("/items/0/labels", json!(["kind/bug", "priority/high"]))
        .expect("/items/0/pull_request", Value::Null),
        case("search_teams", json!({"org": "acme", "q": "main"}), "/orgs/acme/teams/search")
            .query(&[("q", "main")])
            .expect("/items/0/name", json!("maintainers")),
        case("search_topics", json!({"q": "widget"}), "/topics/search")
            .expect("/items/0/name", json!("widgets"))
            .expect("/items/0/repo_count", json!(4)),
        // repos
        case("get_repo", ow(), w)
            .expect("/owner", json!("acme"))
            .expect("/permissions/push", json!(true))
            .expect("/open_pr_count", json!(2))
            .expect("/topics", json!(["widgets", "rust"]))
            .expect("/parent", Value::Null),
        case("list_repo_topics", ow(), &format!("{w}/topics"))
            .expect("/items", json!([{"name": "widgets"}, {"name": "rust"}])),
        case("list_repo_languages", ow(), &format!("{w}/languages"))
            .expect("/Rust", json!(40960)),
        case(
            "get_repo_permission",
            with(json!({"collaborator": "bob"})),
            &format!("{w}/collaborators/bob/permission"),
        )
        .expect("/login", json!("bob"))
        .expect("/permission", json!("write")),
        case("list_repo_assignees", ow(), &format!("{w}/assignees"))
            .unpaged()
            .expect("/items/1/login", json!("bob"))
            .expect("/total_count", json!(3)),
        // branches and tags
        case("list_branches", ow(), &format!("{w}/branches"))
            .expect("/items/0/commit_sha", json!(SHA))
            .expect("/items/0/commit_subject", json!("Bound the widget cache by entry count"))
            .expect("/items/0/protected", json!(true))
            .expect("/items/1/name", json!("feature"))
            .expect("/total_count", json!(2)),
        case("list_branch_protections", ow(), &format!("{w}/branch_protections"))
            .unpaged()
            .expect("/items/0/rule_name", json!("main")),
        case(
            "get_branch_protection",
            with(json!({"name": "main"})),
            &format!("{w}/branch_protections/main"),
        )
        .expect("/merge_whitelist_teams", json!(["maintainers"]))
        .expect("/required_approvals", json!(1)),
        case("get_tag", with(json!({"tag": "v1.2.0"})), &format!("{w}/tags/v1.2.0"))
            .expect("/commit_sha", json!(SHA))
            .expect("/message", json!("Widgets 1.2\n")),
        // files
        case(
            "list_repo_contents",
            with(json!({"path": "src", "ref": "main"})),
            &format!("{w}/contents/src"),
        )
        .query(&[("ref", "main")])
        .unpaged()
        .expect("/items/0/path", json!("src/lib.rs"))
        .expect("/items/0/type", json!("file")),
        case("list_repo_root_contents", ow(), &format!("{w}/contents"))
            .unpaged()
            .expect("/items/0/type", json!("dir")),
        case(
            "get_file_metadata",
            with(json!({"path": "src/lib.rs"})),
            &format!("{w}/contents/src/lib.rs"),
        )
        .expect("/sha", json!("4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
        .expect("/last_commit_sha", json!(SHA))
        .expect("/content", Value::Null),
        case(
            "get_repo_tree",
            with(json!({"sha": "main", "recursive": true})),
            &format!("{w}/git/trees/main"),
        )
        .query(&[("recursive", "true"), ("page", "1"), ("per_page", "100")])
        .expect("/truncated", json!(true))
        .expect("/total_count", json!(7))
        .expect("/entries/1/path", json!("src")),
        // commits
        case("list_commits", with(json!({"sha": "main", "path": "src"})), &format!("{w}/commits"))
            .query(&[
                ("sha", "main"),
                ("path", "src"),
                ("stat", "false"),
                ("files", "false"),
                ("page", "1"),
                ("limit", "30"),
            ])
            .expect("/items/0/subject", json!("Bound the widget cache by entry count"))
            .expect("/items/0/author_login", json!("alice"))
            .expect("/items/0/parents", json!([SHA_FEW])),
        case("get_commit", with(json!({"sha": SHA})), &format!("{w}/git/commits/{SHA}"))
            .query(&[("stat", "true"), ("files", "false")])
            .expect("/author/login", json!("alice"))
            .expect("/subject", json!("Bound the widget cache by entry count")),
        case("get_combined_status", with(json!({"ref": "main"})), &format!("{w}/commits/main/status"))
            .expect("/items/0/context", json!("ci/job-1"))
            .expect("/items/0/creator_login", json!("ci-bot"))
            .expect("/total_count", json!(35))
            .expect("/has_more", json!(true))
            .expect("/next_page", json!(2)),
        case(
            "compare_commits",
            with(json!({"basehead": "main...feature"})),
            &format!("{w}/compare/main...feature"),
        )
        .unpaged()
        .expect("/items/0/sha", json!(SHA))
        .expect("/total_count", json!(1)),
        case("get_commit_pull_request", with(json!({"sha": SHA})), &format!("{w}/commits/{SHA}/pull"))
            .expect("/index", json!(12))
            .expect("/head", json!("bob:cache-bound")),
        // issues
        case(
            "list_repo_issues",
            with(json!({"state": "all", "labels": ["kind/bug"], "sort": "oldest"})),
            &format!("{w}/issues"),
        )
        .query(&[("type", "issues"), ("state", "all"), ("labels", "kind/bug"), ("sort", "oldest")])
        .expect("/items/0/labels", json!(["kind/bug", "priority/high"]))
        .expect("/items/0/assignees", json!(["bob"]))
        .expect("/items/0/milestone", json!("v1.3"))
        .expect("/items/0/author", json!("alice"))
        .expect("/items/0/body", Value::Null)
        .expect("/items/1/state", json!("closed"))
        .expect("/total_count", json!(2)),
        case("get_issue", with(json!({"index": 12})), &format!("{w}/issues/12"))
            .expect("/title", json!("Widget cache grows without bound"))
            .expect("/body", json!("After a long session the widget cache holds every widget ever rendered.\n\nSteps: open 10k widgets."))
            .expect("/comments_count", json!(3)),
        case("list_issue_timeline", with(json!({"index": 12})), &format!("{w}/issues/12/timeline"))
            .expect("/items/0/type", json!("label"))
            .expect("/items/0/label", json!("kind/bug"))
            .expect("/items/0/actor", json!("alice")),
        case("list_issue_reactions", with(json!({"index": 12})), &format!("{w}/issues/12/reactions"))
            .expect("/items/0/content", json!("+1"))
            .expect("/items/0/user", json!("bob")),
        case("list_issue_dependencies", with(json!({"index": 12})), &format!("{w}/issues/12/dependencies"))
            .expect("/items/0/index", json!(12)),
        // labels and milestones
        case("get_repo_label", with(json!({"id": 5})), &format!("{w}/labels/5"))
            .expect("/name", json!("kind/bug"))
            .expect("/color", json!("d73a4a")),
        case("get_org_label", json!({"org": "acme", "id": 5}), "/orgs/acme/labels/5")
            .expect("/name", json!("kind/bug")),
        case("list_issue_labels", with(json!({"index": 12})), &format!("{w}/issues/12/labels"))
            .unpaged()
            .expect("/items/1/name", json!("priority/high"))
            .expect("/items/1/exclusive", json!(true)),
        case("list_repo_milestones", with(json!({"state": "all"})), &format!("{w}/milestones"))
            .query(&[("state", "all")])
            .expect("/items/0/title", json!("v1.3"))
            .expect("/items/0/open_issues", json!(3)),
        // pulls and reviews
        case("get_pull_request", with(json!({"index": 12})), &format!("{w}/pulls/12"))
            .expect("/head/label", json!("bob:cache-bound"))
            .expect("/head/repo", json!("bob/widgets"))
            .expect("/base/ref", json!("main"))
            .expect("/requested_reviewers", json!(["alice"]))
            .expect("/assignees", json!([]))
            .expect("/merged", json!(false))
            .expect("/additions", json!(40)),
        case(
            "list_repo_pull_requests",
            with(json!({"state": "open", "label": 335058, "poster": "bob"})),
            &format!("{w}/pulls"),
        )
        .query(&[("state", "open"), ("labels", "335058"), ("poster", "bob")])
        .expect("/items/0/head", json!("bob:cache-bound"))
        .expect("/items/0/author", json!("bob")),
        case(
            "get_pull_request_by_branches",
            with(json!({"base": "main", "head": "feature"})),
            &format!("{w}/pulls/main/feature"),
        )
        .expect("/index", json!(12)),
        case(
            "list_pull_request_files",
            with(json!({"index": 12, "whitespace": "ignore-all"})),
            &format!("{w}/pulls/12/files"),
        )
        .query(&[("whitespace", "ignore-all")])
        .expect("/items/0/filename", json!("src/cache.rs"))
        .expect("/items/0/additions", json!(30)),
        case("list_pull_reviews", with(json!({"index": 12})), &format!("{w}/pulls/12/reviews"))
            .expect("/items/0/reviewer", json!("alice"))
            .expect("/items/0/state", json!("REQUEST_CHANGES")),
        case(
            "list_pull_review_comments",
            with(json!({"index": 12, "id": 5})),
            &format!("{w}/pulls/12/reviews/5/comments"),
        )
        .unpaged()
        .expect("/items/0/path", json!("src/cache.rs"))
        .expect("/items/0/line", json!(12)),
        // actions
        case(
            "list_action_runs",
            with(json!({"status": "success", "event": "push"})),
            &format!("{w}/actions/runs"),
        )
        .query(&[("status", "success"), ("event", "push")])
        .expect("/items/0/run_number", json!(118))
        .expect("/items/0/trigger_user", json!("bob"))
        .expect("/items/0/workflow_id", json!("ci.yml"))
        .expect("/total_count", json!(1)),
        case("list_action_tasks", ow(), &format!("{w}/actions/tasks"))
            .expect("/items/0/status", json!("failure"))
            .expect("/items/0/run_number", json!(118)),
        case("list_repo_action_secrets", ow(), &format!("{w}/actions/secrets"))
            .expect("/items/0/name", json!("REGISTRY_TOKEN")),
        case(
            "get_repo_action_variable",
            with(json!({"variable_name": "DEPLOY_ENV"})),
            &format!("{w}/actions/variables/DEPLOY_ENV"),
        )
        .expect("/value", json!("staging")),
        // orgs and teams
        case("get_org", json!({"org": "acme"}), "/orgs/acme")
            .expect("/name", json!("acme"))
            .expect("/visibility", json!("public")),
        case(
            "get_user_org_permissions",
            json!({"username": "alice", "org": "acme"}),
            "/users/alice/orgs/acme/permissions",
        )
        .expect("/is_owner", json!(true)),
        case("get_team", json!({"id": 5}), "/teams/5")
            .expect("/organization", json!("acme"))
            .expect("/units", json!(["repo.code", "repo.issues", "repo.pulls"])),
        case("list_team_repos", json!({"id": 5}), "/teams/5/repos")
            .expect("/items/1/full_name", json!("acme/gadgets")),
        // releases
        case(
            "list_releases",
            with(json!({"draft": false, "prerelease": false})),
            &format!("{w}/releases"),
        )
        .query(&[("draft", "false"), ("pre-release", "false")])
        .expect("/items/0/assets", json!(["widgets-1.2.0-linux-amd64.tar.gz"]))
        .expect("/items/0/author", json!("alice"))
        .expect("/items/0/body", Value::Null),
        case(
            "get_release_by_tag",
            with(json!({"tag": "v1.2.0"})),
            &format!("{w}/releases/tags/v1.2.0"),
        )
        .expect("/body", json!("## Changes\n\n- Faster rendering\n- Bounded cache")),
        case("list_release_attachments", with(json!({"id": 5})), &format!("{w}/releases/5/assets"))
            .unpaged()
            .expect("/items/0/download_count", json!(41)),
        // wiki
        case("get_wiki_page", with(json!({"page_name": "Home"})), &format!("{w}/wiki/page/Home"))
            .expect("/commit_count", json!(4))
            .expect("/last_message", json!("Describe the cache"))
            .expect("/content_base64", Value::Null),
        case(
            "get_wiki_revisions",
            with(json!({"page_name": "Home"})),
            &format!("{w}/wiki/revisions/Home"),
        )
        // The forge's page size is fixed: only `page` is sent.
        .query(&[("page", "1")])
        .absent("limit")
        .expect("/items/0/sha", json!("rev-1"))
        .expect("/items/0/subject", json!("Describe the cache")),
        // time
        case(
            "list_issue_tracked_times",
            with(json!({"index": 12, "user": "bob"})),
            &format!("{w}/issues/12/times"),
        )
        .query(&[("user", "bob")])
        .expect("/items/0/seconds", json!(5400))
        .expect("/items/0/issue_index", json!(12)),
        case("list_my_stopwatches", json!({}), "/user/stopwatches")
            .expect("/items/0/repository", json!("widgets"))
            .expect("/items/0/seconds", json!(1260)),
        // hooks
        case("list_repo_hooks", ow(), &format!("{w}/hooks"))
            .expect("/items/0/url", json!("https://ci.example.org/hooks/widgets"))
            .expect("/items/0/events", json!(["push", "pull_request"])),
        // misc
        case("get_version", json!({}), "/version").expect("/version", json!("15.0.3+gitea-1.22.0")),
        case("list_gitignore_templates", json!({}), "/gitignore/templates")
            .unpaged()
            .expect("/items", json!([{"name": "Rust"}, {"name": "Go"}])),
    ]
}

#[tokio::test]
async fn every_toolset_reads_through_its_projection() {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).full().start().await;
    let tools = server.client.list_all_tools().await.unwrap();
    let mut toolsets_seen = std::collections::BTreeSet::new();
    for c in cases() {
        let (out, request) = call(&server, &forge, c.tool, c.args.clone()).await;
        let tool = tools.iter().find(|t| t.name == c.tool).unwrap();
        toolsets_seen.insert(tool_toolset(c.tool));
        assert_eq!(request.method, "GET", "{}", c.tool);
        assert_eq!(request.path, c.path, "{}", c.tool);
        for (k, v) in &c.query {
            assert_eq!(
                request.query(k),
                Some(*v),
                "{}: query `{k}` in {:?}",
                c.tool,
                request.query
            );
        }
        for k in &c.no_query {
            assert_eq!(
                request.query(k),
                None,
                "{}: query `{k}` in {:?}",
                c.tool,
                request.query
            );
        }
        for (pointer, expected) in &c.expect {
            let got = out.pointer(pointer).unwrap_or(&Value::Null);
            assert_eq!(got, expected, "{} {pointer} in {out}", c.tool);
        }
        if let Some(schema) = &tool.output_schema {
            for key in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let key = key.as_str().unwrap();
                assert!(
                    out.get(key).is_some(),
                    "{}: `{key}` missing from {out}",
                    c.tool
                );
            }
        } else {
            panic!("{}: a read tool without an output schema", c.tool);
        }
    }
    let all: std::collections::BTreeSet<&str> = TOOLSETS.iter().map(|(_, s)| *s).collect();
    assert_eq!(toolsets_seen, all, "every toolset has a read case");
    server.stop().await;
}

/// Toolset of each tool the cases use (checked against `tools.yaml` by the test below).
const TOOLSETS: &[(&str, &str)] = &[
    ("get_me", "user"),
    ("list_user_followers", "user"),
    ("list_notifications", "notifications"),
    ("get_unread_notification_count", "notifications"),
    ("search_repos", "search"),
    ("search_issues", "search"),
    ("search_teams", "search"),
    ("search_topics", "search"),
    ("get_repo", "repos"),
    ("list_repo_topics", "repos"),
    ("list_repo_languages", "repos"),
    ("get_repo_permission", "repos"),
    ("list_repo_assignees", "repos"),
    ("list_branches", "branches"),
    ("list_branch_protections", "branches"),
    ("get_branch_protection", "branches"),
    ("get_tag", "tags"),
    ("list_repo_contents", "files"),
    ("list_repo_root_contents", "files"),
    ("get_file_metadata", "files"),
    ("get_repo_tree", "files"),
    ("list_commits", "commits"),
    ("get_commit", "commits"),
    ("get_combined_status", "commits"),
    ("compare_commits", "commits"),
    ("get_commit_pull_request", "commits"),
    ("list_repo_issues", "issues"),
    ("get_issue", "issues"),
    ("list_issue_timeline", "issues"),
    ("list_issue_reactions", "issues"),
    ("list_issue_dependencies", "issues"),
    ("get_repo_label", "labels"),
    ("get_org_label", "labels"),
    ("list_issue_labels", "labels"),
    ("list_repo_milestones", "milestones"),
    ("get_pull_request", "pulls"),
    ("list_repo_pull_requests", "pulls"),
    ("get_pull_request_by_branches", "pulls"),
    ("list_pull_request_files", "pulls"),
    ("list_pull_reviews", "reviews"),
    ("list_pull_review_comments", "reviews"),
    ("list_action_runs", "actions"),
    ("list_action_tasks", "actions"),
    ("list_repo_action_secrets", "actions"),
    ("get_repo_action_variable", "actions"),
    ("get_org", "orgs"),
    ("get_user_org_permissions", "orgs"),
    ("get_team", "teams"),
    ("list_team_repos", "teams"),
    ("list_releases", "releases"),
    ("get_release_by_tag", "releases"),
    ("list_release_attachments", "releases"),
    ("get_wiki_page", "wiki"),
    ("get_wiki_revisions", "wiki"),
    ("list_issue_tracked_times", "time"),
    ("list_my_stopwatches", "time"),
    ("list_repo_hooks", "hooks"),
    ("get_version", "misc"),
    ("list_gitignore_templates", "misc"),
];

fn tool_toolset(tool: &str) -> &'static str {
    TOOLSETS
        .iter()
        .find(|(t, _)| *t == tool)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("{tool}: add it to TOOLSETS"))
}

/// The toolset table above agrees with the manifest, and covers every toolset it declares.
#[test]
fn the_cases_cover_every_toolset_of_the_manifest() {
    let catalog = forgelens::service::compile(&forgelens::manifest::Sources::builtin()).unwrap();
    for (tool, toolset) in TOOLSETS {
        let t = catalog
            .tool(tool)
            .unwrap_or_else(|| panic!("{tool} is not in tools.yaml"));
        assert_eq!(t.toolset, *toolset, "{tool}");
    }
    let covered: std::collections::BTreeSet<&str> = TOOLSETS.iter().map(|(_, s)| *s).collect();
    let declared: std::collections::BTreeSet<&str> =
        catalog.toolsets.keys().map(String::as_str).collect();
    assert_eq!(covered, declared);
}

/// The forge's answers carry a webhook secret and an authorization header; no hook tool
/// returns either, in its structured content or its text.
#[tokio::test]
async fn webhook_secrets_never_leave_forgelens() {
    let fixture = tool_world::tool_fixture("hook.json").to_string();
    assert!(fixture.contains(HOOK_SECRET) && fixture.contains(HOOK_AUTH));
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).start().await;
    let calls = [
        (
            "list_repo_hooks",
            json!({"owner": "acme", "repo": "widgets"}),
        ),
        (
            "get_repo_hook",
            json!({"owner": "acme", "repo": "widgets", "id": 5}),
        ),
        ("list_org_hooks", json!({"org": "acme"})),
        ("get_org_hook", json!({"org": "acme", "id": 5})),
        (
            "create_repo_hook",
            json!({"owner": "acme", "repo": "widgets", "type": "forgejo", "active": true,
                   "config": {"url": "https://ci.example.org/hooks/widgets", "content_type": "json",
                              "secret": HOOK_SECRET}}),
        ),
    ];
    for (tool, args) in calls {
        let result = server.call(tool, args).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{tool}: {result:?}");
        let wire = serde_json::to_string(&result).unwrap();
        assert!(
            wire.contains("https://ci.example.org/hooks/widgets") && wire.contains("json"),
            "{tool}: the safe fields are there: {wire}"
        );
        assert!(
            !wire.contains(HOOK_SECRET) && !wire.contains(HOOK_AUTH),
            "{tool} leaked a secret: {wire}"
        );
        assert!(!wire.contains("secret"), "{tool}: {wire}");
    }
    // The secret given to create_repo_hook did reach the forge, in the body.
    let sent = forge
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(sent.body.unwrap()["config"]["secret"], HOOK_SECRET);
    server.stop().await;
}

/// Lists that ignore paging upstream are windowed by forgelens, with the same envelope.
#[tokio::test]
async fn an_unpaged_thread_is_windowed_here() {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).start().await;
    let args = |page: u64| json!({"owner": "acme", "repo": "widgets", "index": 12, "page": page, "limit": 2});
    let (first, request) = call(&server, &forge, "list_issue_comments", args(1)).await;
    assert_eq!(
        (request.query("page"), request.query("limit")),
        (None, None)
    );
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    assert_eq!(
        (
            first["total_count"].clone(),
            first["has_more"].clone(),
            first["next_page"].clone()
        ),
        (json!(3), json!(true), json!(2))
    );
    assert_eq!(first["items"][0]["body"], "comment-1");
    assert_eq!(first["items"][0]["author"], "bob");
    let (second, _) = call(&server, &forge, "list_issue_comments", args(2)).await;
    assert_eq!(second["items"], json!([second["items"][0].clone()]));
    assert_eq!(second["items"][0]["body"], "comment-3");
    assert_eq!(second["has_more"], false);
    assert!(second.get("next_page").is_none());
    server.stop().await;
}

/// `total_count` appears only when the forge sends `X-Total-Count`; without it, `has_more`
/// follows `Link: rel="next"`.
#[tokio::test]
async fn without_a_total_has_more_follows_the_link_header() {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).start().await;
    let (first, request) = call(
        &server,
        &forge,
        "list_user_repos",
        json!({"username": "carol", "limit": 20}),
    )
    .await;
    assert_eq!(
        (request.query("page"), request.query("limit")),
        (Some("1"), Some("20"))
    );
    assert!(first.get("total_count").is_none(), "{first}");
    assert_eq!(first["items"].as_array().unwrap().len(), 20);
    assert_eq!(
        (first["has_more"].clone(), first["next_page"].clone()),
        (json!(true), json!(2))
    );
    let (last, _) = call(
        &server,
        &forge,
        "list_user_repos",
        json!({"username": "carol", "page": 3, "limit": 20}),
    )
    .await;
    assert_eq!(last["items"].as_array().unwrap().len(), 5);
    assert_eq!(last["items"][0]["full_name"], "carol/r41");
    assert_eq!(last["has_more"], false, "no rel=next on the last page");
    assert!(last.get("total_count").is_none());
    // With X-Total-Count the total is reported.
    let (mine, _) = call(&server, &forge, "list_my_repos", json!({})).await;
    assert_eq!(
        (mine["total_count"].clone(), mine["has_more"].clone()),
        (json!(3), json!(false))
    );
    server.stop().await;
}

/// Arguments are checked before anything is sent: a missing required one, a malformed owner,
/// a value outside an enum, an unknown argument.
#[tokio::test]
async fn malformed_arguments_never_reach_the_forge() {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).start().await;
    let cases = [
        ("search_topics", json!({})),
        ("get_repo", json!({"owner": "acme/x", "repo": "widgets"})),
        (
            "get_repo",
            json!({"owner": "acme", "repo": "../widgets/.."}),
        ),
        (
            "list_repo_issues",
            json!({"owner": "acme", "repo": "widgets", "state": "merged"}),
        ),
        (
            "get_issue",
            json!({"owner": "acme", "repo": "widgets", "index": 0}),
        ),
        (
            "get_issue",
            json!({"owner": "acme", "repo": "widgets", "index": "12a"}),
        ),
        ("list_notifications", json!({"since": "yesterday"})),
        // Digits of other scripts are digits to Unicode, not to RFC 3339.
        (
            "list_notifications",
            json!({"since": "\u{0662}\u{0660}\u{0662}\u{0666}-11-01T00:00:00Z"}),
        ),
        (
            "get_repo",
            json!({"owner": "acme", "repo": "widgets", "verbose": true}),
        ),
        (
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets", "limit": 0}),
        ),
    ];
    forge.clear_log();
    for (tool, args) in cases {
        let result = server.call(tool, args.clone()).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{tool} {args}");
    }
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());
    server.stop().await;
}

/// A branch name with `/` spans path segments, each encoded; a label name with `/` stays one.
#[tokio::test]
async fn names_with_slashes_reach_the_right_path() {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).start().await;
    forge.clear_log();
    let _ = server
        .call(
            "get_branch",
            json!({"owner": "acme", "repo": "widgets", "branch": "release/1.0"}),
        )
        .await
        .unwrap();
    let _ = server
        .call(
            "list_repo_contents",
            json!({"owner": "acme", "repo": "widgets", "path": "docs/a b.md"}),
        )
        .await
        .unwrap();
    let paths: Vec<String> = forge.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/repos/acme/widgets/branches/release/1.0",
            "/repos/acme/widgets/contents/docs/a%20b.md"
        ]
    );
    server.stop().await;
}

/// A tool whose endpoint only some forges have says so when the forge answers 404: the forge
/// may lack the endpoint, whatever the id.
#[tokio::test]
async fn a_404_from_an_endpoint_some_forges_lack_says_so() {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).start().await;
    let result = server
        .call(
            "get_action_job_logs",
            json!({"owner": "acme", "repo": "widgets", "job_id": 999}),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = crate::support::result_text(&result);
    assert!(
        text.contains("only some forges have this endpoint: Gitea 1.24 or later"),
        "{text}"
    );
    let other = server
        .call(
            "get_issue",
            json!({"owner": "acme", "repo": "widgets", "index": 999}),
        )
        .await
        .unwrap();
    assert!(!crate::support::result_text(&other).contains("only some forges"));
    server.stop().await;
}
