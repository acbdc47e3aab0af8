//! The main write tools through the binary: the exact upstream request each makes (method,
//! path, JSON body, headers) and what it returns; and `sudo` as the `Sudo` header.

use serde_json::{Value, json};

use crate::support::fake_forge::{GOOD_TOKEN, Logged};
use crate::support::fixtures::SHA;
use crate::support::tool_world;
use crate::support::{FakeForge, Launch, Server};

/// Calls `tool` expecting success and exactly one upstream request; returns both.
async fn write(server: &Server, forge: &FakeForge, tool: &str, args: Value) -> (Value, Logged) {
    forge.clear_log();
    let out = server.call_ok(tool, args).await;
    let log = forge.requests();
    assert_eq!(log.len(), 1, "{tool}: {log:?}");
    (out, log[0].clone())
}

/// A write authenticated with the configured token, sending JSON, acting as nobody else.
fn assert_plain_write(request: &Logged, method: &str, path: &str, body: Option<Value>) {
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        (method, path)
    );
    assert_eq!(request.body, body, "{method} {path}");
    assert_eq!(
        request.header("authorization"),
        Some(format!("token {GOOD_TOKEN}").as_str()),
        "{method} {path}"
    );
    if request.body.is_some() {
        assert_eq!(
            request.header("content-type"),
            Some("application/json"),
            "{method} {path}"
        );
    }
    assert_eq!(request.header("sudo"), None, "{method} {path}");
    assert!(
        request.query.is_empty(),
        "{method} {path}: {:?}",
        request.query
    );
}

async fn server(forge: &FakeForge) -> Server {
    Launch::new(forge).token(GOOD_TOKEN).start().await
}

#[tokio::test]
async fn create_issue_sends_exactly_the_given_fields() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (out, request) = write(
        &server,
        &forge,
        "create_issue",
        json!({"owner": "acme", "repo": "widgets", "title": "Widget cache grows without bound",
               "body": "Steps: open 10k widgets.", "labels": [335058], "assignees": ["bob"]}),
    )
    .await;
    assert_plain_write(
        &request,
        "POST",
        "/repos/acme/widgets/issues",
        Some(
            json!({"title": "Widget cache grows without bound", "body": "Steps: open 10k widgets.",
                    "labels": [335058], "assignees": ["bob"]}),
        ),
    );
    assert_eq!(out["index"], 12);
    assert_eq!(out["labels"], json!(["kind/bug", "priority/high"]));
    assert_eq!(out["html_url"], "http://fake/acme/widgets/issues/12");
    server.stop().await;
}

#[tokio::test]
async fn comment_on_an_issue() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (out, request) = write(
        &server,
        &forge,
        "create_issue_comment",
        json!({"owner": "acme", "repo": "widgets", "index": 12, "body": "Fixed by #7."}),
    )
    .await;
    assert_plain_write(
        &request,
        "POST",
        "/repos/acme/widgets/issues/12/comments",
        Some(json!({"body": "Fixed by #7."})),
    );
    assert_eq!(
        (out["id"].clone(), out["author"].clone()),
        (json!(77001), json!("bob"))
    );
    server.stop().await;
}

#[tokio::test]
async fn add_and_remove_issue_labels() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (out, request) = write(
        &server,
        &forge,
        "add_issue_labels",
        json!({"owner": "acme", "repo": "widgets", "index": 12, "labels": ["kind/bug", "priority/high"]}),
    )
    .await;
    assert_plain_write(
        &request,
        "POST",
        "/repos/acme/widgets/issues/12/labels",
        Some(json!({"labels": ["kind/bug", "priority/high"]})),
    );
    assert_eq!(out, json!({"labels": ["kind/bug", "priority/high"]}));

    // A label name with `/` is one path segment, encoded.
    let (out, request) = write(
        &server,
        &forge,
        "remove_issue_label",
        json!({"owner": "acme", "repo": "widgets", "index": 12, "label": "kind/bug"}),
    )
    .await;
    assert_plain_write(
        &request,
        "DELETE",
        "/repos/acme/widgets/issues/12/labels/kind%2Fbug",
        None,
    );
    assert_eq!(out, json!({"ok": true, "status": 204}));
    server.stop().await;
}

/// A label name the repository does not have: the forge drops it and answers success, so the
/// call is an error naming it, its nearest label, the labels there are (the repository's and
/// its organization's) and what the issue carries after all.
#[tokio::test]
async fn an_unknown_label_name_is_an_error_naming_the_known_ones() {
    use crate::support::fake_forge::Reply;
    let forge = tool_world::forge().await;
    let label = |name: &str| json!({"id": 1, "name": name, "color": "ee0701"});
    for method in ["POST", "PUT"] {
        forge.route(
            method,
            "/repos/acme/widgets/issues/13/labels",
            Reply::Json(json!([label("kind/bug")])),
        );
    }
    forge.route(
        "GET",
        "/repos/acme/widgets/labels",
        Reply::Whole(vec![label("kind/bug"), label("priority/high")]),
    );
    forge.route(
        "GET",
        "/orgs/acme/labels",
        Reply::Whole(vec![label("org/wide")]),
    );
    let server = server(&forge).await;
    for tool in ["add_issue_labels", "replace_issue_labels"] {
        let result = server
            .call(
                tool,
                json!({"owner": "acme", "repo": "widgets", "index": 13, "labels": ["kind/bug", "priorty/high"]}),
            )
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{tool}");
        let text = crate::support::result_text(&result);
        for said in [
            "`priorty/high` (did you mean `priority/high`?) is not a label of the repository",
            "The ones there are: `kind/bug`, `priority/high`, `org/wide`.",
            "the answer holds `kind/bug`",
        ] {
            assert!(text.contains(said), "{tool}: {said:?} in {text}");
        }
    }
    // All known: the plain answer, and no request beyond the write.
    forge.clear_log();
    let out = server
        .call_ok(
            "add_issue_labels",
            json!({"owner": "acme", "repo": "widgets", "index": 13, "labels": ["kind/bug"]}),
        )
        .await;
    assert_eq!(out, json!({"labels": ["kind/bug"]}));
    assert_eq!(forge.requests().len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn create_edit_and_delete_a_label() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (out, request) = write(
        &server,
        &forge,
        "create_repo_label",
        json!({"owner": "acme", "repo": "widgets", "name": "kind/bug", "color": "d73a4a",
               "description": "Something does not work as documented"}),
    )
    .await;
    assert_plain_write(
        &request,
        "POST",
        "/repos/acme/widgets/labels",
        Some(json!({"name": "kind/bug", "color": "d73a4a",
                    "description": "Something does not work as documented"})),
    );
    assert_eq!(out["id"], 335058);
    assert!(
        out.get("url").is_none(),
        "the projection keeps what an agent needs: {out}"
    );

    let (_, request) = write(
        &server,
        &forge,
        "update_repo_label",
        json!({"owner": "acme", "repo": "widgets", "id": 5, "color": "#00ff00", "is_archived": true}),
    )
    .await;
    assert_plain_write(
        &request,
        "PATCH",
        "/repos/acme/widgets/labels/5",
        Some(json!({"color": "#00ff00", "is_archived": true})),
    );

    let (out, request) = write(
        &server,
        &forge,
        "delete_repo_label",
        json!({"owner": "acme", "repo": "widgets", "id": 5}),
    )
    .await;
    assert_plain_write(&request, "DELETE", "/repos/acme/widgets/labels/5", None);
    assert_eq!(out, json!({"ok": true, "status": 204}));

    // A color that is not six hex digits is refused before anything is sent.
    forge.clear_log();
    let refused = server
        .call(
            "create_repo_label",
            json!({"owner": "acme", "repo": "widgets", "name": "x", "color": "red"}),
        )
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(forge.requests().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn merge_a_pull_request() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (out, request) = write(
        &server,
        &forge,
        "merge_pull_request",
        json!({"owner": "acme", "repo": "widgets", "index": 12, "style": "squash",
               "merge_title": "Bound the widget cache (#12)", "delete_branch_after_merge": true,
               "head_commit_id": SHA}),
    )
    .await;
    assert_plain_write(
        &request,
        "POST",
        "/repos/acme/widgets/pulls/12/merge",
        Some(
            json!({"Do": "squash", "MergeTitleField": "Bound the widget cache (#12)",
                    "delete_branch_after_merge": true, "head_commit_id": SHA}),
        ),
    );
    assert_eq!(out, json!({"ok": true, "status": 200}));

    forge.clear_log();
    let refused = server
        .call(
            "merge_pull_request",
            json!({"owner": "acme", "repo": "widgets", "index": 12, "style": "octopus"}),
        )
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(forge.requests().is_empty());
    server.stop().await;
}

/// One argument vocabulary: the names a tool advertises are snake_case, and the earlier names
/// (the forge's own, `Do`, `MergeTitleField`) are still accepted, never advertised; a number
/// or a boolean written as a string is read as one where the argument takes it.
#[tokio::test]
async fn old_argument_names_and_numbers_as_strings_are_accepted() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (_, request) = write(
        &server,
        &forge,
        "merge_pull_request",
        json!({"owner": "acme", "repo": "widgets", "index": "12", "Do": "squash",
               "MergeTitleField": "Bound the widget cache (#12)",
               "delete_branch_after_merge": "true"}),
    )
    .await;
    assert_plain_write(
        &request,
        "POST",
        "/repos/acme/widgets/pulls/12/merge",
        Some(
            json!({"Do": "squash", "MergeTitleField": "Bound the widget cache (#12)",
                    "delete_branch_after_merge": true}),
        ),
    );
    for complete in [false, true] {
        let described = server
            .call_ok(
                "describe_tools",
                json!({"names": ["merge_pull_request"], "complete": complete}),
            )
            .await;
        let properties = &described["tools"][0]["inputSchema"]["properties"];
        assert!(properties["style"].is_object(), "{described}");
        assert!(properties.get("Do").is_none(), "{described}");
    }

    // A name and its alias together: which one is meant is unclear, so nothing is sent.
    forge.clear_log();
    let twice = server
        .call(
            "merge_pull_request",
            json!({"owner": "acme", "repo": "widgets", "index": 12, "style": "merge", "Do": "squash"}),
        )
        .await
        .unwrap();
    assert_eq!(twice.is_error, Some(true));
    let text = crate::support::result_text(&twice);
    assert!(text.contains("`style`") && text.contains("`Do`"), "{text}");
    // A string that is not a number stays a string, and is refused as one.
    let word = server
        .call(
            "merge_pull_request",
            json!({"owner": "acme", "repo": "widgets", "index": "twelve", "style": "merge"}),
        )
        .await
        .unwrap();
    assert_eq!(word.is_error, Some(true));
    assert!(forge.requests().is_empty());
}

#[tokio::test]
async fn create_a_release() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (out, request) = write(
        &server,
        &forge,
        "create_release",
        json!({"owner": "acme", "repo": "widgets", "tag_name": "v1.2.0", "target_commitish": "main",
               "name": "Widgets 1.2", "body": "## Changes", "draft": false, "prerelease": false}),
    )
    .await;
    assert_plain_write(
        &request,
        "POST",
        "/repos/acme/widgets/releases",
        Some(
            json!({"tag_name": "v1.2.0", "target_commitish": "main", "name": "Widgets 1.2",
                    "body": "## Changes", "draft": false, "prerelease": false}),
        ),
    );
    assert_eq!(out["tag_name"], "v1.2.0");
    assert_eq!(out["author"], "alice");
    assert_eq!(out["assets"], json!(["widgets-1.2.0-linux-amd64.tar.gz"]));
    server.stop().await;
}

/// A DELETE whose arguments belong in the body carries them there, not in the query.
#[tokio::test]
async fn delete_a_file_sends_its_sha_in_the_body() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (out, request) = write(
        &server,
        &forge,
        "delete_file",
        json!({"owner": "acme", "repo": "widgets", "path": "src/lib.rs",
               "sha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "message": "Drop lib.rs"}),
    )
    .await;
    assert_plain_write(
        &request,
        "DELETE",
        "/repos/acme/widgets/contents/src/lib.rs",
        Some(json!({"sha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "message": "Drop lib.rs"})),
    );
    assert_eq!(out["commit_sha"], SHA);
    server.stop().await;
}

/// `sudo` reaches the forge as the `Sudo` header, on reads and writes, and is never a query
/// or body field.
#[tokio::test]
async fn sudo_is_sent_as_the_sudo_header() {
    let forge = tool_world::forge().await;
    let server = server(&forge).await;
    let (me, request) = write(&server, &forge, "get_me", json!({"sudo": "bob"})).await;
    assert_eq!(
        me["login"], "alice",
        "the fake forge ignores sudo; the header is what counts"
    );
    assert_eq!(request.header("sudo"), Some("bob"));
    assert_eq!(
        request.header("authorization"),
        Some(format!("token {GOOD_TOKEN}").as_str())
    );
    assert!(request.query.is_empty());

    let (_, request) = write(
        &server,
        &forge,
        "update_issue",
        json!({"owner": "acme", "repo": "widgets", "index": 12, "state": "closed", "sudo": "bob"}),
    )
    .await;
    assert_eq!(request.method, "PATCH");
    assert_eq!(request.header("sudo"), Some("bob"));
    assert_eq!(request.body, Some(json!({"state": "closed"})));

    let (_, request) = write(
        &server,
        &forge,
        "list_repo_issues",
        json!({"owner": "acme", "repo": "widgets", "sudo": "bob"}),
    )
    .await;
    assert_eq!(request.header("sudo"), Some("bob"));
    assert_eq!(request.query("sudo"), None);

    let (_, request) = write(&server, &forge, "get_me", json!({})).await;
    assert_eq!(request.header("sudo"), None, "no sudo, no header");
    server.stop().await;
}

/// A PUT whose arguments are bound in the query sends them there, under the forge's names,
/// and sends no body.
#[tokio::test]
async fn marking_notifications_read_sends_the_filters_as_query() {
    let forge = tool_world::forge().await;
    forge.route(
        "PUT",
        "/notifications",
        crate::support::fake_forge::Reply::Status(
            205,
            json!([tool_world::tool_fixture("notification.json")]),
        ),
    );
    let server = server(&forge).await;
    let (_, request) = write(
        &server,
        &forge,
        "mark_notifications_read",
        json!({"last_read_at": "2026-11-21T00:00:00Z", "status": "pinned"}),
    )
    .await;
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("PUT", "/notifications")
    );
    assert_eq!(request.body, None);
    assert_eq!(
        request.query,
        [
            ("last_read_at".to_owned(), "2026-11-21T00:00:00Z".to_owned()),
            ("status-types".to_owned(), "pinned".to_owned()),
            ("to-status".to_owned(), "read".to_owned()),
        ],
        "to-status defaults to read"
    );
    server.stop().await;
}
