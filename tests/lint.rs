//! Every manifest check fires on a broken manifest, with its code, file and line; the check
//! table and `docs/manifest-reference.md` agree.

use forgelens::manifest::checks::{self, Code};
use forgelens::manifest::{Diagnostic, Source, Sources};

const ERRORS: &str = r#"errors:
  status: {"404": not_found}
  codes: {invalid_params: -32602, forbidden: -32002, not_found: -32003, rate_limited: -32603, upstream_error: -32603}
"#;

const RULES: &str = r#"rules:
  name: {pattern: '[a-z]+'}
  id: {type: integer, minimum: 1}
  sha: {pattern: '[0-9a-f]{40}'}
"#;

const TOOLS: &str = r#"toolsets:
  things:
    description: Things.
    tools:
      - name: list_things
        title: List things
        description: Lists things.
        call: GET /things/{owner}
        args:
          owner: {rule: name, description: Owner.}
        list: {}
"#;

/// A resource manifest with `resources` after the shared rules and error table.
fn resources(resources: &str) -> String {
    format!("{RULES}{ERRORS}resources:\n{resources}")
}

const THING: &str = r#"  - name: thing
    title: Thing
    uri: forgejo://repo/{owner}/thing/{id}
    description: A thing.
    params: {owner: name, id: id}
    fetch: GET /things/{owner}/{id}
    cache: mutable
"#;

fn lint(resources: &str, tools: &str) -> Vec<Diagnostic> {
    let sources = Sources {
        resources: Source {
            name: "r.yaml".into(),
            text: resources.into(),
        },
        tools: Source {
            name: "t.yaml".into(),
            text: tools.into(),
        },
        search: Source {
            name: "s.yaml".into(),
            text: "{}".into(),
        },
        catalog: None,
    };
    match forgelens::service::compile(&sources) {
        Ok(_) => Vec::new(),
        Err(d) => d,
    }
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in the manifest")) as u64
        + 1
}

struct Case {
    code: Code,
    resources: String,
    tools: String,
    /// Which file and which text the finding must point at.
    file: &'static str,
    at: &'static str,
}

fn r(code: Code, resources_text: String, at: &'static str) -> Case {
    Case {
        code,
        resources: resources_text,
        tools: TOOLS.into(),
        file: "r.yaml",
        at,
    }
}

fn t(code: Code, tools_text: String, at: &'static str) -> Case {
    Case {
        code,
        resources: resources(THING),
        tools: tools_text,
        file: "t.yaml",
        at,
    }
}

fn cases() -> Vec<Case> {
    let tool = |body: &str| format!("{TOOLS}{body}");
    vec![
        r(checks::YAML_SYNTAX, format!("{RULES}{ERRORS}resources: [\n  {{name: x\n"), "{name: x"),
        r(checks::UNKNOWN_KEY, resources(&THING.replace("    cache: mutable", "    cache: mutable\n    colour: blue")), "colour"),
        r(checks::WRONG_TYPE, format!("{RULES}{ERRORS}defaults: {{cap: many}}\nresources: []\n"), "cap: many"),
        r(checks::TEMPLATE_SYNTAX, resources(&THING.replace("thing/{id}", "thing/x{id}")), "uri:"),
        r(checks::TEMPLATE_SCHEME, resources(&THING.replace("forgejo://", "https://")), "uri:"),
        r(checks::DUPLICATE_TEMPLATE, resources(&format!("{THING}{}", THING.replace("/thing/", "/other/"))), "/other/"),
        r(
            checks::ROUTE_CONFLICT,
            resources(&format!("{THING}{}", THING.replace("name: thing", "name: thing2").replace("{id}", "{n}").replace("id: id}", "n: id}"))),
            "{n}",
        ),
        r(checks::SCOPELESS_ID, resources(&THING.replace("repo/{owner}/thing/{id}", "thing/{id}").replace("{owner: name, id: id}", "{id: id}").replace("/things/{owner}/{id}", "/things/{id}")), "uri:"),
        r(
            checks::UNKNOWN_TEMPLATE,
            format!("{RULES}{ERRORS}listing:\n  - {{fetch: GET /user/things, uri: 'forgejo://nowhere', args: {{}}, name: $.name}}\nresources:\n{THING}"),
            "forgejo://nowhere",
        ),
        r(checks::UNKNOWN_RULE, resources(&THING.replace("owner: name,", "owner: nmae,")), "nmae"),
        r(checks::UNRULED_VARIABLE, resources(&THING.replace("{owner: name, id: id}", "{owner: name}")), "uri:"),
        r(checks::UNUSED_VARIABLE, resources(&THING.replace("GET /things/{owner}/{id}", "GET /things/{owner}")), "uri:"),
        r(checks::UNBOUND_PLACEHOLDER, resources(&THING.replace("GET /things/{owner}/{id}", "GET /things/{owner}/{id}/{part}")), "fetch:"),
        r(checks::BAD_RULE, format!("rules:\n  broken: {{pattern: '('}}\n{}", &resources(THING)["rules:\n".len()..]), "broken"),
        Case {
            code: checks::DUPLICATE_RULE,
            resources: resources(THING),
            tools: format!("rules:\n  name: {{pattern: '[a-z]+'}}\n{TOOLS}"),
            file: "t.yaml",
            at: "name: {pattern",
        },
        r(checks::REQUEST_SYNTAX, resources(&THING.replace("GET /things", "FETCH /things")), "fetch:"),
        r(checks::JSONPATH_SYNTAX, resources(&THING.replace("    cache: mutable", "    project: {a: '$.x[?'}\n    cache: mutable")), "project:"),
        r(checks::MARKDOWN_SYNTAX, resources(&THING.replace("    cache: mutable", "    project: {a: $.a}\n    markdown: {template: '{{ a '}\n    cache: mutable")), "markdown:"),
        r(checks::MARKDOWN_FIELD, resources(&THING.replace("    cache: mutable", "    project: {body: $.body}\n    markdown: {template: '{{ bdy }}'}\n    cache: mutable")), "markdown:"),
        r(checks::EXPRESSION, resources(&THING.replace("    cache: mutable", "    project: {a: $.a | shout}\n    cache: mutable")), "project:"),
        r(checks::EXPRESSION, resources(&THING.replace("    cache: mutable", "    project:\n      body: $.body | untrusted(writer)\n    cache: mutable")), "body:"),
        r(checks::EXPRESSION, resources(&THING.replace("    cache: mutable", "    project:\n      kind: '$.pr | then({knd})'\n    cache: mutable")), "kind:"),
        t(checks::BAD_ARGUMENT, TOOLS.replace("owner: {rule: name, description: Owner.}", "owner: {type: string, pattern: '[a-z]+', description: Owner.}"), "owner:"),
        r(
            checks::UNKNOWN_TOOL,
            resources(&THING.replace("uri: forgejo://repo/{owner}/thing/{id}", "uri: 'forgejo://repo/{owner}/things{?page,limit}'").replace("{owner: name, id: id}", "{owner: name, page: id, limit: id}").replace("    fetch: GET /things/{owner}/{id}\n", "").replace("    cache: mutable", "    list: {tool: list_thing}\n    cache: mutable")),
            "list_thing",
        ),
        t(checks::FIELD_TYPE, tool("      - {name: get_thing, title: G, description: Gets., call: GET /thing, project: {size: $.size}}\n"), "size: $.size"),
        t(checks::FIELD_TYPE, format!("field_types: {{long: [size]}}\n{TOOLS}"), "long: [size]"),
        t(checks::FIELD_TYPE, format!("field_types: {{integer: [size]}}\n{TOOLS}"), "integer: [size]"),
        t(checks::FIELD_TYPE, format!("field_types: {{integer: [size], string: [size]}}\n{TOOLS}"), "integer: [size]"),
        t(checks::FIELD_TYPE, tool("      - {name: get_thing, title: G, description: Gets., call: GET /thing, project: {tags: '$.tags[*].name'}, field_types: {string: [tags]}}\n"), "tags:"),
        t(checks::DUPLICATE_TOOL, tool("      - {name: list_things, title: Again, description: Again., call: GET /again}\n"), "title: Again"),
        t(checks::TOOL_NAME, TOOLS.replace("name: list_things", "name: ListThings"), "ListThings"),
        r(
            checks::PICKED_FIELD,
            resources(&format!("{THING}  - {{name: things, title: Things, uri: 'forgejo://repo/{{owner}}/things{{?page,limit}}', description: Things., params: {{owner: name, page: id, limit: id}},\n      list: {{tool: list_things, fields: [nmae]}}}}\n")),
            "nmae",
        ),
        t(checks::CORE_TOOL, format!("core: [list_things, list_thigns]\n{TOOLS}"), "list_thigns"),
        t(checks::RESERVED_TOOL, tool("      - {name: search_tools, title: S, description: Searches., call: GET /s}\n"), "name: search_tools"),
        t(checks::SYNONYM, format!("search:\n  synonyms:\n    pr: []\n{TOOLS}"), "pr: []"),
        t(checks::LONG_SUMMARY, tool(&format!("      - {{name: long_thing, title: L, description: '{}.', call: GET /l}}\n", "word ".repeat(50))), "long_thing"),
        r(checks::BAD_CAP, format!("{RULES}{ERRORS}defaults: {{cap: 0}}\nresources:\n{THING}"), "cap: 0"),
        t(checks::LIMIT_ABOVE_CAP, TOOLS.replace("list: {}", "list: {default_limit: 60, max_limit: 50}"), "default_limit"),
        r(checks::MUTABLE_KEY, resources(&THING.replace("cache: mutable", "cache: immutable")), "cache: immutable"),
        r(checks::PROVISIONAL, resources(&THING.replace("cache: mutable", "cache: mutable\n    provisional: {field: state, in: [pending], ttl_ms: 1000}")), "provisional:"),
        t(checks::READ_ONLY_WRITE, tool("      - {name: put_thing, title: Put, description: Replaces., call: PUT /things, annotations: {read_only: true}}\n"), "put_thing"),
        t(checks::DELETE_NOT_DESTRUCTIVE, tool("      - {name: drop_thing, title: Drop, description: Drops., call: DELETE /things, annotations: {destructive: false}}\n"), "drop_thing"),
        r(checks::ERROR_TABLE, resources(THING).replace("rate_limited: -32603, ", ""), "  status:"),
        t(checks::BAD_ARGUMENT, TOOLS.replace("owner: {rule: name, description: Owner.}", "owner: {rule: name, description: Owner.}\n          state: {type: string, enum: [open, closed], default: all, description: State.}"), "state:"),
        t(checks::UNKNOWN_RULE, TOOLS.replace("owner: {rule: name, description: Owner.}", "owner: nmae"), "nmae"),
        t(checks::UNKNOWN_KEY, TOOLS.replace("owner: {rule: name, description: Owner.}", "owner: {rule: name}\n          tags: {type: array, items: {type: string, maxLength: 9}}"), "maxLength"),
    ]
}

#[test]
fn every_check_fires_with_its_code_and_line() {
    for case in cases() {
        let findings = lint(&case.resources, &case.tools);
        let text = if case.file == "r.yaml" {
            &case.resources
        } else {
            &case.tools
        };
        let line = line_of(text, case.at);
        let hit = findings.iter().find(|d| d.code == case.code);
        let Some(hit) = hit else {
            panic!("{}: not reported; got {findings:#?}", case.code);
        };
        assert_eq!(
            (hit.file.as_str(), hit.line),
            (case.file, line),
            "{}: {hit}",
            case.code
        );
        assert!(hit.column >= 1, "{}: {hit}", case.code);
    }
}

#[test]
fn every_check_without_outside_input_has_a_case() {
    let covered: Vec<Code> = cases().iter().map(|c| c.code).collect();
    for check in checks::ALL {
        // The swagger checks need a spec: they are tested where the spec is read.
        if [checks::SWAGGER_ENDPOINT, checks::SWAGGER_PARAMETER].contains(&check.code) {
            continue;
        }
        assert!(
            covered.contains(&check.code),
            "{} ({}) has no broken manifest",
            check.code,
            check.summary
        );
    }
}

#[test]
fn the_reference_documents_every_check() {
    let doc = std::fs::read_to_string(format!(
        "{}/docs/manifest-reference.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let documented: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| FL"))
        .map(|l| &l[..3])
        .collect();
    let declared: Vec<String> = checks::ALL
        .iter()
        .map(|c| format!("{:03}", c.code.0))
        .collect();
    assert_eq!(
        documented, declared,
        "docs/manifest-reference.md and manifest/checks.rs list the same codes in the same order"
    );
}

#[test]
fn a_clean_pair_has_no_finding() {
    assert_eq!(lint(&resources(THING), TOOLS), Vec::new());
}

#[test]
fn messages_suggest_the_nearest_name() {
    let findings = lint(
        &resources(&THING.replace("owner: name,", "owner: nmae,")),
        TOOLS,
    );
    let unknown = findings
        .iter()
        .find(|d| d.code == checks::UNKNOWN_RULE)
        .expect("the unknown rule is reported");
    assert!(
        unknown.message.contains("did you mean `name`?"),
        "{unknown}"
    );
    assert_eq!(findings.len(), 1, "one mistake, one finding: {findings:#?}");
}

/// The complete input schema of `list_things` compiled from this tool manifest.
fn things_schema(tools: &str) -> serde_json::Value {
    let sources = Sources {
        resources: Source {
            name: "r.yaml".into(),
            text: resources(THING),
        },
        tools: Source {
            name: "t.yaml".into(),
            text: tools.into(),
        },
        search: Source {
            name: "s.yaml".into(),
            text: "{}".into(),
        },
        catalog: None,
    };
    let catalog = forgelens::service::compile(&sources).expect("the manifests compile");
    let tool = catalog
        .tool("list_things")
        .expect("list_things is declared");
    serde_json::Value::Object(tool.input_schema(forgelens::engine::tool::Form::Complete))
}

#[test]
fn an_argument_written_as_a_rule_name_is_that_rule() {
    let spelled = |owner: &str| {
        things_schema(&TOOLS.replace("owner: {rule: name, description: Owner.}", owner))
    };
    let short = spelled("owner: name");
    assert_eq!(short, spelled("owner: {rule: name}"));
    assert_eq!(
        short["properties"]["owner"]["pattern"], "^(?:[a-z]+)$",
        "{short:#}"
    );
}

#[test]
fn array_elements_are_bounded_in_the_argument_words() {
    let schema = things_schema(&TOOLS.replace(
        "owner: {rule: name, description: Owner.}",
        "owner: {rule: name}\n          tags: {type: array, items: {type: string, max_length: 9}, description: Tags.}",
    ));
    assert_eq!(
        schema["properties"]["tags"]["items"],
        serde_json::json!({"type": "string", "maxLength": 9}),
        "{schema:#}"
    );
}

/// Runs `manifest-lint --swagger` on a pair of manifests and a spec, all written to files.
fn lint_with_spec(resources_text: &str, tools_text: &str, spec: &str) -> crate::support::Run {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (r, t, s) = (
        write("r.yaml", resources_text),
        write("t.yaml", tools_text),
        write("spec.json", spec),
    );
    crate::support::run(
        &[
            "manifest-lint",
            "--resources",
            &r,
            "--tools",
            &t,
            "--swagger",
            &s,
            "--format",
            "json",
        ],
        &[],
    )
}

const SPEC: &str = r#"{"swagger": "2.0", "basePath": "/api/v1", "paths": {
  "/things/{owner}": {"get": {"operationId": "listThings", "parameters": [
    {"name": "owner", "in": "path", "type": "string", "required": true},
    {"name": "page", "in": "query", "type": "integer"},
    {"name": "limit", "in": "query", "type": "integer"}]}},
  "/things/{owner}/{id}": {"get": {"operationId": "getThing", "parameters": [
    {"name": "owner", "in": "path", "type": "string", "required": true},
    {"name": "id", "in": "path", "type": "integer", "required": true}]}}}}"#;

#[test]
fn swagger_checks_find_missing_endpoints_methods_and_parameters() {
    let clean = lint_with_spec(&resources(THING), TOOLS, SPEC);
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);

    let tools = format!(
        "{TOOLS}      - {{name: thing_typo, title: T, description: D., call: GET /thnigs/x}}\n      \
         - {{name: thing_put, title: T, description: D., call: PUT /things/x}}\n      \
         - {{name: thing_sorted, title: T, description: D., call: 'GET /things/x?sort=name'}}\n"
    );
    let out = lint_with_spec(&resources(THING), &tools, SPEC);
    assert_eq!(out.code, 1);
    let findings: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    let found: Vec<(String, u64)> = findings
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("FL031".to_owned(), line_of(&tools, "thing_typo")),
            ("FL031".to_owned(), line_of(&tools, "thing_put")),
            ("FL032".to_owned(), line_of(&tools, "thing_sorted")),
        ],
        "{findings:#?}"
    );
    assert!(
        findings[0]["message"]
            .as_str()
            .unwrap()
            .contains("the spec has no path like `/thnigs/x`")
    );
    assert!(
        findings[1]["message"]
            .as_str()
            .unwrap()
            .contains("has no PUT; it has GET")
    );
    assert!(
        findings[2]["message"]
            .as_str()
            .unwrap()
            .contains("query parameter `sort`")
    );
}

#[test]
fn the_shipped_manifests_match_the_forgejo_spec() {
    let path = format!(
        "{}/../shared/swagger/forgejo-15.0.3.swagger.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let Ok(spec) = std::fs::read_to_string(&path) else {
        println!("skipped: {path} is not here");
        return;
    };
    let out = lint_with_spec(
        forgelens::manifest::BUILTIN_RESOURCES,
        forgelens::manifest::BUILTIN_TOOLS,
        &spec,
    );
    let findings: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    // The tools that say which forges have their endpoint (`needs:`, Gitea's job logs and a
    // run's jobs) are the only ones Forgejo 15's spec lacks.
    let messages: Vec<&str> = findings
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    let needing = needing_tools();
    assert_eq!(messages.len(), needing.len(), "{messages:#?}");
    for (_, line) in &needing {
        assert!(
            messages.iter().any(|m| m.contains(line.as_str())),
            "{line}: {messages:#?}"
        );
    }
}

/// The curated tools that declare which forges have their endpoint, with their request line.
fn needing_tools() -> Vec<(String, String)> {
    let catalog = forgelens::service::compile(&forgelens::manifest::Sources::builtin()).unwrap();
    catalog
        .tools()
        .iter()
        .filter(|t| t.needs.is_some())
        .map(|t| (t.name.clone(), t.endpoint_line()))
        .collect()
}

/// The same, without the spec: the operations of Forgejo 15 the shipped index lists
/// (catalog/api-index.tsv) cover every curated tool's but those that say which forges have it.
#[test]
fn every_curated_tool_but_those_with_needs_is_a_forgejo_operation() {
    use forgelens::catalog::path;
    let catalog = forgelens::service::compile(&forgelens::manifest::Sources::builtin()).unwrap();
    let known = forgelens::catalog::known::builtin();
    let absent: Vec<String> = catalog
        .tools()
        .iter()
        .filter(|t| {
            t.method().is_some_and(|m| {
                !known
                    .iter()
                    .any(|op| op.method == m && path::covers(&op.path, &t.path_pattern()))
            })
        })
        .map(|t| t.name.clone())
        .collect();
    let needing: Vec<String> = needing_tools().into_iter().map(|(n, _)| n).collect();
    assert_eq!(absent, needing);
    assert!(needing.contains(&"get_action_job_logs".to_owned()));
}

#[test]
fn a_misnamed_list_tool_is_one_finding() {
    let list = THING
        .replace(
            "uri: forgejo://repo/{owner}/thing/{id}",
            "uri: 'forgejo://repo/{owner}/things{?page,limit}'",
        )
        .replace(
            "{owner: name, id: id}",
            "{owner: name, page: id, limit: id}",
        )
        .replace("    fetch: GET /things/{owner}/{id}\n", "");
    let clean = list.replace(
        "    cache: mutable",
        "    list: {tool: list_things}\n    cache: mutable",
    );
    assert_eq!(lint(&resources(&clean), TOOLS), Vec::new());

    let misnamed = clean.replace("tool: list_things", "tool: list_thing");
    let findings = lint(&resources(&misnamed), TOOLS);
    assert_eq!(
        findings.len(),
        1,
        "no FL022 about page/limit: {findings:#?}"
    );
    assert_eq!(findings[0].code, checks::UNKNOWN_TOOL);
    assert!(
        findings[0].message.contains("did you mean `list_things`?"),
        "{}",
        findings[0]
    );
}

/// A list resource and its tool are one endpoint: the resource takes the tool's request and
/// items, and says neither again.
#[test]
fn a_list_resource_declares_no_request_or_projection_of_its_own() {
    let list = "  - name: things\n    title: Things\n    uri: 'forgejo://repo/{owner}/things{?page,limit}'\n    description: Things.\n    params: {owner: name, page: id, limit: id}\n    list: {tool: list_things}\n";
    assert_eq!(lint(&resources(list), TOOLS), Vec::new());

    let fetched = list.replace("    list:", "    fetch: GET /things/{owner}\n    list:");
    let findings = lint(&resources(&fetched), TOOLS);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code, checks::WRONG_TYPE);
    assert_eq!(findings[0].line, line_of(&resources(&fetched), "fetch:"));
    assert!(
        findings[0].message.contains("change the tool's `call`"),
        "{}",
        findings[0]
    );

    let projected = format!("{list}    project: {{id: $.id}}\n");
    let findings = lint(&resources(&projected), TOOLS);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code, checks::WRONG_TYPE);
    assert!(
        findings[0].message.contains("pick them with `fields`"),
        "{}",
        findings[0]
    );

    let entity = "  - name: thing\n    title: Thing\n    uri: forgejo://repo/{owner}/thing\n    description: A thing.\n    params: {owner: name}\n";
    let findings = lint(&resources(entity), TOOLS);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert!(
        findings[0].message.contains("needs `fetch`"),
        "{}",
        findings[0]
    );
}

/// An entity may be its tool's endpoint too: it takes the tool's request and projection; its
/// own `project` adds fields, and one of a name the tool has takes that field's place.
#[test]
fn an_entity_names_its_tool_and_adds_or_overrides_fields() {
    let tools = format!(
        "{TOOLS}      - {{name: get_thing, title: G, description: Gets., call: 'GET /things/{{owner}}/{{id}}',\n          args: {{owner: {{rule: name}}, id: {{rule: id}}}}, project: {{id: $.id, name: $.name}}, field_types: {{integer: [id], string: [name]}}}}\n"
    );
    let entity = |extra: &str| {
        resources(&format!(
            "  - name: thing\n    title: Thing\n    uri: forgejo://repo/{{owner}}/thing/{{id}}\n    description: A thing.\n    params: {{owner: name, id: id}}\n    tool: get_thing\n{extra}"
        ))
    };
    assert_eq!(lint(&entity(""), &tools), Vec::new());
    assert_eq!(
        lint(
            &entity("    fields: [name]\n    project: {colour: $.colour}\n"),
            &tools
        ),
        Vec::new()
    );

    // The tool's `name` replaced; a mark may name the author field the tool projects.
    let overridden = entity("    project: {name: $.title | untrusted(id), shown: $.shown}\n");
    assert_eq!(lint(&overridden, &tools), Vec::new());
    let unknown_author = entity("    project: {name: $.title | untrusted(owner_login)}\n");
    let findings = lint(&unknown_author, &tools);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code, checks::EXPRESSION);

    let fetched = entity("    fetch: 'GET /things/{owner}/{id}'\n");
    let findings = lint(&fetched, &tools);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code, checks::WRONG_TYPE);
    assert_eq!(findings[0].line, line_of(&fetched, "fetch:"));

    let list = "  - name: things\n    title: Things\n    uri: 'forgejo://repo/{owner}/things{?page,limit}'\n    description: Things.\n    params: {owner: name, page: id, limit: id}\n    list: {tool: list_things}\n    tool: get_thing\n";
    let findings = lint(&resources(list), &tools);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert!(
        findings[0]
            .message
            .contains("a list names its tool under `list`"),
        "{}",
        findings[0]
    );

    let loose = THING.replace(
        "    cache: mutable",
        "    fields: [name]\n    cache: mutable",
    );
    let findings = lint(&resources(&loose), &tools);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert!(
        findings[0].message.contains("name the tool with `tool`"),
        "{}",
        findings[0]
    );
}

/// An entity whose variable has another name than its tool's argument says so with `args`;
/// a rename the tool or the URI does not have, or one beside a `fetch`, is a finding.
#[test]
fn an_entity_renames_its_tools_arguments_with_args() {
    let tools = format!(
        "{TOOLS}      - {{name: get_thing, title: G, description: Gets., call: 'GET /things/{{owner}}/{{thing_id}}',\n          args: {{owner: {{rule: name}}, thing_id: {{rule: id}}}}, project: {{id: $.id}}, field_types: {{integer: [id]}}}}\n"
    );
    let entity = |args: &str| {
        resources(&format!(
            "  - name: thing\n    title: Thing\n    uri: forgejo://repo/{{owner}}/thing/{{id}}\n    description: A thing.\n    params: {{owner: name, id: id}}\n    tool: get_thing\n{args}"
        ))
    };
    assert_eq!(
        lint(&entity("    args: {thing_id: id}\n"), &tools),
        Vec::new()
    );

    let unrenamed = lint(&entity(""), &tools);
    assert!(
        unrenamed
            .iter()
            .any(|f| f.code == checks::UNBOUND_PLACEHOLDER),
        "{unrenamed:#?}"
    );
    for (args, words) in [
        (
            "    args: {thing_id: id, colour: id}\n",
            "`get_thing` takes no argument `colour`",
        ),
        ("    args: {thing_id: nid}\n", "`nid` is not a variable of"),
    ] {
        let findings = lint(&entity(args), &tools);
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert_eq!(findings[0].code, checks::UNBOUND_PLACEHOLDER);
        assert!(findings[0].message.contains(words), "{}", findings[0]);
    }

    let fetched = THING.replace(
        "    cache: mutable",
        "    args: {thing_id: id}\n    cache: mutable",
    );
    let findings = lint(&resources(&fetched), &tools);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code, checks::WRONG_TYPE);
    assert!(
        findings[0].message.contains("name it with `tool`"),
        "{}",
        findings[0]
    );
}

/// An embed shows its tool's items unless it projects its own, as a list resource does: all
/// their fields, or those `fields` picks; a pick the tool lacks, or `fields` beside a
/// `project`, is a finding.
#[test]
fn an_embed_shows_its_tools_items_or_its_own() {
    let tools = TOOLS.replace("    list: {}\n", "    list: {}\n        project: {id: $.id, name: $.name}\n        field_types: {integer: [id], string: [name]}\n");
    let embed = |extra: &str| {
        resources(&THING.replace(
            "    cache: mutable",
            &format!("    embed:\n      things:\n        fetch: 'GET /things/{{owner}}'\n        tool: list_things\n{extra}    cache: mutable"),
        ))
    };
    assert_eq!(lint(&embed(""), &tools), Vec::new());
    assert_eq!(lint(&embed("        fields: [name]\n"), &tools), Vec::new());
    assert_eq!(
        lint(&embed("        project: {title: $.title}\n"), &tools),
        Vec::new()
    );

    let findings = lint(&embed("        fields: [colour]\n"), &tools);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code, checks::PICKED_FIELD);
    assert!(
        findings[0]
            .message
            .contains("`list_things` projects no field `colour`"),
        "{}",
        findings[0]
    );

    let both = embed("        fields: [name]\n        project: {title: $.title}\n");
    let findings = lint(&both, &tools);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code, checks::WRONG_TYPE);
    assert_eq!(findings[0].line, line_of(&both, "fields: [name]"));
}
