//! Finding the catalog: every template listed with its bounds, read, refused and not found;
//! `resources/list` offering the token's repositories page by page; completion from the forge.

use std::collections::{BTreeSet, HashMap};

use forgelens::engine::Catalog;
use forgelens::manifest::Sources;
use rmcp::model::{CompletionContext, PaginatedRequestParams};

use crate::support::catalog_world::{self, USER_REPOS};
use crate::support::fake_forge::GOOD_TOKEN;
use crate::support::fixtures::{LABEL_ID, SHA};
use crate::support::{FakeForge, Launch, Server};

fn catalog() -> Catalog {
    forgelens::service::compile(&Sources::builtin()).expect("the built-in manifests compile")
}

/// Every template of the catalog: a URI that reads, one whose parameters are refused, and one
/// the forge does not have.
struct Case {
    name: &'static str,
    good: String,
    invalid: String,
    missing: String,
}

fn cases() -> Vec<Case> {
    let r = "forgejo://repo/acme/widgets";
    let long = "a".repeat(256);
    let case = |name, good: String, invalid: String, missing: String| Case {
        name,
        good,
        invalid,
        missing,
    };
    vec![
        case(
            "owner",
            "forgejo://owner/acme".into(),
            "forgejo://owner/-acme".into(),
            "forgejo://owner/nobody".into(),
        ),
        case(
            "repo",
            r.into(),
            "forgejo://repo/acme/wid%20gets".into(),
            "forgejo://repo/acme/nothing".into(),
        ),
        case(
            "issue",
            format!("{r}/issue/12"),
            format!("{r}/issue/0"),
            format!("{r}/issue/999"),
        ),
        case(
            "pull_request",
            format!("{r}/pr/14"),
            format!("{r}/pr/abc"),
            format!("{r}/pr/999"),
        ),
        case(
            "comment",
            format!("{r}/issue/12/comment/1001"),
            format!("{r}/mr/12/comment/1001"),
            format!("{r}/issue/12/comment/9999"),
        ),
        case(
            "comments",
            format!("{r}/issue/12/comments"),
            format!("{r}/issue/12/comments?page=0"),
            format!("{r}/issue/999/comments"),
        ),
        case(
            "issues",
            format!("{r}/issues"),
            format!("{r}/issues?state=bogus"),
            "forgejo://repo/acme/nothing/issues".into(),
        ),
        case(
            "pulls",
            format!("{r}/pulls?state=all"),
            format!("{r}/pulls?state=merged"),
            "forgejo://repo/acme/nothing/pulls".into(),
        ),
        case(
            "branch_protections",
            format!("{r}/branch_protections"),
            format!("{r}/branch_protections?limit=0"),
            "forgejo://repo/acme/nothing/branch_protections".into(),
        ),
        case(
            "branch_protection",
            format!("{r}/branch_protection/main"),
            format!("{r}/branch_protection/{long}"),
            format!("{r}/branch_protection/nope"),
        ),
        case(
            "hooks",
            format!("{r}/hooks"),
            format!("{r}/hooks?page=x"),
            "forgejo://repo/acme/nothing/hooks".into(),
        ),
        case(
            "hook",
            format!("{r}/hook/5"),
            format!("{r}/hook/abc"),
            format!("{r}/hook/999"),
        ),
        case(
            "wiki_page",
            format!("{r}/wiki/Home"),
            format!("{r}/wiki/{long}"),
            format!("{r}/wiki/Nope"),
        ),
        case(
            "contents",
            format!("{r}/contents/src/lib.rs"),
            format!("{r}/contents/src/lib.rs?start_line=5&end_line=2"),
            format!("{r}/contents/src/nope.rs"),
        ),
        case(
            "root_contents",
            format!("{r}/contents"),
            format!("{r}/contents?limit=abc"),
            "forgejo://repo/acme/nothing/contents".into(),
        ),
        case(
            "releases",
            format!("{r}/releases"),
            format!("{r}/releases?page=0"),
            "forgejo://repo/acme/nothing/releases".into(),
        ),
        case(
            "release",
            format!("{r}/release/v1.2.0"),
            format!("{r}/release/{long}"),
            format!("{r}/release/v9.9.9"),
        ),
        case(
            "milestones",
            format!("{r}/milestones"),
            format!("{r}/milestones?state=late"),
            "forgejo://repo/acme/nothing/milestones".into(),
        ),
        case(
            "milestone",
            format!("{r}/milestone/1"),
            format!("{r}/milestone/0"),
            format!("{r}/milestone/999"),
        ),
        case(
            "branches",
            format!("{r}/branches"),
            format!("{r}/branches?limit=-1"),
            "forgejo://repo/acme/nothing/branches".into(),
        ),
        case(
            "branch",
            format!("{r}/branch/feature/login"),
            format!("{r}/branch/{long}"),
            format!("{r}/branch/nope"),
        ),
        case(
            "repo_label",
            format!("{r}/label/{LABEL_ID}"),
            format!("{r}/label/x"),
            format!("{r}/label/999"),
        ),
        case(
            "repo_labels",
            format!("{r}/labels"),
            format!("{r}/labels?sort=name"),
            "forgejo://repo/acme/nothing/labels".into(),
        ),
        case(
            "org_labels",
            "forgejo://org/acme/labels".into(),
            "forgejo://org/acme/labels?limit=0".into(),
            "forgejo://org/nobody/labels".into(),
        ),
        case(
            "commit",
            format!("{r}/commit/{SHA}"),
            format!("{r}/commit/main"),
            format!("{r}/commit/{}", "e".repeat(40)),
        ),
        case(
            "commit_status",
            format!("{r}/commit/{SHA}/status"),
            format!("{r}/commit/{}/status", &SHA[..12]),
            format!("forgejo://repo/acme/nothing/commit/{SHA}/status"),
        ),
    ]
}

/// The names of the templates the server lists, and of the cases.
async fn template_names(server: &Server) -> (BTreeSet<String>, BTreeSet<String>) {
    let listed = server
        .client
        .list_all_resource_templates()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let tested = cases().iter().map(|c| c.name.to_owned()).collect();
    (listed, tested)
}

async fn start() -> (FakeForge, Server) {
    let forge = catalog_world::forge().await;
    let server = Launch::new(&forge).start().await;
    (forge, server)
}

#[tokio::test]
async fn every_template_is_listed_with_a_title_and_states_its_bounds_and_fallback_tool() {
    let (_forge, server) = start().await;
    let templates = server.client.list_all_resource_templates().await.unwrap();
    let catalog = catalog();
    for resource in catalog.resources().iter().filter(|r| !r.is_concrete()) {
        let t = templates
            .iter()
            .find(|t| t.uri_template == resource.template.as_str())
            .unwrap_or_else(|| panic!("{} is not listed", resource.template.as_str()));
        assert_eq!(t.name, resource.name);
        assert!(
            t.title.as_deref().is_some_and(|s| !s.trim().is_empty()),
            "{}",
            t.name
        );
        let description = t.description.as_deref().unwrap_or_default();
        assert!(!description.trim().is_empty(), "{}", t.name);
        for (field, cap, tool) in resource.bounds() {
            let cap_said = match field {
                None => format!("clamped to {cap}"),
                Some(field) => format!("Embeds `{field}`: the newest {cap} items at most"),
            };
            let cap_said_oldest =
                field.map(|f| format!("Embeds `{f}`: the first {cap} items at most"));
            assert!(
                description.contains(&cap_said)
                    || cap_said_oldest.is_some_and(|s| description.contains(&s)),
                "{}: the bound {field:?} ≤ {cap} is not stated: {description}",
                t.name
            );
            assert!(
                description.contains(&format!("the `{tool}` tool")),
                "{}: the fallback tool `{tool}` is not named: {description}",
                t.name
            );
        }
    }
    let by_name: HashMap<String, String> = templates
        .iter()
        .map(|t| {
            (
                t.name.to_string(),
                t.description.clone().unwrap_or_default(),
            )
        })
        .collect();
    for (name, bound) in [
        ("issue", "the `list_issue_comments` tool"),
        ("pull_request", "the `list_pull_reviews` tool"),
        ("wiki_page", "the `get_wiki_revisions` tool"),
        ("contents", "the `list_repo_contents` tool"),
        ("contents", "`start_line`, `end_line`"),
        ("comments", "the `list_issue_comments` tool"),
        ("hooks", "never returned"),
    ] {
        assert!(by_name[name].contains(bound), "{name}: {}", by_name[name]);
    }
    server.stop().await;
}

#[tokio::test]
async fn every_template_has_a_good_read() {
    let (_forge, server) = start().await;
    let (listed, tested) = template_names(&server).await;
    assert_eq!(
        listed, tested,
        "every template listed has a case here, and only those"
    );
    for case in cases() {
        let json = server.read_json(&case.good).await;
        assert!(
            json.as_object().is_some_and(|o| !o.is_empty()),
            "{}: {json}",
            case.good
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn every_template_refuses_a_bad_parameter_before_any_request() {
    let (forge, server) = start().await;
    for case in cases() {
        let (code, data) = server.read_error(&case.invalid).await;
        assert_eq!(code, -32602, "{}", case.invalid);
        assert_eq!(data["reason"], "invalid_params", "{}", case.invalid);
        assert_eq!(data["uri"], case.invalid.as_str());
    }
    assert!(
        forge.requests().is_empty(),
        "no upstream request: {:?}",
        forge.requests()
    );
    server.stop().await;
}

#[tokio::test]
async fn every_template_reports_what_the_forge_does_not_have_as_not_found() {
    let (_forge, server) = start().await;
    for case in cases() {
        let (code, data) = server.read_error(&case.missing).await;
        assert_eq!(code, -32003, "{}: {data}", case.missing);
        assert_eq!(data["reason"], "not_found", "{}", case.missing);
        assert_eq!(data["upstream_status"], 404, "{}", case.missing);
    }
    server.stop().await;
}

fn cursor(c: &str) -> Option<PaginatedRequestParams> {
    Some(PaginatedRequestParams::default().with_cursor(Some(c.into())))
}

#[tokio::test]
async fn with_a_token_resources_list_pages_through_the_users_repositories() {
    let forge = catalog_world::forge().await;
    let server = Launch::new(&forge).token(GOOD_TOKEN).start().await;
    let first = server.client.list_resources(None).await.unwrap();
    let uris: Vec<&str> = first.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris.len(), 51, "the instance and the first 50 repositories");
    assert_eq!(uris[0], "forgejo://instance");
    assert_eq!(uris[1], "forgejo://repo/alice/project-01");
    assert_eq!(uris[50], "forgejo://repo/alice/project-50");
    let one = &first.resources[1];
    assert_eq!(one.name, "alice/project-01");
    assert_eq!(one.description.as_deref(), Some("Repository project-01"));
    assert_eq!(one.mime_type.as_deref(), Some("application/json"));

    let next = first.next_cursor.clone().expect("a second page");
    let second = server.client.list_resources(cursor(&next)).await.unwrap();
    let uris: Vec<&str> = second.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        (51..=USER_REPOS)
            .map(|i| format!("forgejo://repo/alice/project-{i}"))
            .collect::<Vec<_>>()
    );
    assert_eq!(second.next_cursor, None);

    let requests: Vec<_> = forge
        .requests()
        .into_iter()
        .filter(|r| r.path == "/user/repos")
        .collect();
    let pages: Vec<(Option<&str>, Option<&str>)> = requests
        .iter()
        .map(|r| (r.query("page"), r.query("limit")))
        .collect();
    assert_eq!(pages, [(Some("1"), Some("50")), (Some("2"), Some("50"))]);
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some(format!("token {GOOD_TOKEN}").as_str()))
    );

    let all = server.client.list_all_resources().await.unwrap();
    assert_eq!(all.len() as u64, 1 + USER_REPOS);
    let unique: BTreeSet<&str> = all.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(unique.len(), all.len(), "no resource twice");

    for bad in ["nope", "0:0", "0:x", "1:1", "7", ""] {
        let err = server.client.list_resources(cursor(bad)).await.unwrap_err();
        match err {
            rmcp::ServiceError::McpError(e) => assert_eq!(e.code.0, -32602, "{bad:?}"),
            other => panic!("{bad:?}: {other}"),
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn without_a_token_resources_list_does_not_ask_for_user_repositories() {
    let (forge, server) = start().await;
    let listed = server.client.list_resources(None).await.unwrap();
    let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["forgejo://instance"]);
    assert_eq!(listed.next_cursor, None);
    // No source applies, so no cursor names one.
    let err = server
        .client
        .list_resources(cursor("0:1"))
        .await
        .unwrap_err();
    match err {
        rmcp::ServiceError::McpError(e) => assert_eq!(e.code.0, -32602),
        other => panic!("{other}"),
    }
    assert!(
        forge.requests().iter().all(|r| r.path != "/user/repos"),
        "{:?}",
        forge.requests()
    );
    server.stop().await;
}

#[tokio::test]
async fn completion_is_advertised_and_offers_owners_and_repos_from_the_forge() {
    let (forge, server) = start().await;
    let info = server.client.peer_info().expect("initialized");
    assert!(
        info.capabilities.completions.is_some(),
        "the server declares the completions capability"
    );

    let owners = server
        .client
        .complete_resource_argument("forgejo://owner/{owner}", "owner", "a", None)
        .await
        .unwrap();
    assert_eq!(owners.values, ["acme", "albert", "alice", "anvil"]);
    let search = forge
        .requests()
        .into_iter()
        .find(|r| r.path == "/users/search")
        .expect("the user search was asked");
    assert_eq!(search.query("q"), Some("a"));
    assert!(forge.requests().iter().any(|r| r.path == "/orgs"));

    let only_b = server
        .client
        .complete_resource_argument("forgejo://repo/{owner}/{repo}", "owner", "B", None)
        .await
        .unwrap();
    assert_eq!(only_b.values, ["bob"], "prefixes match without case");

    forge.clear_log();
    let context =
        CompletionContext::with_arguments(HashMap::from([("owner".to_owned(), "acme".to_owned())]));
    let repos = server
        .client
        .complete_resource_argument(
            "forgejo://repo/{owner}/{repo}/issue/{index}",
            "repo",
            "w",
            Some(context),
        )
        .await
        .unwrap();
    assert_eq!(
        repos.values,
        ["widgets", "wombat"],
        "only the owner's repositories"
    );
    let search = forge
        .requests()
        .into_iter()
        .find(|r| r.path == "/repos/search")
        .expect("the repository search was asked");
    assert_eq!(search.query("q"), Some("w"));

    forge.clear_log();
    let kinds = server
        .client
        .complete_resource_argument(
            "forgejo://repo/{owner}/{repo}/{kind}/{index}/comment/{id}",
            "kind",
            "",
            None,
        )
        .await
        .unwrap();
    assert_eq!(kinds.values, ["issue", "pr"]);
    assert!(
        forge.requests().is_empty(),
        "an enumeration is completed without the forge"
    );
    server.stop().await;
}
