//! Continuations carry every bound value: for every list resource of the shipped manifests,
//! with random filters and page sizes, the call its sentinel names (the list tool with the
//! read's filters, page and limit) sends the forge exactly the request that reading its `next`
//! URI sends. Both are planned without a forge: the engine plans requests without I/O.

use proptest::prelude::*;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use forgelens::engine::Catalog;
use forgelens::engine::resource::Slot;
use forgelens::manifest::Sources;

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    forgelens::service::compile(&Sources::builtin()).expect("the built-in manifests compile")
});

/// Candidate values for a variable, some of which its rule refuses (those cases are skipped).
fn candidates(var: &str) -> Vec<&'static str> {
    match var {
        "owner" | "org" => vec!["acme", "a.b", "x-y"],
        "repo" => vec!["widgets", "w_2"],
        "state" => vec!["open", "closed", "all"],
        "labels" => vec!["bug", "bug,ui", "kind/bug,area/cache", "ä"],
        "ref" => vec!["main", "v1.2.0", "feature/x"],
        "index" => vec!["1", "12"],
        "kind" => vec!["issue", "pr"],
        "path" => vec!["src", "docs/guide"],
        "id" => vec!["7", "42"],
        _ => vec!["x"],
    }
}

/// The list resources of the shipped manifests.
fn lists() -> Vec<&'static forgelens::engine::Resource> {
    CATALOG
        .resources()
        .iter()
        .filter(|r| r.template.query_vars().iter().any(|v| v == "page"))
        .collect()
}

/// A forge answer of `body`, counting `total` rows when given.
fn answered(body: Value, total: Option<u64>) -> forgelens::forge::Response {
    forgelens::forge::Response {
        status: 200,
        total_count: total,
        has_next: None,
        body: forgelens::forge::Body::Json(body),
    }
}

fn request_of(planned: &forgelens::forge::Request) -> (String, String, Vec<(String, String)>) {
    let mut query = planned.query.clone();
    query.sort();
    (
        planned.method.as_str().to_owned(),
        planned.path.clone(),
        query,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_sentinels_call_continues_the_same_filtered_sequence(
        pick in proptest::collection::vec(0usize..8, 8),
        drop in proptest::collection::vec(any::<bool>(), 8),
        page in 1u64..5,
        limit in 1u64..30,
        which in 0usize..64,
    ) {
        let catalog = &*CATALOG;
        let lists = lists();
        let resource = lists[which % lists.len()];
        let template = &resource.template;
        let query = std::cell::RefCell::new(Vec::new());
        let value = |i: usize, var: &str| {
            let c = candidates(var);
            c[pick[i % pick.len()] % c.len()].to_owned()
        };
        let uri = template.expand(|var| {
            let i = template.vars().position(|v| v == var).unwrap_or(0);
            match var {
                "page" => Some(page.to_string()),
                "limit" => Some(limit.to_string()),
                _ if template.query_vars().iter().any(|v| v == var) && drop[i % drop.len()] => None,
                _ => {
                    if template.query_vars().iter().any(|v| v == var) {
                        query.borrow_mut().push(var.to_owned());
                    }
                    Some(value(i, var))
                }
            }
        });
        let Ok(read) = catalog.route(&uri) else {
            // A value the variable's rule refuses: nothing to continue.
            return Ok(());
        };
        let continuation = read.continuation(page + 1, limit);
        prop_assert!(continuation.contains_key("page"), "{uri} is a list");
        // What the agent adds from the read's context: the path's variables the tool takes.
        let tool_name = read.list_tool().expect("a list names its tool").to_owned();
        let tool = catalog.tool(&tool_name).expect("the list's tool exists");
        let mut args: Map<String, Value> = continuation.clone();
        for var in template.path_vars() {
            if tool.takes_array(var).is_some() {
                args.insert(var.to_owned(), read.args[var].clone());
            }
        }
        // Every filter the read was given is carried.
        for var in query.borrow().iter() {
            if tool.takes_array(var).is_some() {
                prop_assert!(continuation.contains_key(var), "{uri}: {var} is not carried: {continuation:?}");
            }
        }
        let by_tool = tool
            .prepare(args.clone())
            .and_then(|call| call.request())
            .unwrap_or_else(|e| panic!("{uri}: the sentinel's call {tool_name} {args:?} is refused: {e}"));
        let next = catalog.route(&read.next_uri(page + 1, limit)).expect("next routes");
        let planned = next.plan().expect("next plans");
        let by_next = planned
            .iter()
            .find(|p| p.slot == Slot::Primary(0))
            .expect("a primary request");
        prop_assert_eq!(
            request_of(&by_tool),
            request_of(&by_next.request),
            "{} → {:?}", uri, args
        );
    }
}

/// The bug this guards: a filtered read's sentinel named the tool without the filter, so that
/// following it listed open issues after closed ones.
#[tokio::test]
async fn a_filtered_reads_sentinel_names_its_filters() {
    let forge = crate::support::tool_world::forge().await;
    let server = crate::support::Launch::new(&forge).start().await;
    let page = server
        .read_json("forgejo://repo/acme/widgets/issues?state=closed&labels=kind/bug,ui&limit=1")
        .await;
    assert_eq!(
        page["truncated"],
        "[truncated: 1 of 2 items shown. Use list_repo_issues tool with state=closed, labels=[\"kind/bug\",\"ui\"], page=2 and limit=1 to fetch more.]"
    );
    let entry = crate::support::tool_world::tool_fixture("content_file.json");
    forge.route(
        "GET",
        "/repos/acme/widgets/contents/src",
        crate::support::fake_forge::Reply::Whole(vec![entry.clone(), entry]),
    );
    let dir = server
        .read_json("forgejo://repo/acme/widgets/contents/src?ref=main&limit=1")
        .await;
    assert_eq!(
        dir["truncated"],
        "[truncated: 1 of 2 items shown. Use list_repo_contents tool with ref=main, path=src, page=2 and limit=1 to fetch more.]"
    );
    server.stop().await;
}

/// One row of a forge list, with the fields the shipped lists project (numbered, so that two
/// windows of a list differ).
fn row(n: u64) -> Value {
    serde_json::json!({
        "id": n, "number": n, "title": format!("title {n}"), "name": format!("name {n}"),
        "state": "open", "body": format!("body {n}"), "user": {"login": format!("user{n}")},
        "author": {"login": "ann", "name": "Ann"}, "labels": [{"name": "bug"}],
        "assignees": [{"login": "bob"}], "requested_reviewers": [], "comments": n,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-02T00:00:00Z",
        "tag_name": format!("v{n}"), "draft": false, "prerelease": false, "merged": false,
        "path": format!("src/f{n}"), "type": "file", "size": n, "sha": format!("{n:040}"),
        "commit": {"id": format!("{n:040}"), "message": "subject\nbody"},
        "head": {"label": "ann:fix", "ref": "fix"}, "base": {"ref": "main"},
        "rule_name": format!("rule{n}"), "enable_push": true, "required_approvals": 1,
        "config": {"url": "https://hooks.example/x", "content_type": "json"},
        "events": ["push"], "active": true, "color": "ff0000", "open_issues": 1,
        "closed_issues": 2, "due_on": null, "protected": false,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A list resource's items are its tool's items: reading the `next` URI and making the
    /// sentinel's call on the same forge answer give the same rows under the same field names
    /// (the resource may show fewer fields).
    #[test]
    fn the_next_page_and_the_sentinels_call_show_the_same_fields(
        page in 1u64..4,
        limit in 1u64..10,
        which in 0usize..64,
    ) {
        let catalog = &*CATALOG;
        let lists = lists();
        let resource = lists[which % lists.len()];
        let template = &resource.template;
        let uri = template.expand(|var| match var {
            "page" => Some(page.to_string()),
            "limit" => Some(limit.to_string()),
            _ if template.query_vars().iter().any(|v| v == var) => None,
            _ => Some(candidates(var)[0].to_owned()),
        });
        let read = catalog.route(&uri).unwrap_or_else(|e| panic!("{uri}: {e}"));
        let tool_name = read.list_tool().expect("a list names its tool").to_owned();
        let tool = catalog.tool(&tool_name).expect("the list's tool exists");
        let mut args = read.continuation(page + 1, limit);
        for var in template.path_vars() {
            if tool.takes_array(var).is_some() {
                args.insert(var.to_owned(), read.args[var].clone());
            }
        }
        let rows: Vec<Value> = (1..=(page + 2) * limit).map(row).collect();
        let answer = |body: Value| answered(body, Some(rows.len() as u64));
        let next = catalog.route(&read.next_uri(page + 1, limit)).expect("next routes");
        let answers = next
            .plan()
            .expect("next plans")
            .into_iter()
            .map(|planned| forgelens::engine::resource::Answer {
                slot: planned.slot,
                result: Ok(answer(match planned.slot {
                    Slot::Primary(_) => Value::Array(rows.clone()),
                    // A parent the read checks: a pull request when the URI says `pr`.
                    _ => serde_json::json!({"pull_request": (read.args.get("kind") == Some(&Value::from("pr"))).then(|| serde_json::json!({}))}),
                })),
            })
            .collect();
        let output = next.assemble(answers, &crate::support::serving()).unwrap_or_else(|e| panic!("{uri}: {e}"));
        let by_next: Value = serde_json::from_str(&output.blocks[0].text).expect("the JSON block");
        let serving = crate::support::serving();
        let by_tool = tool
            .prepare(args.clone())
            .and_then(|call| call.finish(answer(Value::Array(rows.clone())), &serving))
            .unwrap_or_else(|e| panic!("{uri}: the sentinel's call {tool_name} {args:?}: {e}"));
        let (shown, called) = (by_next["items"].as_array().unwrap(), by_tool["items"].as_array().unwrap());
        prop_assert_eq!(shown.len(), called.len(), "{}", uri);
        prop_assert!(!shown.is_empty(), "{}: page {} has rows", uri, page + 1);
        for (mine, theirs) in shown.iter().zip(called) {
            for (field, value) in mine.as_object().unwrap() {
                prop_assert_eq!(Some(value), theirs.get(field), "{} field {} of {}", uri, field, tool_name);
            }
        }
    }
}

/// An entity that names its tool shows the tool's fields: read and called on the same forge
/// answer, every field the two share has the same value (the resource may add fields the tool
/// does not have, show fewer, and give its own expression for one, as `issue` does for `body`).
#[test]
fn an_entity_and_its_tool_show_the_same_fields() {
    let catalog = &*CATALOG;
    let entities: Vec<_> = catalog
        .resources()
        .iter()
        .filter(|r| r.endpoint().is_some() && !r.template.query_vars().iter().any(|v| v == "page"))
        .collect();
    assert!(
        entities.len() >= 8,
        "entities that name their tool: {}",
        entities.len()
    );
    let manifests = forgelens::manifest::parse(&Sources::builtin()).expect("the manifests parse");
    let body = row(7);
    let answer = || answered(body.clone(), None);
    let serving = crate::support::serving();
    for resource in entities {
        let template = &resource.template;
        let uri = template.expand(|var| match template.query_vars().iter().any(|v| v == var) {
            true => None,
            false => Some(candidates(var)[0].to_owned()),
        });
        let read = catalog.route(&uri).unwrap_or_else(|e| panic!("{uri}: {e}"));
        let answers = read
            .plan()
            .expect("the read plans")
            .into_iter()
            .map(|planned| forgelens::engine::resource::Answer {
                slot: planned.slot,
                result: Ok(match planned.slot {
                    Slot::Primary(_) => answer(),
                    _ => answered(Value::Array(vec![]), None),
                }),
            })
            .collect();
        let output = read
            .assemble(answers, &crate::support::serving())
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        let shown: Value = serde_json::from_str(&output.blocks[0].text).expect("the JSON block");
        let name = resource.endpoint().expect("filtered on it");
        let tool = catalog.tool(name).expect("the entity's tool exists");
        // A tool argument takes the variable of its name, or the one the resource's `args` give it.
        let def = manifests
            .resources
            .resources
            .iter()
            .find(|r| r.name.value == resource.name)
            .expect("the resource is in the manifest");
        let renames = &def.args;
        let overridden = |field: &str| def.project.as_ref().is_some_and(|p| p.contains_key(field));
        let arg_of = |var: &str| {
            renames
                .iter()
                .find(|(_, v)| v.value == var)
                .map_or(var.to_owned(), |(arg, _)| arg.clone())
        };
        let args: Map<String, Value> = template
            .vars()
            .map(|v| (arg_of(v), read.args[v].clone()))
            .filter(|(arg, _)| tool.takes_array(arg).is_some())
            .collect();
        let called = tool
            .prepare(args.clone())
            .and_then(|call| call.finish(answer(), &serving))
            .unwrap_or_else(|e| panic!("{uri}: {name} {args:?}: {e}"));
        let mut shared = 0;
        for (field, value) in shown.as_object().unwrap() {
            if let Some(theirs) = called.get(field).filter(|_| !overridden(field)) {
                assert_eq!(value, theirs, "{uri}: field {field} of {name}");
                shared += 1;
            }
        }
        assert!(shared > 0, "{uri} and {name} share no field");
    }
}
