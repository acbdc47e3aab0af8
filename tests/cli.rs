//! The command line: `manifest-lint`, `read`, `call`, start-up errors and exit codes.

use crate::support::fixtures::LABEL_ID;
use crate::support::{FakeForge, run};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn lint_passes_on_the_shipped_manifests() {
    let out = run(&["manifest-lint"], &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("0 error(s)"), "{}", out.stdout);
}

#[test]
fn lint_reports_file_line_column_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let resources = forgelens::manifest::BUILTIN_RESOURCES.replace(
        "    cache: immutable\n",
        "    cache: immutable\n    colour: blue\n",
    );
    let path = write(&dir, "resources.yaml", &resources);
    let out = run(&["manifest-lint", "--resources", &path], &[]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let line = out.stdout.lines().next().unwrap();
    let expected_line = resources
        .lines()
        .position(|l| l == "    colour: blue")
        .unwrap()
        + 1;
    assert!(
        line.starts_with(&format!("{path}:{expected_line}:5: error[FL002]: ")),
        "{line}"
    );
    assert!(line.contains("unknown field `colour`"), "{line}");
}

#[test]
fn lint_reports_every_compile_error_and_json_format() {
    let dir = tempfile::tempdir().unwrap();
    let tools = forgelens::manifest::BUILTIN_TOOLS
        .replace("name: get_commit_statuses", "name: get_commit_status");
    let path = write(&dir, "tools.yaml", &tools);
    let out = run(
        &["manifest-lint", "--tools", &path, "--format", "json"],
        &[],
    );
    assert_eq!(out.code, 1);
    let findings: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let finding = &findings[0];
    assert_eq!(finding["code"], "FL050");
    assert_eq!(finding["severity"], "error");
    assert_eq!(finding["file"], "resources.yaml");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("`get_commit_statuses`")
            && message.contains("did you mean `get_commit_status`"),
        "{message}"
    );
}

#[test]
fn an_unreadable_manifest_exits_2() {
    let out = run(
        &[
            "manifest-lint",
            "--resources",
            "/nonexistent/resources.yaml",
        ],
        &[],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("/nonexistent/resources.yaml"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_server_refuses_to_start_on_a_broken_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "r.yaml",
        "errors: {status: {}, codes: {}}\nresources:\n  - name: x\n",
    );
    let out = run(&["serve"], &[("FORGELENS_RESOURCES", &path)]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(&format!("{path}:3:")),
        "names file, line and column: {}",
        out.stderr
    );
}

#[test]
fn configuration_errors_exit_2_and_say_what_is_valid() {
    let out = run(&["serve", "--toolsets", "labels,nope"], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("`nope`") && out.stderr.contains("valid toolsets: labels, commits"),
        "{}",
        out.stderr
    );
    let out = run(&["serve", "--disabled-tools", "list_repo_label"], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("valid tools:"), "{}", out.stderr);
    let out = run(&["serve"], &[("FORGEJO_READ_ONLY", "perhaps")]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("FORGEJO_READ_ONLY"), "{}", out.stderr);
    let out = run(&["serve", "--no-such-flag"], &[]);
    assert_eq!(out.code, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn read_and_call_use_the_same_paths_as_the_server() {
    let forge = FakeForge::standard().await;
    let url = forge.url();
    let out = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            run(
                &[
                    "read",
                    &format!("forgejo://repo/acme/widgets/label/{LABEL_ID}"),
                ],
                &[("FORGEJO_URL", &url)],
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let label: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(label["id"], LABEL_ID);

    let out = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            run(
                &["read", "forgejo://repo/acme/widgets/label/abc"],
                &[("FORGEJO_URL", &url)],
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("invalid_params") && out.stderr.contains("-32602"),
        "{}",
        out.stderr
    );

    let out = tokio::task::spawn_blocking(move || {
        run(
            &["call", "list_org_labels", "--args", r#"{"org":"acme"}"#],
            &[("FORGEJO_URL", &url)],
        )
    })
    .await
    .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(page["total_count"], 2);
    assert_eq!(forge.requests().len(), 2, "the invalid read sent nothing");
}

/// The meta-tools run from the command line too, through the same service; surface options
/// are checked like every other.
#[tokio::test(flavor = "multi_thread")]
async fn call_runs_the_meta_tools_and_surface_options_are_checked() {
    let forge = FakeForge::standard().await;
    let url = forge.url();
    let out = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            run(
                &[
                    "call",
                    "search_tools",
                    "--args",
                    r#"{"query":"labels of an organization","limit":3}"#,
                ],
                &[("FORGEJO_URL", &url)],
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let found: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        found["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "list_org_labels"),
        "{found}"
    );
    let out = tokio::task::spawn_blocking(move || {
        run(
            &[
                "call",
                "read_resource",
                "--args",
                &format!(r#"{{"uri":"forgejo://repo/acme/widgets/label/{LABEL_ID}"}}"#),
            ],
            &[("FORGEJO_URL", &url)],
        )
    })
    .await
    .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let label: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(label["id"], LABEL_ID);

    for (args, env, named) in [
        (
            vec!["serve", "--tool-surface", "most"],
            vec![],
            "--tool-surface",
        ),
        (
            vec!["serve"],
            vec![("FORGELENS_TOOL_SURFACE", "all")],
            "FORGELENS_TOOL_SURFACE",
        ),
        (
            vec!["serve", "--max-answer-bytes", "100"],
            vec![],
            "--max-answer-bytes",
        ),
        (
            vec!["serve"],
            vec![("FORGELENS_SUDO", "maybe")],
            "FORGELENS_SUDO",
        ),
    ] {
        let out = run(&args, &env);
        assert_eq!(out.code, 2, "{args:?} {env:?}");
        assert!(out.stderr.contains(named), "{}", out.stderr);
    }
}
