//! What the entity answers carry for an agent's next step, through the binary against the tool
//! world: each field is checked in the resource and in the tool that serve the same entity.
//! A pointer must resolve, so a field the projection leaves out fails even where its value is
//! `null`.

use serde_json::{Value, json};

use crate::support::fake_forge::Reply;
use crate::support::fixtures::load;
use crate::support::tool_world::{self, tool_fixture};
use crate::support::{FakeForge, Launch, Server};

const W: &str = "/repos/acme/widgets";

async fn start() -> (FakeForge, Server) {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge).full().start().await;
    (forge, server)
}

fn ow(extra: Value) -> Value {
    let mut args = json!({"owner": "acme", "repo": "widgets"});
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    args
}

/// Every `(pointer, value)` holds in `answer`; `what` names the answer in the message.
fn check(what: &str, answer: &Value, expected: &[(&str, Value)]) {
    for (pointer, value) in expected {
        assert_eq!(
            answer.pointer(pointer),
            Some(value),
            "{what}: `{pointer}` in {answer}"
        );
    }
}

/// The top-level keys of the output schema `tools/list` declares for `tool`.
async fn output_fields(server: &Server, tool: &str) -> Vec<String> {
    let tools = server.client.list_all_tools().await.unwrap();
    let tool = tools
        .iter()
        .find(|t| t.name == tool)
        .unwrap_or_else(|| panic!("{tool} is listed"));
    let schema = tool.output_schema.as_ref().expect("an output schema");
    schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[tokio::test]
async fn an_open_pull_request_says_who_is_asked_where_its_head_lives_and_how_it_was_pushed() {
    let (_forge, server) = start().await;
    // Fields both answers name alike; the fixture is an open pull request from a fork.
    let shared = [
        ("/is_locked", json!(false)),
        ("/requested_reviewers", json!(["alice"])),
        ("/head/repo", json!("bob/widgets")),
        ("/allow_maintainer_edit", json!(true)),
        ("/flow", json!(0)),
        ("/closed_at", Value::Null),
        ("/merged_by", Value::Null),
        ("/merge_commit_sha", Value::Null),
        ("/review_comments_count", json!(1)),
        ("/comments_count", json!(2)),
    ];
    let resource = server.read_json("forgejo://repo/acme/widgets/pr/12").await;
    check("pr resource", &resource, &shared);
    let tool = server
        .call_ok("get_pull_request", ow(json!({"index": 12})))
        .await;
    check("get_pull_request", &tool, &shared);
    let fields = output_fields(&server, "get_pull_request").await;
    for field in [
        "is_locked",
        "flow",
        "requested_reviewers",
        "merged_by",
        "merge_commit_sha",
    ] {
        assert!(fields.iter().any(|f| f == field), "{field} in {fields:?}");
    }

    // The lists say who is asked to review and when a pull request was closed.
    let row = [
        ("/items/0/requested_reviewers", json!(["alice"])),
        ("/items/0/closed_at", Value::Null),
    ];
    let page = server.read_json("forgejo://repo/acme/widgets/pulls").await;
    check("pulls resource", &page, &row);
    let page = server
        .call_ok("list_repo_pull_requests", ow(json!({})))
        .await;
    check("list_repo_pull_requests", &page, &row);
    server.stop().await;
}

#[tokio::test]
async fn a_merged_pull_request_says_who_merged_it_into_which_commit() {
    let (forge, server) = start().await;
    let mut merged = tool_fixture("pull.json");
    let mut alice = load("user.json");
    alice["login"] = json!("alice");
    for (key, value) in [
        ("state", json!("closed")),
        ("is_locked", json!(true)),
        ("requested_reviewers", json!([])),
        ("mergeable", json!(false)),
        ("merged", json!(true)),
        ("merged_at", json!("2026-11-22T10:15:00Z")),
        ("closed_at", json!("2026-11-22T10:15:00Z")),
        ("merged_by", alice),
        (
            "merge_commit_sha",
            json!("4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f"),
        ),
    ] {
        merged[key] = value;
    }
    forge.route("GET", &format!("{W}/pulls/12"), Reply::Json(merged));
    let shared = [
        ("/state", json!("closed")),
        ("/is_locked", json!(true)),
        ("/requested_reviewers", json!([])),
        ("/merged", json!(true)),
        ("/closed_at", json!("2026-11-22T10:15:00Z")),
        ("/merged_by", json!("alice")),
        (
            "/merge_commit_sha",
            json!("4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f"),
        ),
    ];
    let resource = server.read_json("forgejo://repo/acme/widgets/pr/12").await;
    check("pr resource", &resource, &shared);
    let tool = server
        .call_ok("get_pull_request", ow(json!({"index": 12})))
        .await;
    check("get_pull_request", &tool, &shared);
    server.stop().await;
}

#[tokio::test]
async fn the_flow_of_a_pull_request_is_told_when_the_forge_sends_it() {
    let (forge, server) = start().await;
    // An AGit pull request (Forgejo): pushed to refs/for/main, its head is a pull ref of the
    // base repository and has no label.
    let mut agit = tool_fixture("pull.json");
    agit["flow"] = json!(1);
    agit["head"]["label"] = json!("");
    agit["head"]["ref"] = json!("refs/pull/12/head");
    agit["head"]["repo"] = json!({"id": 21, "full_name": "acme/widgets"});
    forge.route("GET", &format!("{W}/pulls/12"), Reply::Json(agit));
    let expected = [("/flow", json!(1)), ("/head/repo", json!("acme/widgets"))];
    let resource = server.read_json("forgejo://repo/acme/widgets/pr/12").await;
    check("pr resource", &resource, &expected);
    let tool = server
        .call_ok("get_pull_request", ow(json!({"index": 12})))
        .await;
    check("get_pull_request", &tool, &expected);

    // Gitea does not send `flow`: the answer says null rather than guess.
    let mut gitea = tool_fixture("pull.json");
    gitea.as_object_mut().unwrap().remove("flow");
    forge.route("GET", &format!("{W}/pulls/12"), Reply::Json(gitea));
    let tool = server
        .call_ok("get_pull_request", ow(json!({"index": 12})))
        .await;
    check("get_pull_request", &tool, &[("/flow", Value::Null)]);
    server.stop().await;
}

#[tokio::test]
async fn a_repository_says_what_the_token_may_do_which_units_are_on_and_how_to_merge() {
    let (_forge, server) = start().await;
    let expected = [
        (
            "/permissions",
            json!({"admin": true, "push": true, "pull": true}),
        ),
        ("/clone_url", json!("http://fake/acme/widgets.git")),
        ("/ssh_url", json!("git@fake:acme/widgets.git")),
        (
            "/units",
            json!({"issues": true, "pull_requests": true, "wiki": true, "releases": true,
                   "actions": true}),
        ),
        (
            "/merge_styles",
            json!({"merge": true, "rebase": true, "rebase-merge": true, "squash": true,
                   "fast-forward-only": false}),
        ),
        ("/default_merge_style", json!("merge")),
        ("/topics", json!(["widgets", "rust"])),
        ("/language", json!("Rust")),
        ("/website", json!("https://widgets.example.org")),
        ("/empty", json!(false)),
        ("/template", json!(false)),
    ];
    let resource = server.read_json("forgejo://repo/acme/widgets").await;
    check("repo resource", &resource, &expected);
    let tool = server.call_ok("get_repo", ow(json!({}))).await;
    check("get_repo", &tool, &expected);
    // The units and merge styles are grouped, not repeated as the forge's flat flags.
    for answer in [&resource, &tool] {
        for flat in [
            "has_issues",
            "has_wiki",
            "allow_merge_commits",
            "allow_rebase",
        ] {
            assert!(answer.get(flat).is_none(), "{flat} in {answer}");
        }
    }
    let fields = output_fields(&server, "get_repo").await;
    for field in [
        "permissions",
        "units",
        "merge_styles",
        "default_merge_style",
    ] {
        assert!(fields.iter().any(|f| f == field), "{field} in {fields:?}");
    }
    server.stop().await;
}

#[tokio::test]
async fn an_issue_says_whether_it_is_locked_and_which_ref_it_is_about() {
    let (forge, server) = start().await;
    // The fixture, like most real issues, names no ref and is not locked.
    let unset = [("/is_locked", json!(false)), ("/ref", json!(""))];
    let resource = server
        .read_json("forgejo://repo/acme/widgets/issue/12")
        .await;
    check("issue resource", &resource, &unset);
    let tool = server.call_ok("get_issue", ow(json!({"index": 12}))).await;
    check("get_issue", &tool, &unset);

    // A locked conversation (only collaborators may comment) about a branch.
    let mut locked = tool_fixture("issue.json");
    locked["is_locked"] = json!(true);
    locked["ref"] = json!("refs/heads/cache-bound");
    forge.route("GET", &format!("{W}/issues/12"), Reply::Json(locked));
    let set = [
        ("/is_locked", json!(true)),
        ("/ref", json!("refs/heads/cache-bound")),
    ];
    let resource = server
        .read_json("forgejo://repo/acme/widgets/issue/12")
        .await;
    check("issue resource", &resource, &set);
    let tool = server.call_ok("get_issue", ow(json!({"index": 12}))).await;
    check("get_issue", &tool, &set);
    server.stop().await;
}

#[tokio::test]
async fn an_owner_promises_no_web_address_or_creation_time_the_forge_does_not_send() {
    let (_forge, server) = start().await;
    // The forge's organization has neither; a user has both, and get_user gives them.
    let org = server.read_json("forgejo://owner/acme").await;
    assert_eq!(org["kind"], "organization");
    assert_eq!(org["login"], "acme");
    assert_eq!(org["website"], "https://acme.example.org");
    let user = server.read_json("forgejo://owner/alice").await;
    assert_eq!(user["kind"], "user");
    for answer in [&org, &user] {
        for key in ["html_url", "created_at"] {
            assert!(answer.get(key).is_none(), "{key} in {answer}");
        }
    }
    let profile = server
        .call_ok("get_user", json!({"username": "alice"}))
        .await;
    assert_eq!(profile["html_url"], "http://fake/alice");
    assert_eq!(profile["created_at"], "2024-02-03T10:11:12Z");
    server.stop().await;
}

/// The property schemas of `schema` that say nothing (`{}`), by their dotted paths.
fn untyped(schema: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            let path = format!("{at}.{name}");
            if sub.as_object().is_some_and(|s| s.is_empty()) {
                out.push(path.clone());
            }
            untyped(sub, &path, out);
        }
    }
    if let Some(items) = schema.get("items") {
        untyped(items, &format!("{at}[]"), out);
    }
}

/// The dotted paths of the leaf properties of `schema`.
fn leaves(schema: &Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match schema.get("properties").and_then(Value::as_object) {
        Some(props) => props
            .iter()
            .for_each(|(name, sub)| leaves(sub, &format!("{at}.{name}"), out)),
        None => match schema.get("items") {
            Some(items) if items.get("properties").is_some() => {
                leaves(items, &format!("{at}[]"), out)
            }
            Some(_) => {
                out.insert(format!("{at}[]"));
            }
            None => {
                out.insert(at.to_owned());
            }
        },
    }
}

/// The dotted paths of `value` that hold something other than null.
fn filled(value: &Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                filled(v, &format!("{at}.{k}"), out);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| filled(v, &format!("{at}[]"), out)),
        Value::Null => {}
        _ => {
            out.insert(at.to_owned());
        }
    }
}

#[tokio::test]
async fn every_output_schema_types_each_field_and_every_read_answer_fits_its_schema() {
    let forge = tool_world::forge().await;
    let server = Launch::new(&forge)
        .token(crate::support::fake_forge::GOOD_TOKEN)
        .full()
        .start()
        .await;
    let tools = server.client.list_all_tools().await.unwrap();
    let mut bare = Vec::new();
    let mut checked = 0;
    let mut seen = std::collections::BTreeSet::new();
    let mut typed = std::collections::BTreeSet::new();
    for tool in crate::support::manifest_tools(&tools) {
        let Some(schema) = &tool.output_schema else {
            continue;
        };
        let schema = Value::Object((**schema).clone());
        untyped(&schema, &tool.name, &mut bare);
        if !crate::support::is_read_only(tool) {
            continue;
        }
        let required = crate::support::required_args(tool);
        let args = tool_world::sample_args(&tool.name, &required).unwrap_or_else(|e| panic!("{e}"));
        let answer = server.call_ok(&tool.name, args).await;
        let validator = jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("{}: the output schema does not compile: {e}", tool.name));
        let errors: Vec<String> = validator
            .iter_errors(&answer)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{} answered outside its output schema: {errors:?}\n{answer}",
            tool.name
        );
        filled(&answer, &tool.name, &mut seen);
        leaves(&schema, &tool.name, &mut typed);
        checked += 1;
    }
    server.stop().await;
    // The check has teeth only where the world fills a field: nine in ten must be filled (the
    // rest are nulls of the fixtures, such as the merge of an open pull request).
    let unfilled: Vec<&String> = typed
        .difference(&seen)
        .filter(|p| !p.ends_with(".next_page"))
        .collect();
    assert!(
        unfilled.len() * 10 < typed.len(),
        "{} of {} typed fields were never filled: {unfilled:?}",
        unfilled.len(),
        typed.len()
    );
    assert!(bare.is_empty(), "fields announced without a type: {bare:?}");
    assert!(checked > 100, "only {checked} read tools were checked");
}

/// The issue resource is `get_issue`'s endpoint with its own `body`: the tool excerpts a long
/// body, the resource shows it whole; every other field is the tool's. Disabling the tool
/// withholds the resource with it.
#[tokio::test]
async fn the_issue_resource_overrides_its_tools_body_and_goes_with_the_tool() {
    let (forge, server) = start().await;
    let mut long = tool_fixture("issue.json");
    long["body"] = json!("word ".repeat(5_000));
    forge.route("GET", &format!("{W}/issues/12"), Reply::Json(long));
    let resource = server
        .read_json("forgejo://repo/acme/widgets/issue/12")
        .await;
    let tool = server.call_ok("get_issue", ow(json!({"index": 12}))).await;
    assert_eq!(resource["body"].as_str().unwrap().len(), 25_000);
    assert!(
        tool["body"].as_str().unwrap().len() < 25_000,
        "{}",
        tool["body"]
    );
    for field in ["index", "title", "state", "author", "labels", "html_url"] {
        assert_eq!(resource[field], tool[field], "{field}");
    }
    assert_eq!(resource["is_pull"], false);
    server.stop().await;

    let server = Launch::new(&forge)
        .arg("--disabled-tools")
        .arg("get_issue")
        .start()
        .await;
    let (code, data) = server
        .read_error("forgejo://repo/acme/widgets/issue/12")
        .await;
    assert_eq!(code, -32602, "{data}");
    server.stop().await;
}

/// A list resource reads its tool's endpoint, so where the answer holds the array is the
/// tool's too: a resource over `list_repo_topics` (`list: {from: $.topics}`) lists the topics,
/// as the tool does, and a list resource cannot say otherwise.
#[tokio::test]
async fn a_list_resource_finds_its_items_where_its_tool_does() {
    let forge = tool_world::forge().await;
    let dir = tempfile::tempdir().unwrap();
    let topics = "  - name: topics\n    title: Topics\n    uri: 'forgejo://repo/{owner}/{repo}/topics{?page,limit}'\n    description: A repository's topics.\n    list: {tool: list_repo_topics}\n\n";
    let builtin = std::fs::read_to_string("resources.yaml").unwrap();
    let path = dir.path().join("resources.yaml");
    std::fs::write(
        &path,
        builtin.replacen("resources:\n", &format!("resources:\n{topics}"), 1),
    )
    .unwrap();
    let server = Launch::new(&forge)
        .arg("--resources")
        .arg(path.to_str().unwrap())
        .start()
        .await;
    let read = server.read_json("forgejo://repo/acme/widgets/topics").await;
    let call = server.call_ok("list_repo_topics", ow(json!({}))).await;
    assert_eq!(
        read["items"],
        json!([{"name": "widgets"}, {"name": "rust"}]),
        "{read:#}"
    );
    assert_eq!(read["items"], call["items"], "{call:#}");
    server.stop().await;

    let own_path = builtin.replacen(
        "resources:\n",
        &format!(
            "resources:\n{}",
            topics.replace(
                "{tool: list_repo_topics}",
                "{tool: list_repo_topics, from: $.names}"
            )
        ),
        1,
    );
    std::fs::write(&path, own_path).unwrap();
    let lint = crate::support::run(
        &["manifest-lint", "--resources", path.to_str().unwrap()],
        &[],
    );
    assert_eq!(lint.code, 1, "{}{}", lint.stdout, lint.stderr);
    assert!(lint.stdout.contains("from"), "{}", lint.stdout);
}
