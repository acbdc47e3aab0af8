//! Tools whose answer is bounded text (a file by lines, a diff per file, a log's tail), the
//! escape hatch, renamed body fields, and the refusals that keep a call from reaching the forge.

use serde_json::{Value, json};

use crate::support::fake_forge::{GOOD_TOKEN, Reply};
use crate::support::{FakeForge, Launch, Server};

fn numbered(n: usize, what: &str) -> String {
    (1..=n).map(|i| format!("{what} {i}\n")).collect()
}

async fn error_text(server: &Server, tool: &str, args: Value) -> String {
    let result = server.call(tool, args).await.unwrap();
    assert_eq!(result.is_error, Some(true), "{tool}: {result:?}");
    format!("{:?}", result.content)
}

#[tokio::test]
async fn a_file_is_read_by_line_range_and_says_how_many_lines_it_has() {
    let forge = FakeForge::standard().await;
    forge.route(
        "GET",
        "/repos/acme/widgets/raw/src/cache.rs",
        Reply::Text(numbered(1000, "line")),
    );
    let server = Launch::new(&forge).start().await;
    let first = server
        .call_ok(
            "get_file_contents",
            json!({"owner": "acme", "repo": "widgets", "path": "src/cache.rs"}),
        )
        .await;
    assert_eq!(
        (
            first["start_line"].clone(),
            first["end_line"].clone(),
            first["total_lines"].clone()
        ),
        (json!(1), json!(400), json!(1000))
    );
    assert!(
        first["text"].as_str().unwrap().starts_with("line 1\n")
            && first["text"].as_str().unwrap().ends_with("line 400\n")
    );
    assert_eq!(
        first["truncated"],
        "[truncated: lines 1–400 of 1000 shown. Call get_file_contents again with start_line=401 for the next lines.]"
    );
    let range = server
        .call_ok("get_file_contents", json!({"owner": "acme", "repo": "widgets", "path": "src/cache.rs", "start_line": 10, "end_line": 12, "ref": "v1.2.0"}))
        .await;
    assert_eq!(range["text"], "line 10\nline 11\nline 12\n");
    let request = forge.requests().last().cloned().unwrap();
    assert_eq!(
        (request.path.as_str(), request.query("ref")),
        ("/repos/acme/widgets/raw/src/cache.rs", Some("v1.2.0"))
    );
    let text = error_text(&server, "get_file_contents", json!({"owner": "acme", "repo": "widgets", "path": "src/cache.rs", "start_line": 5, "end_line": 2})).await;
    assert!(text.contains("end_line 2 is before start_line 5"), "{text}");
    server.stop().await;
}

#[tokio::test]
async fn a_diff_is_listed_by_file_then_read_one_file_at_a_time() {
    let forge = FakeForge::standard().await;
    let diff = "diff --git a/src/cache.rs b/src/cache.rs\n--- a/src/cache.rs\n+++ b/src/cache.rs\n@@ -1,2 +1,2 @@\n-old\n+new\n\
                diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n+More words.\n";
    forge.route(
        "GET",
        "/repos/acme/widgets/pulls/7.diff",
        Reply::Text(diff.into()),
    );
    forge.route(
        "GET",
        "/repos/acme/widgets/git/commits/9f8e7d6c.patch",
        Reply::Text(diff.into()),
    );
    let server = Launch::new(&forge).start().await;
    let files = server
        .call_ok(
            "get_pull_request_diff",
            json!({"owner": "acme", "repo": "widgets", "index": 7}),
        )
        .await;
    assert_eq!(
        files["files"],
        json!([{"path": "src/cache.rs", "lines": 6}, {"path": "README.md", "lines": 5}])
    );
    let one = server
        .call_ok(
            "get_pull_request_diff",
            json!({"owner": "acme", "repo": "widgets", "index": 7, "file": "README.md"}),
        )
        .await;
    assert!(
        one["text"]
            .as_str()
            .unwrap()
            .starts_with("diff --git a/README.md")
            && one["text"].as_str().unwrap().contains("+More words.")
    );
    assert!(!one["text"].as_str().unwrap().contains("cache.rs"));
    let text = error_text(
        &server,
        "get_pull_request_diff",
        json!({"owner": "acme", "repo": "widgets", "index": 7, "file": "nope.rs"}),
    )
    .await;
    assert!(
        text.contains("no file `nope.rs`") && text.contains("README.md"),
        "{text}"
    );
    let patch = server.call_ok("get_commit_diff", json!({"owner": "acme", "repo": "widgets", "sha": "9f8e7d6c", "diff_type": "patch", "file": "src/cache.rs"})).await;
    assert_eq!(patch["total_lines"], 6);
    assert_eq!(
        forge.requests().last().unwrap().path,
        "/repos/acme/widgets/git/commits/9f8e7d6c.patch"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_job_log_is_read_from_its_end() {
    let forge = FakeForge::standard().await;
    forge.route(
        "GET",
        "/repos/acme/widgets/actions/jobs/42/logs",
        Reply::Text(numbered(1000, "step")),
    );
    let server = Launch::new(&forge).start().await;
    let tail = server
        .call_ok(
            "get_action_job_logs",
            json!({"owner": "acme", "repo": "widgets", "job_id": 42}),
        )
        .await;
    assert_eq!(
        (tail["start_line"].clone(), tail["end_line"].clone()),
        (json!(801), json!(1000))
    );
    assert!(tail["text"].as_str().unwrap().ends_with("step 1000\n"));
    assert_eq!(
        tail["truncated"],
        "[truncated: lines 801–1000 of 1000 shown. Call get_action_job_logs again with start_line=601 for earlier lines.]"
    );
    let earlier = server.call_ok("get_action_job_logs", json!({"owner": "acme", "repo": "widgets", "job_id": 42, "start_line": 601, "end_line": 603})).await;
    assert_eq!(earlier["text"], "step 601\nstep 602\nstep 603\n");
    server.stop().await;
}

#[tokio::test]
async fn a_wiki_page_is_read_by_lines_from_its_base64_content() {
    use base64::Engine;
    let forge = FakeForge::standard().await;
    let content = base64::engine::general_purpose::STANDARD.encode(numbered(3, "para"));
    forge.route(
        "GET",
        "/repos/acme/widgets/wiki/page/Home",
        Reply::Json(json!({"title": "Home", "sub_url": "Home", "content_base64": content,
            "last_commit": {"sha": "abc", "author": {"name": "Alice", "date": "2026-11-01T00:00:00Z"}}})),
    );
    let server = Launch::new(&forge).start().await;
    let page = server
        .call_ok(
            "get_wiki_page_content",
            json!({"owner": "acme", "repo": "widgets", "page_name": "Home", "start_line": 2}),
        )
        .await;
    assert_eq!(page["title"], "Home");
    assert_eq!(page["text"], "para 2\npara 3\n");
    assert_eq!(page["total_lines"], 3);
    server.stop().await;
}

#[tokio::test]
async fn the_escape_hatch_reaches_any_path_and_nothing_outside_the_api() {
    let forge = FakeForge::standard().await;
    forge.route(
        "GET",
        "/repos/acme/widgets/topics",
        Reply::Json(json!({"topics": ["cache", "rust"]})),
    );
    forge.route("PUT", "/repos/acme/widgets/topics", Reply::NoContent);
    let server = Launch::new(&forge).token(GOOD_TOKEN).full().start().await;
    let topics = server
        .call_ok(
            "forgejo_api_request",
            json!({"path": "repos/acme/widgets/topics", "query": {"page": 1, "limit": 10}}),
        )
        .await;
    assert_eq!(topics["topics"], json!(["cache", "rust"]));
    let get = forge.requests().last().cloned().unwrap();
    assert_eq!(
        (get.method.as_str(), get.query("limit")),
        ("GET", Some("10"))
    );
    let put = server
        .call_ok("forgejo_api_request", json!({"method": "PUT", "path": "repos/acme/widgets/topics", "body": {"topics": ["cache"]}}))
        .await;
    assert_eq!(put, json!({"ok": true, "status": 204}));
    let sent = forge.requests().last().cloned().unwrap();
    assert_eq!(
        (sent.method.as_str(), sent.body.clone()),
        ("PUT", Some(json!({"topics": ["cache"]})))
    );
    let before = forge.requests().len();
    for path in [
        "//repos/acme",
        "http://elsewhere.example/api",
        "repos/../../admin",
        "repos/./x",
        "repos//x",
    ] {
        let text = error_text(&server, "forgejo_api_request", json!({"path": path})).await;
        assert!(text.contains("path"), "{path}: {text}");
    }
    let text = error_text(
        &server,
        "forgejo_api_request",
        json!({"method": "TRACE", "path": "version"}),
    )
    .await;
    assert!(text.contains("method"), "{text}");
    assert_eq!(
        forge.requests().len(),
        before,
        "no refused call reached the forge"
    );
    let tools = server.client.list_all_tools().await.unwrap();
    let hatch = tools
        .iter()
        .find(|t| t.name == "forgejo_api_request")
        .unwrap();
    let a = hatch.annotations.clone().unwrap();
    assert_eq!(
        (a.read_only_hint, a.destructive_hint),
        (Some(false), Some(true))
    );
    server.stop().await;

    let read_only = Launch::new(&forge).arg("--read-only").full().start().await;
    let result = read_only
        .call("forgejo_api_request", json!({"path": "version"}))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true), "refused in read-only mode");
    assert!(
        !read_only
            .client
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "forgejo_api_request")
    );
    read_only.stop().await;
}

#[tokio::test]
async fn body_fields_can_carry_the_forges_own_names() {
    let forge = FakeForge::standard().await;
    forge.route(
        "POST",
        "/repos/acme/widgets/issues/3/dependencies",
        Reply::Json(json!({"number": 3, "title": "t", "state": "open"})),
    );
    forge.route(
        "DELETE",
        "/repos/acme/widgets/issues/3/dependencies",
        Reply::Json(json!({"number": 3, "title": "t", "state": "open"})),
    );
    let server = Launch::new(&forge).token(GOOD_TOKEN).start().await;
    let args = json!({"owner": "acme", "repo": "widgets", "index": 3, "dependency_owner": "acme", "dependency_repo": "gadgets", "dependency_index": 9});
    server.call_ok("add_issue_dependency", args.clone()).await;
    server.call_ok("remove_issue_dependency", args).await;
    for method in ["POST", "DELETE"] {
        let sent = forge
            .requests()
            .into_iter()
            .find(|r| r.method == method)
            .unwrap();
        assert_eq!(sent.path, "/repos/acme/widgets/issues/3/dependencies");
        assert_eq!(
            sent.body,
            Some(json!({"owner": "acme", "repo": "gadgets", "index": 9})),
            "{method}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_bad_sudo_and_a_list_answered_with_an_object_are_errors() {
    let forge = FakeForge::standard().await;
    forge.route(
        "GET",
        "/repos/acme/widgets/contents/README.md",
        Reply::Json(json!({"name": "README.md", "type": "file"})),
    );
    let server = Launch::new(&forge).start().await;
    let text = error_text(
        &server,
        "list_repo_labels",
        json!({"owner": "acme", "repo": "widgets", "sudo": "bob; rm"}),
    )
    .await;
    assert!(text.contains("sudo"), "{text}");
    assert!(
        forge.requests().is_empty(),
        "a bad sudo is refused before any request"
    );
    let text = error_text(
        &server,
        "list_repo_contents",
        json!({"owner": "acme", "repo": "widgets", "path": "README.md"}),
    )
    .await;
    // The manifest says what the caller got wrong, and names the tool that fits.
    assert!(
        text.contains("names a file, not a directory") && text.contains("get_file_contents"),
        "{text}"
    );
    server.stop().await;
}
