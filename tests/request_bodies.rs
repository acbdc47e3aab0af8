//! The manifest features generated tools need, used from a hand-written `tools.yaml`: whole
//! JSON Schema arguments, the whole body as one argument (JSON or text), multipart fields and
//! files, repeated query pairs, segments joining variables, and answers read as text or bytes.

use forgelens::engine::Catalog;
use forgelens::forge::{Accept, FormPart, FormValue, Payload, Request};
use forgelens::manifest::{FileId, Source};
use serde_json::{Value, json};

/// Compiles `tools` the way a generated catalog is compiled: on their own.
fn compile(tools: &str) -> Result<Catalog, Vec<String>> {
    forgelens::service::compile_generated(
        &Source::builtin(FileId::Resources),
        &Source {
            name: "t.yaml".into(),
            text: format!(
                "toolsets:\n  t:\n    description: Test tools.\n    tools:\n{}",
                indent(tools)
            ),
        },
    )
    .map_err(|d| d.iter().map(|d| d.to_string()).collect())
}

/// `tools` as the tool list of the toolset `t`.
fn indent(tools: &str) -> String {
    tools.lines().map(|l| format!("    {l}\n")).collect()
}

fn request(catalog: &Catalog, tool: &str, args: Value) -> Request {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    let call = catalog
        .tool(tool)
        .unwrap_or_else(|| panic!("{tool}"))
        .prepare(args)
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    call.request().unwrap_or_else(|e| panic!("{tool}: {e}"))
}

const TOOLS: &str = r#"
  - name: create_thing
    title: Create a thing
    description: Creates a thing.
    call: POST /repos/{owner}/{repo}/things
    args:
      owner: {type: string, description: Owner.}
      repo: {type: string, description: Repository.}
      body:
        in: payload
        required: true
        description: The thing.
        schema:
          type: object
          required: [name]
          additionalProperties: false
          properties:
            name: {type: string}
            tags: {type: array, items: {type: object, properties: {id: {type: integer}}, additionalProperties: false}}
            meta: {type: object, additionalProperties: {type: string}}
  - name: render_text
    title: Render
    description: Renders text.
    call: POST /markdown/raw
    accept: text
    annotations: {read_only: true, idempotent: true}
    args:
      text: {in: payload, schema: {type: string}, required: true, description: Markdown.}
  - name: upload
    title: Upload
    description: Uploads a file.
    call: POST /repos/{owner}/{repo}/releases/{id}/assets?name={name}
    args:
      owner: {type: string, description: Owner.}
      repo: {type: string, description: Repository.}
      id: {type: integer, description: Release.}
      name: {type: string, description: File name.}
      attachment: {in: file, schema: {type: string, contentEncoding: base64}, required: true, description: Content.}
      external_url: {in: form, type: string, description: A link instead.}
  - name: read_diff
    title: Diff
    description: A diff.
    call: GET /repos/{owner}/{repo}/pulls/{index}.{kind}?types={types*}
    accept: binary
    args:
      owner: {type: string, description: Owner.}
      repo: {type: string, description: Repository.}
      index: {type: integer, description: Index.}
      kind: {type: string, enum: [diff, patch], description: Kind.}
      types: {type: array, items: {type: string}, description: Types.}
"#;

#[test]
fn a_payload_argument_is_the_whole_json_body_held_to_its_schema() {
    let catalog = compile(TOOLS).unwrap();
    let r = request(
        &catalog,
        "create_thing",
        json!({"owner": "o", "repo": "r", "body": {"name": "n", "tags": [{"id": 1}], "meta": {"k": "v"}}}),
    );
    assert_eq!(r.path, "/repos/o/r/things");
    assert_eq!(
        r.body,
        Some(Payload::Json(
            json!({"name": "n", "tags": [{"id": 1}], "meta": {"k": "v"}})
        ))
    );
    let tool = catalog.tool("create_thing").unwrap();
    assert_eq!(
        tool.input_schema(forgelens::engine::tool::Form::Complete)["properties"]["body"]["required"],
        json!(["name"])
    );
    for (bad, why) in [
        (
            json!({"name": "n", "extra": 1}),
            "has unknown property `extra`",
        ),
        (json!({"tags": []}), "needs property `name`"),
        (
            json!({"name": "n", "tags": [{"id": "x"}]}),
            "must be of type integer",
        ),
        (
            json!({"name": "n", "meta": {"k": 2}}),
            "property `k` must be of type string",
        ),
    ] {
        let args = json!({"owner": "o", "repo": "r", "body": bad});
        let Value::Object(args) = args else {
            unreachable!()
        };
        let err = tool.prepare(args).unwrap_err().to_string();
        assert!(err.contains(why), "{err} / {why}");
    }
}

#[test]
fn a_string_payload_is_sent_as_text_and_read_back_as_text() {
    let catalog = compile(TOOLS).unwrap();
    let r = request(&catalog, "render_text", json!({"text": "# Hi"}));
    assert_eq!(r.body, Some(Payload::Text("# Hi".into())));
    assert_eq!(r.accept, Accept::Text);
    let tool = catalog.tool("render_text").unwrap();
    assert!(
        tool.annotations.read_only,
        "a POST may be declared read-only"
    );
}

#[test]
fn files_and_form_fields_make_a_multipart_body() {
    let catalog = compile(TOOLS).unwrap();
    let r = request(
        &catalog,
        "upload",
        json!({"owner": "o", "repo": "r", "id": 4, "name": "a.txt", "attachment": "aGVsbG8=", "external_url": "https://x"}),
    );
    assert_eq!(r.query, [("name".to_string(), "a.txt".to_string())]);
    assert_eq!(
        r.body,
        Some(Payload::Multipart(vec![
            FormPart {
                name: "attachment".into(),
                value: FormValue::File {
                    bytes: b"hello".to_vec(),
                    filename: "attachment".into()
                }
            },
            FormPart {
                name: "external_url".into(),
                value: FormValue::Text("https://x".into())
            },
        ]))
    );
    let tool = catalog.tool("upload").unwrap();
    let args = json!({"owner": "o", "repo": "r", "id": 4, "attachment": "not base64!"});
    let Value::Object(args) = args else {
        unreachable!()
    };
    let err = tool
        .prepare(args)
        .unwrap()
        .request()
        .unwrap_err()
        .to_string();
    assert!(err.contains("`attachment` is not base64"), "{err}");
}

#[test]
fn joined_segments_exploded_queries_and_binary_answers() {
    let catalog = compile(TOOLS).unwrap();
    let r = request(
        &catalog,
        "read_diff",
        json!({"owner": "o", "repo": "r", "index": 7, "kind": "patch", "types": ["a", "b"]}),
    );
    assert_eq!(r.path, "/repos/o/r/pulls/7.patch");
    assert_eq!(
        r.query,
        [
            ("types".to_string(), "a".to_string()),
            ("types".into(), "b".into())
        ]
    );
    assert_eq!(r.accept, Accept::Binary);
}

#[test]
fn inconsistent_bodies_and_schemas_are_refused() {
    let cases = [
        (
            "    call: POST /x\n    args:\n      a: {type: string, description: A.}\n      b: {in: payload, type: object, description: B.}\n",
            "a request has one body; these arguments make JSON body fields (`a`) and a payload (`b`)",
        ),
        (
            "    call: POST /x\n    args:\n      a: {in: payload, type: object, description: A.}\n      b: {in: payload, type: object, description: B.}\n",
            "only one argument can be the whole body (`in: payload`), not `a`, `b`",
        ),
        (
            "    call: POST /x\n    args:\n      a: {in: file, type: string, description: A.}\n      b: {in: payload, type: object, description: B.}\n",
            "these arguments make a payload (`b`) and multipart fields (`a`)",
        ),
        (
            "    call: POST /x\n    args:\n      a: {in: file, schema: {type: integer}, description: A.}\n",
            "file argument `a` carries base64 text",
        ),
        (
            "    call: POST /x\n    args:\n      a: {type: string, schema: {type: string}, description: A.}\n",
            "`schema` replaces `rule`, `type` and their keywords",
        ),
        (
            "    call: POST /x\n    args:\n      a: {in: payload, schema: [1], description: A.}\n",
            "`schema` must be a JSON Schema object",
        ),
        (
            "    call: POST /x/{a}\n    args:\n      a: {in: payload, schema: {type: string}, description: A.}\n",
            "is declared `in: Payload`",
        ),
        (
            "    call: PUT /x\n    annotations: {read_only: true}\n",
            "calls PUT but is marked read-only; only GET and POST tools may be",
        ),
    ];
    for (body, expected) in cases {
        let tool = format!("  - name: bad\n    title: B\n    description: B.\n{body}");
        let errors = compile(&tool).expect_err(body);
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{body}\nexpected {expected}\ngot {errors:#?}"
        );
    }
}
