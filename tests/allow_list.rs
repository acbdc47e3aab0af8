//! `--allow-repos`: nothing outside the list is requested or shown, through the binary against
//! the tool world (which holds `acme/widgets`, `acme/gadgets`, `acme/gizmos`, 45 repositories of
//! `carol` and the fork `bob/widgets`).

use std::collections::HashMap;

use rmcp::model::CompletionContext;
use serde_json::json;

use crate::support::fake_forge::GOOD_TOKEN;
use crate::support::{
    FakeForge, Launch, Server, is_read_only, manifest_tools, required_args, result_text, run,
    tool_world,
};

/// Full names of repositories the world lists that `acme/widgets` does not cover. (The fork
/// `bob/widgets` is named by the pull request whose head it holds, a fact of `acme/widgets`;
/// listed as a fork, it is left out.)
const OUTSIDE: &[&str] = &["acme/gadgets", "acme/gizmos", "carol/r1"];

async fn start(allow: &str) -> (FakeForge, Server) {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge)
        .token(GOOD_TOKEN)
        .arg("--allow-repos")
        .arg(allow)
        .full()
        .start()
        .await;
    (forge, server)
}

/// Every request the forge saw is about `acme/widgets` or about no repository.
fn assert_no_request_outside(forge: &FakeForge) {
    for logged in forge.requests() {
        let path = logged.path.to_lowercase();
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if let ["repos", owner, repo, ..] = parts.as_slice()
            && !matches!((*owner, *repo), ("issues", "search"))
        {
            assert_eq!(
                (*owner, *repo),
                ("acme", "widgets"),
                "a request outside the allow-list reached the forge: {} {}",
                logged.method,
                logged.path
            );
        }
        assert!(
            !path.starts_with("/repositories/") && !parts.iter().any(|p| *p == ".." || *p == "."),
            "{}",
            logged.path
        );
    }
}

#[tokio::test]
async fn every_read_tool_stays_inside_the_list_and_shows_nothing_outside_it() {
    let (forge, server) = start("acme/widgets").await;
    let tools = server.client.list_all_tools().await.unwrap();
    let mut refused = Vec::new();
    for tool in manifest_tools(&tools) {
        if !is_read_only(tool) {
            continue;
        }
        let args = tool_world::sample_args(&tool.name, &required_args(tool)).unwrap();
        let result = server.call_ok_or_error(&tool.name, args).await;
        let text = serde_json::to_string(&result).unwrap();
        for other in OUTSIDE {
            assert!(
                !text.contains(other),
                "{} shows {other} outside the allow-list: {text}",
                tool.name
            );
        }
        if result.is_error == Some(true) {
            refused.push(tool.name.to_string());
        }
    }
    assert_no_request_outside(&forge);
    // Lists of other repositories are emptied, not refused; nothing the world serves for
    // acme/widgets is refused.
    assert!(refused.is_empty(), "refused: {refused:?}");
    server.stop().await;
}

#[tokio::test]
async fn lists_leave_out_what_is_outside_and_say_so_without_the_forges_count() {
    let (forge, server) = start("acme/widgets").await;
    let page = server
        .call_ok("search_repos", json!({"q": "w", "limit": 10}))
        .await;
    let names: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["full_name"].as_str())
        .collect();
    assert_eq!(names, ["acme/widgets"], "{page}");
    assert!(page.get("total_count").is_none(), "{page}");
    assert!(
        page["left_out"]
            .as_str()
            .is_some_and(|s| s.starts_with("2 items")),
        "{page}"
    );
    let stopwatches = server.call_ok("list_my_stopwatches", json!({})).await;
    assert_eq!(
        stopwatches["items"].as_array().unwrap().len(),
        1,
        "{stopwatches}"
    );
    let carol = server
        .call_ok("list_user_repos", json!({"username": "carol"}))
        .await;
    assert_eq!(carol["items"], json!([]), "{carol}");
    let forks = server
        .call_ok("list_forks", json!({"owner": "acme", "repo": "widgets"}))
        .await;
    assert_eq!(forks["items"], json!([]), "{forks}");
    assert_no_request_outside(&forge);
    server.stop().await;
}

#[tokio::test]
async fn a_call_or_read_outside_the_list_is_refused_before_anything_is_sent() {
    let (forge, server) = start("acme/widgets, tools/*").await;
    forge.clear_log();
    let refused = [
        ("get_repo", json!({"owner": "acme", "repo": "gadgets"})),
        (
            "list_repo_issues",
            json!({"owner": "ACME", "repo": "secret"}),
        ),
        ("star_repo", json!({"owner": "carol", "repo": "r1"})),
        ("create_org_repo", json!({"org": "acme", "name": "new"})),
        ("create_repo", json!({"name": "mine"})),
        ("create_fork", json!({"owner": "acme", "repo": "widgets"})),
        ("mark_notifications_read", json!({})),
        (
            "forgejo_api_request",
            json!({"method": "GET", "path": "repos/carol/r1"}),
        ),
        (
            "forgejo_api_request",
            json!({"method": "GET", "path": "repos/acme/widgets/../../carol/r1"}),
        ),
        (
            "forgejo_api_request",
            json!({"method": "GET", "path": "repositories/21"}),
        ),
        (
            "forgejo_api_request",
            json!({"method": "GET", "path": "user/repos"}),
        ),
    ];
    for (tool, args) in refused {
        let result = server.call_ok_or_error(tool, args.clone()).await;
        let text = result_text(&result);
        assert_eq!(result.is_error, Some(true), "{tool} {args}: {text}");
        // A dot segment is already refused as an argument; every other refusal names the list.
        if !text.contains("cannot be `.` or `..`") {
            assert!(
                text.contains("allow-list") && text.contains("acme/widgets, tools/*"),
                "{tool} {args}: {text}"
            );
            assert!(
                !text.contains("token"),
                "{tool}: a token hint misleads: {text}"
            );
        }
    }
    let (code, error) = server.read_error("forgejo://repo/carol/r1/issue/1").await;
    assert_eq!(code, -32002, "{error}");
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());

    // Inside the list, the same kinds of call go through.
    server
        .call_ok("get_repo", json!({"owner": "acme", "repo": "widgets"}))
        .await;
    server
        .call_ok(
            "forgejo_api_request",
            json!({"method": "GET", "path": "repos/acme/widgets"}),
        )
        .await;
    assert_eq!(forge.requests().len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn an_answer_about_another_repository_is_withheld() {
    let forge = tool_world::forge().await;
    let mut thread = tool_world::tool_fixture("notification.json");
    thread["repository"]["full_name"] = json!("carol/r1");
    forge.route(
        "GET",
        "/notifications/threads/5",
        crate::support::fake_forge::Reply::Json(thread),
    );
    let server = Launch::new(&forge)
        .token(GOOD_TOKEN)
        .arg("--allow-repos=acme/widgets")
        .full()
        .start()
        .await;
    let result = server
        .call_ok_or_error("get_notification_thread", json!({"id": 5}))
        .await;
    let text = result_text(&result);
    assert_eq!(result.is_error, Some(true), "{text}");
    assert!(
        text.contains("carol/r1") && text.contains("withheld"),
        "{text}"
    );
    server.stop().await;
}

#[tokio::test]
async fn resource_lists_and_completions_leave_out_other_repositories() {
    let (_forge, server) = start("acme/widgets").await;
    let listed = server.client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"forgejo://repo/acme/widgets"), "{uris:?}");
    assert!(
        !uris
            .iter()
            .any(|u| u.contains("gadgets") || u.contains("gizmos")),
        "{uris:?}"
    );
    let context = || {
        Some(CompletionContext::with_arguments(HashMap::from([(
            "owner".to_owned(),
            "acme".to_owned(),
        )])))
    };
    let template = "forgejo://repo/{owner}/{repo}";
    let outside = server
        .client
        .complete_resource_argument(template, "repo", "g", context())
        .await
        .unwrap();
    assert_eq!(
        outside.values,
        Vec::<String>::new(),
        "gadgets and gizmos are outside"
    );
    let inside = server
        .client
        .complete_resource_argument(template, "repo", "w", context())
        .await
        .unwrap();
    assert_eq!(inside.values, ["widgets"]);
    server.stop().await;
}

#[test]
fn a_bad_or_empty_allow_list_stops_the_server_with_what_is_wrong() {
    for (value, words) in [
        ("", "names no repository"),
        ("acme", "not `owner/repo`"),
        ("*/*", "the owner must be a name"),
    ] {
        let out = run(&["--allow-repos", value, "list", "tools"], &[]);
        assert_ne!(out.code, 0, "{value}: {}", out.stdout);
        assert!(out.stderr.contains(words), "{value}: {}", out.stderr);
        let out = run(&["list", "tools"], &[("FORGELENS_ALLOW_REPOS", value)]);
        assert!(
            out.stderr.contains("FORGELENS_ALLOW_REPOS") && out.stderr.contains(words),
            "{value}: {}",
            out.stderr
        );
    }
}

#[tokio::test]
async fn generated_tools_reach_only_the_listed_repositories() {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge)
        .token(GOOD_TOKEN)
        .arg("--allow-repos=acme/widgets")
        .arg("--catalog=tests/fixtures/mini.catalog.yaml")
        .full()
        .start()
        .await;
    forge.clear_log();
    for (tool, args) in [
        ("forgejo_hook_user_list", json!({})),
        ("forgejo_hook_org_list", json!({"org": "acme"})),
        (
            "forgejo_hook_repo_list",
            json!({"owner": "carol", "repo": "r1"}),
        ),
        (
            "forgejo_admin_adopt_repository",
            json!({"owner": "acme", "repo": "widgets"}),
        ),
    ] {
        let result = server.call_ok_or_error(tool, args.clone()).await;
        let text = result_text(&result);
        assert_eq!(result.is_error, Some(true), "{tool} {args}: {text}");
        assert!(text.contains("allow-list"), "{tool}: {text}");
    }
    assert!(forge.requests().is_empty(), "{:?}", forge.requests());
    let inside = server
        .call_ok_or_error(
            "forgejo_hook_repo_list",
            json!({"owner": "acme", "repo": "widgets"}),
        )
        .await;
    assert_ne!(inside.is_error, Some(true), "{}", result_text(&inside));
    server.stop().await;
}

/// The allow-list reads which variables name a repository from where the resource's endpoint
/// puts them, not from their names: a manifest calling them `org` and `project` is held to it
/// the same way.
#[tokio::test]
async fn completions_are_held_to_the_list_whatever_the_variables_are_called() {
    let forge = tool_world::forge().await;
    let dir = tempfile::tempdir().unwrap();
    let builtin = std::fs::read_to_string("resources.yaml").unwrap();
    let renamed = builtin
        .replace(
            "completions:\n",
            "completions:\n  project:\n    sources:\n      - fetch: GET /repos/search?q={value}&limit=50\n        from: $.data\n        value: $.name\n        where: {$.owner.login: '{org}'}\n",
        )
        .replace(
            "resources:\n",
            "resources:\n  - name: project\n    title: Project\n    uri: forgejo://project/{org}/{project}\n    description: A repository under other names.\n    params: {org: owner_name, project: repo_name}\n    fetch: GET /repos/{org}/{project}\n    project: {name: $.name}\n\n",
        );
    let path = dir.path().join("resources.yaml");
    std::fs::write(&path, renamed).unwrap();
    let server = Launch::new(&forge)
        .token(GOOD_TOKEN)
        .arg("--allow-repos")
        .arg("acme/widgets")
        .arg("--resources")
        .arg(path.to_str().unwrap())
        .start()
        .await;
    let complete = |typed: &'static str| {
        let context = CompletionContext::with_arguments(HashMap::from([(
            "org".to_owned(),
            "acme".to_owned(),
        )]));
        server.client.complete_resource_argument(
            "forgejo://project/{org}/{project}",
            "project",
            typed,
            Some(context),
        )
    };
    assert_eq!(complete("g").await.unwrap().values, Vec::<String>::new());
    assert_eq!(complete("w").await.unwrap().values, ["widgets"]);
    server.stop().await;
}
