//! Generated tools at run time, through the binary against the fake forge: `serve --catalog`
//! beside the curated tools, read-only mode, filters, name clashes, request bodies, paging of a
//! long list, and `--catalog-from-instance` with its cache.

use std::path::Path;
use std::time::{Duration, SystemTime};

use rmcp::model::PaginatedRequestParams;
use serde_json::{Value, json};

use crate::support::fake_forge::Reply;
use crate::support::{FakeForge, Launch, manifest_tools, run, write_catalog};

const MINI: &str = include_str!("fixtures/mini.swagger.json");
/// Tools of the mini spec.
const MINI_TOOLS: usize = 38;

async fn milestone_forge() -> FakeForge {
    let forge = FakeForge::standard().await;
    forge
        .route(
            "GET",
            "/repos/acme/widgets/milestones/3",
            Reply::Json(json!({"id": 3, "title": "v1"})),
        )
        .route(
            "POST",
            "/repos/acme/widgets/milestones",
            Reply::Json(json!({"id": 4, "title": "v2"})),
        )
        .route(
            "DELETE",
            "/repos/acme/widgets/milestones/3",
            Reply::NoContent,
        );
    forge
}

fn curated_count() -> usize {
    forgelens::service::compile(&forgelens::manifest::Sources::builtin())
        .unwrap()
        .tools()
        .len()
}

#[tokio::test]
async fn a_generated_get_post_and_delete_reach_the_forge() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write_catalog(dir.path(), MINI);
    let forge = milestone_forge().await;
    let server = Launch::new(&forge)
        .full()
        .arg("--catalog")
        .arg(&catalog.display().to_string())
        .start()
        .await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert_eq!(manifest_tools(&tools).len(), curated_count() + MINI_TOOLS);
    assert!(
        tools.iter().any(|t| t.name == "list_repo_labels"),
        "curated tools stay"
    );

    let got = server
        .call_ok(
            "forgejo_issue_get_milestone",
            json!({"owner": "acme", "repo": "widgets", "id": 3}),
        )
        .await;
    assert_eq!(got, json!({"id": 3, "title": "v1"}));
    let made = server
        .call_ok(
            "forgejo_issue_create_milestone",
            json!({"owner": "acme", "repo": "widgets", "title": "v2", "state": "open"}),
        )
        .await;
    assert_eq!(made["id"], 4);
    let gone = server
        .call_ok(
            "forgejo_issue_delete_milestone",
            json!({"owner": "acme", "repo": "widgets", "id": 3}),
        )
        .await;
    assert_eq!(gone, json!({"ok": true, "status": 204}));

    let sent: Vec<(String, String, Option<Value>)> = forge
        .requests()
        .into_iter()
        .map(|r| (r.method, r.path, r.body))
        .collect();
    assert_eq!(
        sent,
        [
            (
                "GET".into(),
                "/repos/acme/widgets/milestones/3".into(),
                None
            ),
            (
                "POST".into(),
                "/repos/acme/widgets/milestones".into(),
                Some(json!({"title": "v2", "state": "open"}))
            ),
            (
                "DELETE".into(),
                "/repos/acme/widgets/milestones/3".into(),
                None
            ),
        ]
    );

    // A body that breaks the schema is refused before anything is sent.
    forge.clear_log();
    let refused = server
        .call(
            "forgejo_issue_create_milestone",
            json!({"owner": "acme", "repo": "widgets", "titel": "v2"}),
        )
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(forge.requests().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn read_only_lists_only_gets_and_sends_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write_catalog(dir.path(), MINI);
    let forge = milestone_forge().await;
    let server = Launch::new(&forge)
        .full()
        .arg("--read-only")
        .arg("--catalog")
        .arg(&catalog.display().to_string())
        .start()
        .await;
    let tools = server.client.list_all_tools().await.unwrap();
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(listed.contains(&"forgejo_issue_get_milestone"));
    for absent in [
        "forgejo_issue_create_milestone",
        "forgejo_issue_delete_milestone",
        // Read-only by its hint, but still a POST: read-only mode sends only GET.
        "forgejo_misc_render_markdown",
    ] {
        assert!(
            !listed.contains(&absent),
            "{absent} is listed in read-only mode"
        );
    }
    for t in &tools {
        let hints = t.annotations.as_ref().unwrap();
        assert_eq!(hints.read_only_hint, Some(true), "{}", t.name);
    }

    server
        .call_ok(
            "forgejo_issue_get_milestone",
            json!({"owner": "acme", "repo": "widgets", "id": 3}),
        )
        .await;
    for (tool, args) in [
        (
            "forgejo_issue_create_milestone",
            json!({"owner": "acme", "repo": "widgets", "body": {"title": "v2"}}),
        ),
        (
            "forgejo_issue_delete_milestone",
            json!({"owner": "acme", "repo": "widgets", "id": 3}),
        ),
    ] {
        let result = server.call(tool, args).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert!(
            format!("{result:?}").contains("read-only"),
            "{tool}: {result:?}"
        );
    }
    let methods: Vec<String> = forge.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["GET"], "no non-GET request reached the forge");
    server.stop().await;
}

#[tokio::test]
async fn multipart_and_text_bodies_reach_the_forge() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write_catalog(dir.path(), MINI);
    let forge = FakeForge::standard().await;
    forge
        .route(
            "POST",
            "/repos/acme/widgets/releases/5/assets",
            Reply::Json(json!({"id": 9, "name": "hello.txt"})),
        )
        .route(
            "POST",
            "/markdown/raw",
            Reply::Text("<h1>Title</h1>".into()),
        );
    let server = Launch::new(&forge)
        .full()
        .arg("--catalog")
        .arg(&catalog.display().to_string())
        .start()
        .await;
    let uploaded = server
        .call_ok(
            "forgejo_release_create_attachment",
            json!({"owner": "acme", "repo": "widgets", "id": 5, "name": "hello.txt",
                   "attachment": "aGVsbG8gd29ybGQ="}),
        )
        .await;
    assert_eq!(uploaded["id"], 9);
    let rendered = server
        .call_ok(
            "forgejo_misc_render_markdown_raw",
            json!({"body": "# Title"}),
        )
        .await;
    assert_eq!(rendered, json!({"result": "<h1>Title</h1>"}));

    let requests = forge.requests();
    let upload = &requests[0];
    assert_eq!(upload.query("name"), Some("hello.txt"));
    assert!(
        upload
            .header("content-type")
            .is_some_and(|c| c.starts_with("multipart/form-data")),
        "{:?}",
        upload.headers
    );
    let form = String::from_utf8_lossy(&upload.raw_body);
    assert!(
        form.contains("name=\"attachment\"; filename=\"attachment\"")
            && form.contains("hello world"),
        "{form}"
    );
    let render = &requests[1];
    assert!(
        render
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/plain"))
    );
    assert_eq!(render.raw_body, b"# Title");
    server.stop().await;
}

#[tokio::test]
async fn a_curated_tool_wins_a_clash_and_filters_apply() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write_catalog(dir.path(), MINI);
    let clash = "    - name: list_repo_labels\n      title: Impostor\n      description: GENERATED impostor.\n      call: GET /version\n";
    let mut text = std::fs::read_to_string(&catalog).unwrap();
    text.push_str(clash);
    std::fs::write(&catalog, text).unwrap();
    let forge = FakeForge::standard().await;
    let path = catalog.display().to_string();

    let server = Launch::new(&forge)
        .full()
        .arg("--catalog")
        .arg(&path)
        .start()
        .await;
    let tools = server.client.list_all_tools().await.unwrap();
    let labels: Vec<_> = tools
        .iter()
        .filter(|t| t.name == "list_repo_labels")
        .collect();
    assert_eq!(labels.len(), 1);
    assert!(
        !labels[0]
            .description
            .as_deref()
            .unwrap_or("")
            .contains("GENERATED")
    );
    server.stop().await;

    let server = Launch::new(&forge)
        .full()
        .arg("--catalog")
        .arg(&path)
        .arg("--toolsets")
        .arg("issue,labels")
        .arg("--disabled-tools")
        .arg("forgejo_issue_get_milestone")
        .start()
        .await;
    let tools = server.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"forgejo_issue_create_milestone"));
    assert!(
        names.contains(&"list_repo_labels"),
        "curated toolsets still select"
    );
    assert!(!names.contains(&"forgejo_issue_get_milestone"), "disabled");
    assert!(
        !names.contains(&"forgejo_pull_merge"),
        "toolset `pull` not enabled"
    );
    assert!(
        !names.contains(&"get_commit_statuses"),
        "toolset `commits` not enabled"
    );
    let refused = server
        .call(
            "forgejo_issue_get_milestone",
            json!({"owner": "acme", "repo": "widgets", "id": 3}),
        )
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(forge.requests().is_empty());
    server.stop().await;
}

/// A spec of `n` operations, enough to need several pages of `tools/list`.
fn long_spec(n: usize) -> String {
    let paths: serde_json::Map<String, Value> = (0..n)
        .map(|i| {
            (
                format!("/things/t{i:03}"),
                json!({"get": {"operationId": format!("getThing{i:03}")}}),
            )
        })
        .collect();
    json!({"swagger": "2.0", "basePath": "/api/v1", "info": {"version": "1"}, "paths": paths})
        .to_string()
}

#[tokio::test]
async fn a_long_tool_list_pages_the_same_way_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write_catalog(dir.path(), &long_spec(260));
    let forge = FakeForge::standard().await;
    let mut listings = Vec::new();
    for _ in 0..2 {
        let server = Launch::new(&forge)
            .full()
            .arg("--catalog")
            .arg(&catalog.display().to_string())
            .start()
            .await;
        let first = server
            .client
            .list_tools(Some(PaginatedRequestParams::default()))
            .await
            .unwrap();
        assert_eq!(first.tools.len(), 100);
        assert_eq!(first.next_cursor.as_deref(), Some("100"));
        let all = server.client.list_all_tools().await.unwrap();
        let names: Vec<String> = manifest_tools(&all)
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names.len(), curated_count() + 260);
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        listings.push(names);
        server.stop().await;
    }
    assert_eq!(listings[0], listings[1], "the same order on every start");
}

fn age(path: &Path, by: Duration) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - by)
        .unwrap();
}

/// With the instance's own spec, a curated tool whose operation the spec lacks is not offered,
/// and says why; one the spec has is.
#[tokio::test(flavor = "multi_thread")]
async fn catalog_from_instance_offers_no_curated_tool_the_instance_lacks() {
    let cache = tempfile::tempdir().unwrap();
    let forge = FakeForge::standard().await;
    forge.document("/swagger.v1.json", MINI);
    let server = Launch::new(&forge)
        .full()
        .arg("--catalog-from-instance")
        .arg("--cache-dir")
        .arg(&cache.path().display().to_string())
        .spawn()
        .await;
    let tools = server.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(!names.contains(&"get_action_job_logs"), "{names:?}");
    // The mini spec has the milestones of a repository.
    assert!(names.contains(&"list_repo_milestones"), "{names:?}");
    let described = server
        .call_ok("describe_tools", json!({"names": ["get_action_job_logs"]}))
        .await;
    let why = described["unknown"][0]["why"].as_str().unwrap();
    assert!(
        why.contains("has no GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"),
        "{why}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn catalog_from_instance_fetches_once_then_uses_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().display().to_string();
    let forge = FakeForge::standard().await;
    forge.document("/swagger.v1.json", MINI);
    let fetches = |forge: &FakeForge| {
        forge
            .requests()
            .iter()
            .filter(|r| r.path == "/swagger.v1.json")
            .count()
    };
    for _ in 0..2 {
        let server = Launch::new(&forge)
            .full()
            .arg("--catalog-from-instance")
            .arg("--cache-dir")
            .arg(&cache_dir)
            .spawn()
            .await;
        let tools = server.client.list_all_tools().await.unwrap();
        let list = tools
            .iter()
            .find(|t| t.name == "forgejo_issue_get_milestones_list")
            .unwrap();
        assert!(
            list.description
                .as_deref()
                .unwrap()
                .starts_with("MINI-SUMMARY list the milestones."),
            "the instance's own summaries are shown"
        );
        server.stop().await;
    }
    assert_eq!(fetches(&forge), 1, "the second start used the cache");
    let cached = forgelens::catalog::instance::cache_path(
        cache.path(),
        &reqwest::Url::parse(&forge.url()).unwrap(),
    );
    assert!(cached.exists());

    // A day later the spec is fetched again; when the instance cannot serve it, the old copy
    // still serves.
    age(&cached, Duration::from_secs(2 * 24 * 60 * 60));
    forge.document("/swagger.v1.json", "not a spec");
    let server = Launch::new(&forge)
        .full()
        .arg("--catalog-from-instance")
        .arg("--cache-dir")
        .arg(&cache_dir)
        .spawn()
        .await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t.name == "forgejo_issue_get_milestones_list")
    );
    assert_eq!(fetches(&forge), 2);
    let log = server.finish().await;
    assert!(log.contains("using the cached copy"), "{log}");
    assert_eq!(
        std::fs::read_to_string(&cached).unwrap(),
        MINI,
        "garbage is not cached"
    );

    // No copy and no spec: the server does not start, and says why.
    let empty = tempfile::tempdir().unwrap();
    let url = forge.url();
    let empty_dir = empty.path().display().to_string();
    let out = tokio::task::spawn_blocking(move || {
        run(
            &[
                "serve",
                "--catalog-from-instance",
                "--cache-dir",
                &empty_dir,
            ],
            &[("FORGEJO_URL", &url)],
        )
    })
    .await
    .unwrap();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("swagger.v1.json"), "{}", out.stderr);
}

/// Curated toolsets are plural and generated ones singular; either spelling selects both.
#[tokio::test]
async fn a_toolset_is_named_in_either_number() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write_catalog(dir.path(), MINI);
    let forge = FakeForge::standard().await;
    for spelling in ["issue", "issues"] {
        let server = Launch::new(&forge)
            .full()
            .arg("--catalog")
            .arg(&catalog.display().to_string())
            .arg("--toolsets")
            .arg(spelling)
            .start()
            .await;
        let tools = server.client.list_all_tools().await.unwrap();
        let names: Vec<&str> = manifest_tools(&tools)
            .iter()
            .map(|t| t.name.as_ref())
            .collect();
        assert!(names.contains(&"create_issue"), "{spelling}: {names:?}");
        assert!(
            names.iter().any(|n| n.starts_with("forgejo_issue_")),
            "{spelling}: {names:?}"
        );
        assert!(
            !names.contains(&"list_repo_labels"),
            "{spelling}: {names:?}"
        );
        server.stop().await;
    }
}
