//! The server's identity and the lists it serves: `initialize`, templates, concrete resources.

use crate::support::{FakeForge, Launch};

#[tokio::test]
async fn identifies_itself_and_its_capabilities() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let info = server
        .client
        .peer_info()
        .expect("the server answered initialize");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("forgelens")
    );
    assert_eq!(
        info.server_info.as_ref().map(|i| i.version.as_str()),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let resources = info
        .capabilities
        .resources
        .as_ref()
        .expect("resources capability");
    assert_eq!(
        (resources.subscribe, resources.list_changed),
        (Some(false), Some(false))
    );
    assert!(info.capabilities.tools.is_some());
    server.stop().await;
}

#[tokio::test]
async fn templates_carry_titles_bounds_and_mime_types() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let templates = server.client.list_all_resource_templates().await.unwrap();
    for uri in [
        "forgejo://repo/{owner}/{repo}/label/{id}",
        "forgejo://repo/{owner}/{repo}/labels{?page,limit}",
        "forgejo://org/{org}/labels{?page,limit}",
        "forgejo://repo/{owner}/{repo}/commit/{sha}",
        "forgejo://repo/{owner}/{repo}/commit/{sha}/status",
    ] {
        let t = templates
            .iter()
            .find(|t| t.uri_template == uri)
            .unwrap_or_else(|| panic!("{uri} missing"));
        assert_eq!(t.mime_type.as_deref(), Some("application/json"), "{uri}");
        assert!(t.title.as_deref().is_some_and(|s| !s.is_empty()), "{uri}");
    }
    let labels = templates.iter().find(|t| t.name == "repo_labels").unwrap();
    let description = labels.description.as_deref().unwrap();
    assert!(
        description.contains("clamped to 30") && description.contains("list_repo_labels"),
        "{description}"
    );
    let status = templates
        .iter()
        .find(|t| t.name == "commit_status")
        .unwrap();
    assert!(
        status
            .description
            .as_deref()
            .unwrap()
            .contains("get_commit_statuses")
    );
    assert!(
        !templates
            .iter()
            .any(|t| t.uri_template == "forgejo://instance"),
        "a concrete resource is not a template"
    );
    server.stop().await;
}

#[tokio::test]
async fn instance_is_a_concrete_resource() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    let resources = server.client.list_all_resources().await.unwrap();
    assert!(
        resources.iter().any(|r| r.uri == "forgejo://instance"),
        "{resources:?}"
    );
    let instance = server.read_json("forgejo://instance").await;
    assert_eq!(instance["version"], "15.0.3+gitea-1.22.0");
    assert_eq!(instance["max_response_items"], 40);
    let paths: Vec<String> = forge.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        paths.contains(&"/version".to_string()) && paths.contains(&"/settings/api".to_string()),
        "{paths:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_invalid_list_cursor_is_invalid_params() {
    use rmcp::model::PaginatedRequestParams;
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).start().await;
    for bad in ["nope", "99999"] {
        let params = PaginatedRequestParams::default().with_cursor(Some(bad.into()));
        let err = server
            .client
            .list_resources(Some(params))
            .await
            .unwrap_err();
        match err {
            rmcp::ServiceError::McpError(e) => assert_eq!(e.code.0, -32602, "{bad}"),
            other => panic!("{other}"),
        }
    }
    server.stop().await;
}

/// An entity the built-in manifest does not have, added by a manifest file alone.
#[tokio::test]
async fn adding_an_entity_is_yaml_only() {
    let extra = r##"
  - name: release_by_tag
    title: Release by tag
    uri: forgejo://repo/{owner}/{repo}/release-by-tag/{tag}
    description: One release, found by its tag.
    params: {owner: owner_name, repo: repo_name, tag: tag_name}
    fetch: GET /repos/{owner}/{repo}/releases/tags/{tag}
    project:
      tag: $.tag_name
      name: $.name
      author: $.author.login
      published_at: $.published_at
    markdown:
      template: "# {{ name }}\n\n{{ notes }}"
      project: {notes: $.body}
    cache: mutable
"##;
    let rules = "rules:\n  tag_name:\n    pattern: '[^/]+'\n    max_length: 255\n";
    let manifest = forgelens::manifest::BUILTIN_RESOURCES.replacen("rules:\n", rules, 1) + extra;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("resources.yaml");
    std::fs::write(&path, manifest).unwrap();

    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge)
        .arg("--resources")
        .arg(path.to_str().unwrap())
        .start()
        .await;
    let templates = server.client.list_all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "forgejo://repo/{owner}/{repo}/release-by-tag/{tag}")
    );
    let blocks = server
        .read_blocks("forgejo://repo/acme/widgets/release-by-tag/v1.2.0")
        .await;
    let release: serde_json::Value = serde_json::from_str(&blocks[0].1).unwrap();
    assert_eq!(release["tag"], "v1.2.0");
    assert_eq!(release["author"], "alice");
    assert!(
        blocks[1].1.starts_with("# Widgets 1.2.0\n\n## Changes"),
        "{}",
        blocks[1].1
    );
    server.stop().await;
}

/// A slow upstream call does not hold up another request.
#[tokio::test]
async fn requests_are_served_concurrently() {
    let forge = FakeForge::standard().await;
    let gate = forge.gate("/version");
    let server = std::sync::Arc::new(Launch::new(&forge).start().await);
    let slow = tokio::spawn({
        let server = server.clone();
        async move { server.read_json("forgejo://instance").await }
    });
    forge
        .wait_for("the held request", |log| {
            log.iter().any(|r| r.path == "/version")
        })
        .await;
    let label = server
        .read_json("forgejo://repo/acme/widgets/label/335058")
        .await;
    assert_eq!(
        label["id"], 335058,
        "answered while the other read is still held upstream"
    );
    assert!(!slow.is_finished());
    gate.add_permits(1);
    assert_eq!(slow.await.unwrap()["version"], "15.0.3+gitea-1.22.0");
}
