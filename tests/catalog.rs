//! The catalog generator: names, schemas and annotations from a small swagger of our own
//! (`fixtures/mini.swagger.json`, always), the counts and bounds of the real Forgejo and Gitea
//! specs (when `../shared/swagger/` is there), and the `catalog generate|check` command line.

use std::collections::HashSet;
use std::path::PathBuf;

use forgelens::catalog::{self, Generated, Options};
use forgelens::engine::{Catalog, MAX_TOOL_NAME};
use forgelens::manifest::{FileId, Source};
use serde_json::{Value, json};

use crate::support::{FakeForge, run};

const MINI: &str = include_str!("fixtures/mini.swagger.json");
const MINI_CATALOG: &str = "tests/fixtures/mini.catalog.yaml";
const FORGEJO: &str = "forgejo-15.0.3.swagger.json";
const GITEA: &str = "gitea-1.26.3.swagger.json";

fn generate(spec: &str, summaries: bool) -> (Generated, String) {
    catalog::generate_text(spec, Options { summaries }).expect("the spec generates")
}

/// The catalog compiled by the engine, as `serve --catalog` compiles it.
fn compile(yaml: &str) -> Catalog {
    forgelens::service::compile_generated(
        &Source::builtin(FileId::Resources),
        &Source {
            name: "generated".into(),
            text: yaml.to_owned(),
        },
    )
    .unwrap_or_else(|d| panic!("the generated catalog compiles: {d:#?}"))
}

/// A spec of the shared folder beside the project, or `None` after saying the test skipped.
fn shared_spec(file: &str) -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/swagger")
        .join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(_) => {
            println!("skipped: {} is not there", path.display());
            None
        }
    }
}

fn tool<'c>(catalog: &'c Catalog, name: &str) -> &'c forgelens::engine::Tool {
    catalog
        .tool(name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
}

/// Every input schema is valid JSON Schema and compiles to a validator.
fn assert_valid_schemas(catalog: &Catalog) {
    for t in catalog.tools() {
        let schema = Value::Object(t.input_schema(forgelens::engine::tool::Form::Complete));
        if let Err(e) = jsonschema::meta::validate(&schema) {
            panic!("{}: not valid JSON Schema: {e}", t.name);
        }
        if let Err(e) = jsonschema::validator_for(&schema) {
            panic!("{}: does not compile: {e}", t.name);
        }
    }
}

fn names(g: &Generated) -> Vec<&str> {
    g.tools.iter().map(|t| t.name.as_str()).collect()
}

// Naming.

#[test]
fn mini_names_are_unique_bounded_and_expected() {
    let (g, _) = generate(MINI, false);
    assert_eq!(
        names(&g),
        [
            "forgejo_actions_get_run",
            "forgejo_admin_adopt_repository",
            "forgejo_admin_cron_run",
            "forgejo_admin_rename_user",
            "forgejo_hook_org_list",
            "forgejo_hook_repo_list",
            "forgejo_hook_user_list",
            "forgejo_issue_create_milestone",
            "forgejo_issue_delete_milestone",
            "forgejo_issue_edit_milestone",
            "forgejo_issue_get_milestone",
            "forgejo_issue_get_milestones_list",
            "forgejo_misc_activitypub_person",
            "forgejo_misc_get_version",
            "forgejo_misc_render_markdown",
            "forgejo_misc_render_markdown_raw",
            "forgejo_misc_render_markup",
            "forgejo_notification_get_list",
            "forgejo_org_rename",
            "forgejo_pull_download_diff_or_patch",
            "forgejo_pull_merge",
            "forgejo_pull_update",
            "forgejo_release_create_attachment",
            "forgejo_repo_accept_transfer",
            "forgejo_repo_get_archive",
            "forgejo_repo_get_file_contents_post",
            "forgejo_repo_get_raw_file",
            "forgejo_repo_get_the_very_long_and_winding_name_of_an_operation",
            "forgejo_repo_merge_upstream",
            "forgejo_repo_mirror_sync",
            "forgejo_repo_push_mirror_sync",
            "forgejo_repo_reject_transfer",
            "forgejo_repo_sync_fork_branch",
            "forgejo_repo_sync_fork_default",
            "forgejo_repo_transfer",
            "forgejo_repo_update_topics",
            "forgejo_user_current_put_star",
            "forgejo_user_get",
        ]
    );
    let operations = MINI.matches("\"operationId\"").count();
    assert_eq!(g.tools.len(), operations, "one tool per operation");
    assert_names_sound(&g);
}

fn assert_names_sound(g: &Generated) {
    let mut seen = HashSet::new();
    for t in &g.tools {
        assert!(t.name.len() <= MAX_TOOL_NAME, "{} is too long", t.name);
        assert!(
            catalog::is_tool_name(&t.name) && t.name.starts_with("forgejo_"),
            "{}",
            t.name
        );
        assert!(
            t.name
                .starts_with(&format!("forgejo_{}_", t.domain.as_str())),
            "{} is in toolset {}",
            t.name,
            t.domain.as_str()
        );
        assert!(seen.insert(&t.name), "{} twice", t.name);
    }
}

#[test]
fn names_are_stable_whatever_the_order_of_the_spec() {
    let (_, first) = generate(MINI, false);
    let (_, again) = generate(MINI, false);
    assert_eq!(first, again);
    let mut spec: Value = serde_json::from_str(MINI).unwrap();
    let paths = spec["paths"].as_object().unwrap().clone();
    let reversed: serde_json::Map<String, Value> = paths.into_iter().rev().collect();
    spec["paths"] = Value::Object(reversed);
    let (_, reordered) = generate(&spec.to_string(), false);
    assert_eq!(first, reordered);
}

#[test]
fn overrides_name_operations_and_long_names_are_cut() {
    let (g, _) = generate(MINI, false);
    let run = g
        .tools
        .iter()
        .find(|t| t.operation_id == "ActionRun")
        .unwrap();
    assert_eq!(
        run.name, "forgejo_actions_get_run",
        "named by catalog/overrides.yaml"
    );
    let long = g
        .tools
        .iter()
        .find(|t| t.operation_id.starts_with("repoGetTheVeryLong"))
        .unwrap();
    assert_eq!(
        long.name, "forgejo_repo_get_the_very_long_and_winding_name_of_an_operation",
        "trailing words go until the name fits in {MAX_TOOL_NAME}"
    );
    // Colliding `list` names keep the scope word that tells them apart.
    for (id, name) in [
        ("orgListHooks", "forgejo_hook_org_list"),
        ("userListHooks", "forgejo_hook_user_list"),
    ] {
        assert_eq!(
            g.tools.iter().find(|t| t.operation_id == id).unwrap().name,
            name
        );
    }
}

// Schemas.

/// A JSON body that is an object of named fields: each field an argument, with its resolved
/// schema; any other body (here raw text) the one `body` argument.
#[test]
fn the_json_body_fields_are_arguments_with_the_resolved_schemas() {
    let (_, yaml) = generate(MINI, false);
    let catalog = compile(&yaml);
    let t = tool(&catalog, "forgejo_issue_create_milestone");
    let schema = &t.input_schema(forgelens::engine::tool::Form::Complete);
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["owner", "repo", "title"]));
    let props = &schema["properties"];
    assert!(props.get("body").is_none(), "no nested body: {props}");
    assert_eq!(
        props["labels"]["items"],
        json!({"type": "object", "properties": {"id": {"type": "integer", "format": "int64"}, "name": {"type": "string"}}, "additionalProperties": false})
    );
    assert_eq!(
        props["extra"],
        json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "A field of the JSON body."}),
        "a map stays open to any key"
    );
    assert_eq!(props["parent"]["type"], "object", "a cycle is cut");
    assert_eq!(props["state"]["enum"], json!(["open", "closed"]));
    let raw = tool(&catalog, "forgejo_misc_render_markdown_raw");
    let raw = raw.input_schema(forgelens::engine::tool::Form::Complete);
    assert_eq!(raw["properties"]["body"]["type"], "string");
    assert_valid_schemas(&catalog);
}

#[test]
fn names_get_patterns_and_queries_their_types() {
    let (_, yaml) = generate(MINI, false);
    let catalog = compile(&yaml);
    let props = |name: &str| {
        tool(&catalog, name).input_schema(forgelens::engine::tool::Form::Complete)["properties"]
            .clone()
    };
    let p = props("forgejo_issue_get_milestones_list");
    assert_eq!(p["owner"]["pattern"], "^[A-Za-z0-9_][A-Za-z0-9_.-]*$");
    assert_eq!(p["owner"]["maxLength"], 40);
    assert_eq!(p["repo"]["pattern"], "^[A-Za-z0-9_.-]+$");
    assert_eq!(p["state"]["enum"], json!(["open", "closed", "all"]));
    assert_eq!(
        (&p["page"]["type"], &p["page"]["minimum"]),
        (&json!("integer"), &json!(1))
    );
    assert!(
        p.get("state").unwrap().get("default").is_none(),
        "the forge applies its own defaults"
    );
    assert_eq!(
        props("forgejo_user_get")["username"]["pattern"],
        "^[A-Za-z0-9_][A-Za-z0-9_.-]*$"
    );
    assert_eq!(props("forgejo_org_rename")["org"]["maxLength"], 40);
    assert!(
        props("forgejo_misc_activitypub_person")
            .get("user_id")
            .is_some(),
        "`user-id` becomes `user_id`"
    );
    let n = props("forgejo_notification_get_list");
    assert_eq!(n["status_types"]["items"], json!({"type": "string"}));
    assert_eq!(n["subject_type"]["items"]["enum"], json!(["issue", "pull"]));
    let t = tool(&catalog, "forgejo_notification_get_list");
    assert_eq!(
        t.description,
        "Calls `GET /notifications` (operation `notifyGetList`). Query: `status_types` (array of string), \
         `subject_type` (array of string), `since` (string, date-time)."
    );
}

#[test]
fn multipart_files_are_base64_strings() {
    let (g, yaml) = generate(MINI, false);
    let catalog = compile(&yaml);
    let schema = &tool(&catalog, "forgejo_release_create_attachment")
        .input_schema(forgelens::engine::tool::Form::Complete);
    let attachment = &schema["properties"]["attachment"];
    assert_eq!(
        (&attachment["type"], &attachment["contentEncoding"]),
        (&json!("string"), &json!("base64"))
    );
    assert_eq!(schema["properties"]["external_url"]["type"], "string");
    assert_eq!(schema["additionalProperties"], false);
    let t = g
        .tools
        .iter()
        .find(|t| t.name == "forgejo_release_create_attachment")
        .unwrap();
    assert_eq!(
        t.call,
        "POST /repos/{owner}/{repo}/releases/{id}/assets?name={name}"
    );
    assert!(yaml.contains("in: file") && yaml.contains("in: form"));
}

#[test]
fn request_lines_keep_the_spec_paths() {
    let (g, _) = generate(MINI, false);
    let call = |name: &str| {
        g.tools
            .iter()
            .find(|t| t.name == name)
            .unwrap()
            .call
            .clone()
    };
    let accept = |name: &str| g.tools.iter().find(|t| t.name == name).unwrap().accept;
    assert_eq!(
        call("forgejo_pull_download_diff_or_patch"),
        "GET /repos/{owner}/{repo}/pulls/{index}.{diffType}"
    );
    assert_eq!(accept("forgejo_pull_download_diff_or_patch"), Some("text"));
    assert_eq!(
        call("forgejo_repo_get_raw_file"),
        "GET /repos/{owner}/{repo}/raw/{+filepath}?ref={ref}"
    );
    assert_eq!(accept("forgejo_repo_get_archive"), Some("binary"));
    assert_eq!(
        call("forgejo_notification_get_list"),
        "GET /notifications?status-types={status_types*}&subject-type={subject_type}&since={since}"
    );
    assert_eq!(
        call("forgejo_misc_activitypub_person"),
        "GET /activitypub/user-id/{user_id}"
    );
    assert_eq!(
        accept("forgejo_misc_activitypub_person"),
        None,
        "`+json` is JSON"
    );
}

// Annotations.

#[test]
fn every_annotation_override_applies() {
    let (_, yaml) = generate(MINI, false);
    let catalog = compile(&yaml);
    let overrides = catalog::Overrides::builtin().unwrap();
    let by_line = |line: &str| {
        let path = line.strip_prefix("POST ").unwrap();
        catalog
            .tools()
            .iter()
            .find(|t| t.description.contains(&format!("`POST {path}`")))
            .unwrap_or_else(|| panic!("the mini spec has no `{line}`"))
    };
    for line in &overrides.read_only {
        let t = by_line(line);
        let a = t.annotations;
        assert!(
            a.read_only && a.idempotent && !a.destructive,
            "{line}: {a:?}"
        );
    }
    for line in &overrides.destructive {
        let t = by_line(line);
        assert!(
            t.annotations.destructive && !t.annotations.read_only,
            "{line}"
        );
    }
    assert_eq!(overrides.read_only.len(), 4);
    assert_eq!(overrides.destructive.len(), 13);
    let a = |name: &str| tool(&catalog, name).annotations;
    assert!(
        a("forgejo_issue_get_milestone").read_only && a("forgejo_issue_get_milestone").idempotent
    );
    assert!(
        a("forgejo_issue_delete_milestone").destructive
            && a("forgejo_issue_delete_milestone").idempotent
    );
    assert!(
        a("forgejo_issue_edit_milestone").destructive,
        "PATCH replaces state"
    );
    assert!(
        a("forgejo_repo_update_topics").destructive,
        "a PUT with a body replaces state"
    );
    let star = a("forgejo_user_current_put_star");
    assert!(
        !star.destructive && star.idempotent,
        "a PUT without a body only adds"
    );
    let create = a("forgejo_issue_create_milestone");
    assert!(
        !create.read_only && !create.destructive && !create.idempotent,
        "a plain POST"
    );
}

// Text.

#[test]
fn no_prose_of_the_spec_unless_asked() {
    let (_, plain) = generate(MINI, false);
    assert!(!plain.contains("MINI-"), "no text of the spec is written");
    let (_, with) = generate(MINI, true);
    assert!(
        with.contains("MINI-SUMMARY list the milestones."),
        "summaries when asked"
    );
    assert!(
        !with.contains("MINI-PROSE"),
        "never descriptions or examples"
    );
}

#[test]
fn the_mini_catalog_file_is_current() {
    let (_, yaml) = generate(MINI, false);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(MINI_CATALOG);
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != yaml {
        if std::env::var_os("FORGELENS_BLESS").is_some() {
            std::fs::write(&path, &yaml).unwrap();
            return;
        }
        panic!("{MINI_CATALOG} is stale; run FORGELENS_BLESS=1 cargo test catalog::");
    }
}

// The real specs.

#[test]
fn the_real_specs_give_one_sound_tool_per_operation() {
    for (file, count) in [(FORGEJO, 491), (GITEA, 471)] {
        let Some(spec) = shared_spec(file) else {
            continue;
        };
        let (g, yaml) = generate(&spec, false);
        assert_eq!(g.tools.len(), count, "{file}");
        assert_names_sound(&g);
        let catalog = compile(&yaml);
        assert_eq!(catalog.tools().len(), count, "{file}: every tool compiles");
        assert_valid_schemas(&catalog);
        // Their text stays out: not one summary of the spec is in the file,
        // except where a title built from the method and path alone happens
        // to say the same words ("Create an organization").
        let titles: Vec<&str> = g.tools.iter().map(|t| t.title.as_str()).collect();
        let parsed: Value = serde_json::from_str(&spec).unwrap();
        let mut summaries = 0;
        for item in parsed["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                if let Some(s) = op
                    .get("summary")
                    .and_then(Value::as_str)
                    .filter(|s| s.len() > 20)
                {
                    summaries += 1;
                    if !titles.iter().any(|t| t.contains(s)) {
                        assert!(!yaml.contains(s), "{file}: `{s}` was copied");
                    }
                }
            }
        }
        assert!(summaries > 100, "{file}: the check saw the summaries");
    }
}

#[test]
fn every_override_applies_to_a_real_spec() {
    let (Some(forgejo), Some(gitea)) = (shared_spec(FORGEJO), shared_spec(GITEA)) else {
        return;
    };
    let specs: Vec<Value> = [forgejo, gitea]
        .iter()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect();
    let has =
        |method: &str, path: &str| specs.iter().any(|s| s["paths"][path].get(method).is_some());
    let ids: HashSet<String> = specs
        .iter()
        .flat_map(|s| {
            s["paths"]
                .as_object()
                .unwrap()
                .values()
                .flat_map(|item| item.as_object().unwrap().values())
                .filter_map(|op| {
                    op.get("operationId")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let o = catalog::Overrides::builtin().unwrap();
    for id in o.names.keys() {
        assert!(ids.contains(id), "names: `{id}` is in neither spec");
    }
    for line in o.read_only.iter().chain(&o.destructive) {
        let path = line.strip_prefix("POST ").unwrap();
        assert!(has("post", path), "`{line}` is in neither spec");
    }
}

#[test]
fn the_inventory_in_docs_is_current() {
    const BEGIN: &str = "<!-- BEGIN inventory (generated from forgejo-15.0.3.swagger.json; tests/catalog.rs checks it) -->";
    const END: &str = "<!-- END inventory -->";
    let Some(spec) = shared_spec(FORGEJO) else {
        return;
    };
    let (g, _) = generate(&spec, false);
    let expected = catalog::write::inventory(&g);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/catalog.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find(BEGIN)
        .expect("docs/catalog.md has the inventory markers")
        + BEGIN.len();
    let end = text[start..].find(END).expect("the END marker") + start;
    if text[start..end].trim() == expected.trim() {
        return;
    }
    if std::env::var_os("FORGELENS_BLESS").is_some() {
        let updated = format!("{}\n{}\n{}", &text[..start], expected.trim(), &text[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    panic!("docs/catalog.md: the inventory is stale; run FORGELENS_BLESS=1 cargo test catalog::");
}

// The command line.

fn mini_path() -> String {
    format!(
        "{}/tests/fixtures/mini.swagger.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn generate_writes_the_catalog_and_check_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("catalog.yaml");
    let out_s = out.display().to_string();
    let r = run(
        &[
            "catalog",
            "generate",
            "--swagger",
            &mini_path(),
            "-o",
            &out_s,
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("38 tools"), "{}", r.stderr);
    let (_, yaml) = generate(MINI, false);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), yaml);
    let r = run(
        &["catalog", "check", "--swagger", &mini_path(), &out_s],
        &[],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("current (38 tools)"), "{}", r.stdout);
}

#[test]
fn check_exits_1_on_a_stale_catalog_and_names_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (_, yaml) = generate(MINI, false);
    let stale = yaml.replace(
        "- name: forgejo_misc_get_version\n",
        "- name: forgejo_misc_get_old_version\n",
    );
    let path = dir.path().join("stale.yaml");
    std::fs::write(&path, stale).unwrap();
    let r = run(
        &[
            "catalog",
            "check",
            "--swagger",
            &mini_path(),
            &path.display().to_string(),
        ],
        &[],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("missing: forgejo_misc_get_version")
            && r.stdout
                .contains("no longer in the spec: forgejo_misc_get_old_version"),
        "{}",
        r.stdout
    );
    let edited = dir.path().join("edited.yaml");
    std::fs::write(
        &edited,
        yaml.replace("Calls `GET /version`", "Calls GET /version"),
    )
    .unwrap();
    let r = run(
        &[
            "catalog",
            "check",
            "--swagger",
            &mini_path(),
            &edited.display().to_string(),
        ],
        &[],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("the same tools, written differently"),
        "{}",
        r.stdout
    );
}

#[test]
fn unreadable_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.yaml").display().to_string();
    let r = run(
        &[
            "catalog",
            "generate",
            "--swagger",
            "/nonexistent.json",
            "-o",
            &out,
        ],
        &[],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("/nonexistent.json"), "{}", r.stderr);
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"openapi": "3.1.0"}"#).unwrap();
    let r = run(
        &[
            "catalog",
            "generate",
            "--swagger",
            &bad.display().to_string(),
            "-o",
            &out,
        ],
        &[],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("only Swagger 2.0"), "{}", r.stderr);
    let r = run(
        &[
            "catalog",
            "check",
            "--swagger",
            &mini_path(),
            "/nonexistent.yaml",
        ],
        &[],
    );
    assert_eq!(r.code, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn generate_fetches_a_spec_by_url() {
    let forge = FakeForge::start().await;
    forge.document("/swagger.v1.json", MINI);
    let url = format!("{}/swagger.v1.json", forge.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.yaml");
    let out_s = out.display().to_string();
    let r = tokio::task::spawn_blocking(move || {
        run(
            &["catalog", "generate", "--swagger", &url, "-o", &out_s],
            &[],
        )
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        generate(MINI, false).1
    );
    assert_eq!(forge.requests()[0].path, "/swagger.v1.json");
}
