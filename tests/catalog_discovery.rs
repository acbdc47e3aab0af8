//! Finding the catalog: every template listed with its bounds, and read, refused and not found
//! as its case in `tests/fixtures/catalog/templates.yaml` says (so a new resource is tested
//! from YAML); `resources/list` offering the token's repositories page by page; completion
//! from the forge.

use std::collections::{BTreeSet, HashMap};

use forgelens::engine::Catalog;
use forgelens::manifest::Sources;
use rmcp::model::{CompletionContext, PaginatedRequestParams};
use serde::Deserialize;
use serde_json::Value;

use crate::support::catalog_world::{self, USER_REPOS};
use crate::support::fake_forge::{GOOD_TOKEN, Reply};
use crate::support::fixtures::{LABEL_ID, SHA, load};
use crate::support::{FakeForge, Launch, Server};

fn catalog() -> Catalog {
    forgelens::service::compile(&Sources::builtin()).expect("the built-in manifests compile")
}

/// One template's case, from `tests/fixtures/catalog/templates.yaml`: a URI that reads, one
/// whose parameters are refused, one the forge does not have, and what the forge answers for
/// the read beyond its world.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) good: String,
    invalid: String,
    missing: String,
    #[serde(default)]
    forge: Vec<Answer>,
}

/// An answer of the fake forge: a JSON value or a fixture file, at a path.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    path: String,
    #[serde(default)]
    json: Option<Value>,
    #[serde(default)]
    fixture: Option<String>,
    #[serde(default)]
    status: Option<u16>,
}

impl Answer {
    fn reply(&self) -> Reply {
        let body = match (&self.json, &self.fixture) {
            (Some(json), None) => json.clone(),
            (None, Some(file)) => load(file),
            _ => panic!("{}: give either json or fixture", self.path),
        };
        match self.status {
            None | Some(200) => Reply::Json(body),
            Some(status) => Reply::Status(status, body),
        }
    }
}

/// The cases of a templates file (YAML), with its placeholders filled in.
fn cases_in(text: &str) -> Vec<Case> {
    let text = text
        .replace("{r}", "forgejo://repo/acme/widgets")
        .replace("{sha}", SHA)
        .replace("{label_id}", &LABEL_ID.to_string())
        .replace("{long}", &"a".repeat(256));
    serde_saphyr::from_str(&text).expect("the templates file is a list of cases")
}

const TEMPLATES: &str = include_str!("fixtures/catalog/templates.yaml");

pub(crate) fn cases() -> Vec<Case> {
    cases_in(TEMPLATES)
}

/// The catalog world, plus what `cases` add to it.
pub(crate) async fn forge_for(cases: &[Case]) -> FakeForge {
    let forge = catalog_world::forge().await;
    for answer in cases.iter().flat_map(|c| &c.forge) {
        forge.route("GET", &answer.path, answer.reply());
    }
    forge
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

/// Every template listed has a case, and only those; each case reads, is refused before any
/// request, and is not found, as its entry says.
async fn check_every_template(launch: impl Fn(&FakeForge) -> Launch, cases: &[Case]) {
    let forge = forge_for(cases).await;
    let server = launch(&forge).start().await;
    let listed: BTreeSet<String> = server
        .client
        .list_all_resource_templates()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let tested: BTreeSet<String> = cases.iter().map(|c| c.name.clone()).collect();
    assert_eq!(
        listed, tested,
        "every template listed has a case in tests/fixtures/catalog/templates.yaml, and only those"
    );
    for case in cases {
        let (code, data) = server.read_error(&case.invalid).await;
        assert_eq!(code, -32602, "{}", case.invalid);
        assert_eq!(data["reason"], "invalid_params", "{}", case.invalid);
        assert_eq!(data["uri"], case.invalid.as_str());
    }
    assert!(
        forge.requests().is_empty(),
        "a refused read reached the forge: {:?}",
        forge.requests()
    );
    for case in cases {
        let json = server.read_json(&case.good).await;
        assert!(
            json.as_object().is_some_and(|o| !o.is_empty()),
            "{}: {json}",
            case.good
        );
        let (code, data) = server.read_error(&case.missing).await;
        assert_eq!(code, -32003, "{}: {data}", case.missing);
        assert_eq!(data["reason"], "not_found", "{}", case.missing);
        assert_eq!(data["upstream_status"], 404, "{}", case.missing);
    }
    server.stop().await;
}

#[tokio::test]
async fn every_template_reads_refuses_a_bad_parameter_and_reports_not_found() {
    check_every_template(Launch::new, &cases()).await;
}

/// What AGENTS.md promises: a resource added to resources.yaml, with its case (and the forge's
/// answer) added to templates.yaml, passes the same checks, with no Rust written.
#[tokio::test]
async fn a_resource_added_in_yaml_alone_passes_the_template_checks() {
    const RESOURCE: &str = "
  - name: repo_topics
    title: Repository topics
    uri: forgejo://repo/{owner}/{repo}/topics
    description: The topics a repository is tagged with.
    fetch: GET /repos/{owner}/{repo}/topics
    project:
      topics: $.topics[*] | untrusted(plain)
";
    const CASE: &str = r#"
- name: repo_topics
  good: "{r}/topics"
  invalid: "forgejo://repo/acme/wid%20gets/topics"
  missing: "forgejo://repo/acme/nothing/topics"
  forge:
    - path: /repos/acme/widgets/topics
      json: {"topics": ["cli", "widgets"]}
"#;
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("resources.yaml");
    let builtin = include_str!("../resources.yaml");
    std::fs::write(&manifest, format!("{builtin}{RESOURCE}")).unwrap();
    let cases = cases_in(&format!("{TEMPLATES}{CASE}"));
    let path = manifest.display().to_string();
    check_every_template(
        |forge| Launch::new(forge).arg("--resources").arg(&path),
        &cases,
    )
    .await;
    let forge = forge_for(&cases).await;
    let server = Launch::new(&forge)
        .arg("--resources")
        .arg(&path)
        .start()
        .await;
    let topics = server.read_json("forgejo://repo/acme/widgets/topics").await;
    assert_eq!(topics["topics"], serde_json::json!(["cli", "widgets"]));
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
