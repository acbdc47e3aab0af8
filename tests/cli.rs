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
    assert!(
        out.stderr.contains("did you mean `list_repo_labels`")
            && out.stderr.contains("forgelens list tools"),
        "{}",
        out.stderr
    );
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

/// Options work before the subcommand as after it; a server-only option before `call` is an
/// error rather than silently ignored; the help shows no empty environment values.
#[tokio::test(flavor = "multi_thread")]
async fn options_work_on_either_side_of_the_subcommand() {
    let forge = FakeForge::standard().await;
    let url = forge.url();
    let create = r#"{"owner":"acme","repo":"widgets","title":"t"}"#;
    let runs = tokio::task::spawn_blocking(move || {
        let env = [("FORGEJO_URL", url.as_str())];
        [
            run(
                &["--read-only", "call", "create_issue", "--args", create],
                &env,
            ),
            run(
                &["call", "create_issue", "--read-only", "--args", create],
                &env,
            ),
            run(
                &[
                    "--url",
                    &url,
                    "read",
                    &format!("forgejo://repo/acme/widgets/label/{LABEL_ID}"),
                ],
                &[],
            ),
            run(&["--http", "127.0.0.1:0", "call", "get_version"], &env),
            run(&["--help"], &[]),
        ]
    })
    .await
    .unwrap();
    let [before, after, url_before, http_before, help] = runs;
    for refused in [&before, &after] {
        assert_eq!(refused.code, 1, "{}", refused.stderr);
        assert!(refused.stderr.contains("read-only"), "{}", refused.stderr);
    }
    assert_eq!(url_before.code, 0, "{}", url_before.stderr);
    assert!(url_before.stdout.contains(&LABEL_ID.to_string()));
    assert_eq!(http_before.code, 2, "{}", http_before.stderr);
    assert!(
        http_before
            .stderr
            .contains("--http is an option of the HTTP server"),
        "{}",
        http_before.stderr
    );
    assert!(forge.requests().iter().all(|r| r.method == "GET"));
    assert!(!help.stdout.contains("=]"), "{}", help.stdout);
    let lint = run(&["manifest-lint", "--help"], &[]);
    assert!(
        lint.stdout.contains("query parameters exist"),
        "{}",
        lint.stdout
    );
}

/// The forge URL is named at start-up; a URL without a scheme, or one that ends in `/api/v1`,
/// is explained instead of failing obscurely.
#[tokio::test(flavor = "multi_thread")]
async fn forge_url_mistakes_are_explained() {
    let forge = FakeForge::standard().await;
    let url = forge.url();
    let bare = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let uri = format!("forgejo://repo/acme/widgets/label/{LABEL_ID}");
    let runs = tokio::task::spawn_blocking(move || {
        [
            run(&["read", &uri], &[("FORGEJO_URL", &bare)]),
            run(
                &["read", &uri],
                &[(
                    "FORGEJO_URL",
                    &format!("{}/api/v1/", url.trim_end_matches('/')),
                )],
            ),
        ]
    })
    .await
    .unwrap();
    let [no_scheme, api_path] = runs;
    assert_ne!(no_scheme.code, 0);
    assert!(
        no_scheme.stderr.contains("https:// is assumed"),
        "{}",
        no_scheme.stderr
    );
    assert!(
        no_scheme.stderr.contains("use an http:// URL"),
        "{}",
        no_scheme.stderr
    );
    assert_eq!(api_path.code, 0, "{}", api_path.stderr);
    assert!(
        api_path.stderr.contains("/api/v1 is dropped"),
        "{}",
        api_path.stderr
    );
    let server = crate::support::Launch::new(&forge)
        .env("RUST_LOG", "info")
        .spawn()
        .await;
    let log = server.finish().await;
    assert!(log.contains(&format!("forge={}", forge.url())), "{log}");
}

/// `forgelens list` prints what is offered, and a misspelt tool name gets a suggestion, not a
/// list of every name.
#[test]
fn list_and_did_you_mean() {
    let tools = run(&["list", "tools"], &[]);
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    assert!(
        tools
            .stdout
            .lines()
            .any(|l| l.starts_with("create_issue\tissues\twrite"))
    );
    let read_only = run(&["--read-only", "list", "tools"], &[]);
    assert!(read_only.stdout.contains("list_repo_issues\t"));
    assert!(
        !read_only.stdout.contains("create_issue\t"),
        "{}",
        read_only.stdout
    );
    let resources = run(&["list", "resources"], &[]);
    assert!(
        resources
            .stdout
            .contains("forgejo://repo/{owner}/{repo}/label/{id}\t"),
        "{}",
        resources.stdout
    );
    let toolsets = run(&["list", "toolsets"], &[]);
    assert!(toolsets.stdout.lines().any(|l| l.starts_with("issues\t")));

    let call = run(&["call", "list_repo_isues"], &[]);
    assert_eq!(call.code, 1);
    assert!(
        call.stderr.contains("did you mean `list_repo_issues`"),
        "{}",
        call.stderr
    );
    let disabled = run(&["list", "tools", "--disabled-tools", "get_isue"], &[]);
    assert_eq!(disabled.code, 2);
    assert!(
        disabled.stderr.contains("did you mean `get_issue`"),
        "{}",
        disabled.stderr
    );
    assert!(
        !disabled.stderr.contains("list_org_labels"),
        "{}",
        disabled.stderr
    );
}

/// Runs `manifest-lint` in `dir`, in a clean environment plus `env`.
fn lint_in(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> crate::support::Run {
    let output = std::process::Command::new(crate::support::BIN)
        .current_dir(dir)
        .env_clear()
        .envs(env.iter().copied())
        .arg("manifest-lint")
        .args(args)
        .output()
        .expect("the forgelens binary runs");
    crate::support::Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn lint_reads_the_manifests_of_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let resources = forgelens::manifest::BUILTIN_RESOURCES.replace(
        "    cache: immutable\n",
        "    cache: immutable\n    colour: blue\n",
    );
    write(&dir, "resources.yaml", &resources);
    let line = resources
        .lines()
        .position(|l| l == "    colour: blue")
        .unwrap()
        + 1;
    let out = lint_in(dir.path(), &[], &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].starts_with(&format!("resources.yaml:{line}:5: error[FL002]: ")),
        "{}",
        out.stdout
    );
    assert_eq!(
        lines.last().copied(),
        Some(
            "resources.yaml, tools.yaml (built-in), search.yaml (built-in): 1 error(s), 0 warning(s)"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn lint_without_manifests_here_names_the_built_in_copies() {
    let dir = tempfile::tempdir().unwrap();
    let out = lint_in(dir.path(), &[], &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "resources.yaml (built-in), tools.yaml (built-in), search.yaml (built-in): 0 error(s), 0 warning(s)\n"
    );
    // JSON keeps stdout one document and says on stderr what was read.
    let json = lint_in(dir.path(), &["--format", "json"], &[]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json.stdout).unwrap(),
        serde_json::json!([])
    );
    assert!(
        json.stderr.contains(
            "resources.yaml (built-in), tools.yaml (built-in), search.yaml (built-in): 0 error(s)"
        ),
        "{}",
        json.stderr
    );
}

#[test]
fn lint_options_and_their_variables_win_over_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir, "resources.yaml", "resources: [\n");
    write(&dir, "tools.yaml", "tools: [\n");
    let good = tempfile::tempdir().unwrap();
    let resources = write(
        &good,
        "resources.yaml",
        forgelens::manifest::BUILTIN_RESOURCES,
    );
    let tools = write(&good, "tools.yaml", forgelens::manifest::BUILTIN_TOOLS);
    let summary =
        format!("{resources}, {tools}, search.yaml (built-in): 0 error(s), 0 warning(s)\n");

    let flags = lint_in(
        dir.path(),
        &["--resources", &resources, "--tools", &tools],
        &[],
    );
    assert_eq!(
        (flags.code, flags.stdout.as_str()),
        (0, summary.as_str()),
        "{}",
        flags.stderr
    );
    let env = lint_in(
        dir.path(),
        &[],
        &[
            ("FORGELENS_RESOURCES", &resources),
            ("FORGELENS_TOOLS", &tools),
        ],
    );
    assert_eq!(
        (env.code, env.stdout.as_str()),
        (0, summary.as_str()),
        "{}",
        env.stderr
    );
    // Given before the subcommand, too.
    let output = std::process::Command::new(crate::support::BIN)
        .current_dir(dir.path())
        .env_clear()
        .args([
            "--tools",
            &tools,
            "manifest-lint",
            "--resources",
            &resources,
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), summary);

    // Only the manifest named is replaced; the other is still read from the directory.
    let one = lint_in(dir.path(), &["--resources", &resources], &[]);
    assert_eq!(one.code, 1, "{}", one.stdout);
    assert!(one.stdout.starts_with("tools.yaml:1:"), "{}", one.stdout);
    assert!(
        one.stdout.ends_with(&format!(
            "{resources}, tools.yaml, search.yaml (built-in): 1 error(s), 0 warning(s)\n"
        )),
        "{}",
        one.stdout
    );
}

#[test]
fn lint_refuses_a_manifest_here_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tools.yaml")).unwrap();
    let out = lint_in(dir.path(), &[], &[]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("cannot read tools.yaml in the working directory")
            && out.stderr.contains("--tools FILE"),
        "{}",
        out.stderr
    );
}
