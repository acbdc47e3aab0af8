//! `--lockdown`, through the binary against the tool world: on the public `acme/widgets`, text by
//! `alice` (read access) and by accounts the forge gives no verdict on is withheld, text by
//! `bob` (write access) and by the owner passes, and `include_untrusted` reads it on purpose.

use serde_json::{Value, json};

use crate::support::fake_forge::{FakeForge, GOOD_TOKEN, Reply};
use crate::support::tool_world::{self, tool_fixture};
use crate::support::{Launch, Server, enveloped};

const W: &str = "/repos/acme/widgets";

async fn start(lockdown: bool) -> (FakeForge, Server) {
    let forge = tool_world::forge().await;
    forge.route(
        "GET",
        &format!("{W}/collaborators/alice/permission"),
        Reply::Json(json!({"permission": "read", "role_name": "read"})),
    );
    let mut launch = Launch::new(&forge).token(GOOD_TOKEN).full();
    if lockdown {
        launch = launch.env("FORGELENS_LOCKDOWN", "true");
    }
    (forge, launch.start().await)
}

/// An issue `n` by `author` with comments by each of `commenters`, bodies naming who wrote them.
fn plant(forge: &FakeForge, n: u64, author: &str, commenters: &[&str]) {
    let mut issue = tool_fixture("issue.json");
    issue["number"] = json!(n);
    issue["user"]["login"] = json!(author);
    issue["title"] = json!(format!("title by {author}"));
    issue["body"] = json!(format!("body by {author}"));
    let comments: Vec<Value> = commenters
        .iter()
        .enumerate()
        .map(|(i, who)| {
            let mut c = tool_fixture("comment.json");
            c["id"] = json!(9000 + i);
            c["user"]["login"] = json!(who);
            c["body"] = json!(format!("comment by {who}"));
            c
        })
        .collect();
    issue["comments"] = json!(comments.len());
    forge.route("GET", &format!("{W}/issues/{n}"), Reply::Json(issue));
    forge.route(
        "GET",
        &format!("{W}/issues/{n}/comments"),
        Reply::Whole(comments),
    );
}

fn permission_requests(forge: &FakeForge) -> Vec<String> {
    forge
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/permission"))
        .map(|r| r.path)
        .collect()
}

#[tokio::test]
async fn an_outsiders_text_is_withheld_and_a_collaborators_passes() {
    let (forge, server) = start(true).await;
    plant(&forge, 40, "alice", &["alice", "bob", "mallory", "acme"]);
    let result = server
        .read("forgejo://repo/acme/widgets/issue/40")
        .await
        .unwrap();
    let text: Vec<String> = result
        .contents
        .iter()
        .filter_map(|c| match c {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    let json: Value = serde_json::from_str(&text[0]).unwrap();
    for field in ["title", "body"] {
        let notice = json[field].as_str().unwrap();
        assert!(
            notice.starts_with(
                "[withheld by lockdown: written by alice, who cannot write to acme/widgets"
            ) && notice
                .contains("read forgejo://repo/acme/widgets/issue/40?include_untrusted=true"),
            "{field}: {notice}"
        );
    }
    let comments: Vec<&str> = json["recent_comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body_excerpt"].as_str().unwrap())
        .collect();
    assert!(comments[0].contains("written by alice"), "{comments:?}");
    assert_eq!(comments[1], "comment by bob");
    assert!(
        comments[2].contains("written by mallory"),
        "no verdict withholds: {comments:?}"
    );
    assert_eq!(comments[3], "comment by acme", "the owner is trusted");
    assert!(
        !text
            .iter()
            .any(|t| t.contains("by alice") && !t.contains("withheld"))
    );
    assert!(
        text[1].starts_with("[withheld by lockdown: written by alice"),
        "{}",
        text[1]
    );

    // Read on purpose, it is all there, enveloped.
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/issue/40?include_untrusted=true")
        .await;
    let json: Value = serde_json::from_str(&blocks[0].1).unwrap();
    assert_eq!(json["title"], "title by alice");
    assert_eq!(
        json["recent_comments"][2]["body_excerpt"],
        "comment by mallory"
    );
    assert!(enveloped(&blocks[1].1).1.contains("body by alice"));

    // The same through tools.
    let issue = server
        .call_ok(
            "get_issue",
            json!({"owner": "acme", "repo": "widgets", "index": 40}),
        )
        .await;
    assert!(
        issue["body"]
            .as_str()
            .unwrap()
            .contains("call get_issue again with include_untrusted: true"),
        "{issue}"
    );
    let page = server
        .call_ok(
            "list_issue_comments",
            json!({"owner": "acme", "repo": "widgets", "index": 40}),
        )
        .await;
    let bodies: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap())
        .collect();
    assert!(
        bodies[0].starts_with("[withheld") && bodies[1] == "comment by bob",
        "{bodies:?}"
    );
    let revealed = server
        .call_ok(
            "get_issue",
            json!({"owner": "acme", "repo": "widgets", "index": 40, "include_untrusted": true}),
        )
        .await;
    assert_eq!(revealed["body"], "body by alice");
    server.stop().await;
}

#[tokio::test]
async fn each_author_costs_one_permission_request_per_repository() {
    let (forge, server) = start(true).await;
    plant(&forge, 41, "alice", &["alice", "bob", "bob", "mallory"]);
    forge.clear_log();
    for _ in 0..3 {
        server
            .read("forgejo://repo/acme/widgets/issue/41")
            .await
            .unwrap();
        server
            .call_ok(
                "list_issue_comments",
                json!({"owner": "acme", "repo": "widgets", "index": 41}),
            )
            .await;
    }
    let mut asked = permission_requests(&forge);
    asked.sort();
    assert_eq!(
        asked,
        [
            format!("{W}/collaborators/alice/permission"),
            format!("{W}/collaborators/bob/permission"),
            format!("{W}/collaborators/mallory/permission"),
        ],
        "one request per author and repository"
    );
    let visibility = forge.requests().iter().filter(|r| r.path == W).count();
    assert_eq!(visibility, 1, "the repository's visibility is asked once");
    server.stop().await;
}

/// `get_issue` of an issue by alice shows her body, and no permission is asked.
async fn assert_unfiltered(forge: &FakeForge, server: Server) {
    plant(forge, 42, "alice", &["mallory"]);
    forge.clear_log();
    let issue = server
        .call_ok(
            "get_issue",
            json!({"owner": "acme", "repo": "widgets", "index": 42}),
        )
        .await;
    assert_eq!(issue["body"], "body by alice");
    assert!(permission_requests(forge).is_empty());
    server.stop().await;
}

#[tokio::test]
async fn a_private_repository_and_a_server_without_lockdown_are_not_filtered() {
    let (forge, server) = start(false).await;
    assert_unfiltered(&forge, server).await;

    let (forge, server) = start(true).await;
    let mut repo = tool_fixture("repo.json");
    repo["private"] = json!(true);
    forge.route("GET", W, Reply::Json(repo));
    assert_unfiltered(&forge, server).await;
}

#[tokio::test]
async fn in_lockdown_no_outsiders_payload_arrives_and_every_collaborators_does() {
    let corpus: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string("tests/fixtures/injection/corpus.json").unwrap(),
    )
    .unwrap();
    let (forge, server) = start(true).await;
    for (who, arrives) in [("alice", false), ("mallory", false), ("bob", true)] {
        let comments: Vec<Value> = corpus
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut c = tool_fixture("comment.json");
                c["id"] = json!(1000 + i);
                c["user"]["login"] = json!(who);
                c["body"] = p["text"].clone();
                c
            })
            .collect();
        let mut issue = tool_fixture("issue.json");
        issue["number"] = json!(43);
        issue["user"]["login"] = json!(who);
        issue["body"] = json!(corpus[0]["text"]);
        issue["comments"] = json!(comments.len());
        forge.route("GET", &format!("{W}/issues/43"), Reply::Json(issue));
        forge.route(
            "GET",
            &format!("{W}/issues/43/comments"),
            Reply::Whole(comments),
        );
        let mut page = String::new();
        for n in [1, 2] {
            let answer = server
                .call_ok(
                    "list_issue_comments",
                    json!({"owner": "acme", "repo": "widgets", "index": 43, "page": n, "limit": 50}),
                )
                .await;
            page.push_str(&answer.to_string());
        }
        let read = server
            .read_blocks("forgejo://repo/acme/widgets/issue/43")
            .await;
        let delivered = format!(
            "{page}{}",
            read.iter().map(|(_, t)| t.as_str()).collect::<String>()
        );
        for p in &corpus {
            let marker = p["id"].as_str().unwrap().replace("inj-", "INJ-");
            let listed = page.contains(&marker);
            assert_eq!(listed, arrives, "{who}: {marker} in the comments");
            if !arrives {
                assert!(!delivered.contains(&marker), "{who}: {marker} arrived");
            }
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn text_from_many_repositories_is_withheld_for_want_of_one_to_ask() {
    let (forge, server) = start(true).await;
    forge.clear_log();
    let found = server.call_ok("search_issues", json!({"q": "cache"})).await;
    let title = found["items"][0]["title"].as_str().unwrap();
    assert!(
        title.starts_with(
            "[withheld by lockdown: written by alice, in an answer without one repository"
        ) && title.contains("call search_issues again with include_untrusted: true"),
        "{title}"
    );
    assert!(permission_requests(&forge).is_empty());
    let revealed = server
        .call_ok(
            "search_issues",
            json!({"q": "cache", "include_untrusted": true}),
        )
        .await;
    assert_eq!(
        revealed["items"][0]["title"],
        "Widget cache grows without bound"
    );
    server.stop().await;
}
