//! A spec in, the generated tools out: one tool per operation, each with its name, toolset,
//! request line, arguments, annotations and a description written from the spec's facts.
//!
//! Arguments: path and query parameters become top-level arguments (names made of letters,
//! digits and `_`: `user-id` becomes `user_id`); the fields of a JSON body that is an object of
//! named fields become top-level arguments too (`in: body`, each sent under its own name), so a
//! call gives `{title, key}` rather than `{body: {title, key}}`; any other JSON body (an array,
//! a map, text) is the `body` argument, sent as the whole body (`in: payload`); multipart files are base64 text (`in: file`) and other form
//! fields `in: form`. Header parameters are not exposed. A repeated-form array (`collectionFormat:
//! multi`) is exploded (`name={arg*}`); other arrays are joined with commas.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::CatalogError;
use super::annotate::{self, Hints};
use super::naming::{self, Domain, Subject};
use super::overrides::Overrides;
use super::schema;
use super::swagger::{Operation, Parameter, Spec};
use crate::engine::tool::SUDO;
use crate::forge::Method;

/// What the generator may add beyond the facts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Put each operation's summary from the spec in front of its description. For a user's
    /// own spec at run time; never for files committed to this project.
    pub summaries: bool,
}

/// The generated catalog.
#[derive(Debug, Clone)]
pub struct Generated {
    /// `info.version` of the spec.
    pub api_version: Option<String>,
    /// Sorted by name.
    pub tools: Vec<GeneratedTool>,
}

impl Generated {
    /// The domains the tools use, in [`Domain::ALL`] order.
    pub fn domains(&self) -> Vec<Domain> {
        Domain::ALL
            .into_iter()
            .filter(|d| self.tools.iter().any(|t| t.domain == *d))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct GeneratedTool {
    pub name: String,
    pub domain: Domain,
    pub method: Method,
    /// The path as the spec writes it.
    pub path: String,
    pub operation_id: String,
    pub title: String,
    pub description: String,
    /// The request line of the manifest (`call:`).
    pub call: String,
    pub args: Vec<GeneratedArg>,
    pub hints: Hints,
    /// `text` or `binary` when the answer is not JSON.
    pub accept: Option<&'static str>,
}

#[derive(Debug, Clone)]
pub struct GeneratedArg {
    pub name: String,
    /// The name it is sent under, when it is not `name` (a body field whose name was taken).
    pub field: Option<String>,
    pub description: String,
    pub location: Location,
    /// Whether the spec requires it (path arguments always are).
    pub required: bool,
    pub shape: Shape,
}

/// Where an argument goes upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    Path,
    Query,
    /// One field of a JSON body.
    Body,
    /// The whole body.
    Payload,
    Form,
    File,
}

impl Location {
    /// The manifest's `in:` value, when the engine would not derive it from the request line.
    pub fn declared(self) -> Option<&'static str> {
        match self {
            Location::Path | Location::Query => None,
            Location::Body => Some("body"),
            Location::Payload => Some("payload"),
            Location::Form => Some("form"),
            Location::File => Some("file"),
        }
    }
}

/// How an argument's type is written.
#[derive(Debug, Clone)]
pub enum Shape {
    /// The manifest's own keys: `type`, `enum`, `pattern`, `max_length`, `minimum`,
    /// `maximum`, `items`.
    Keys(Map<String, Value>),
    /// A whole JSON Schema (`schema:`).
    Schema(Value),
}

/// Generates the catalog of `spec`.
pub fn generate(
    spec: &Spec,
    overrides: &Overrides,
    options: Options,
) -> Result<Generated, CatalogError> {
    let mut operations: Vec<(&String, Method, &Operation, Vec<Parameter>)> = Vec::new();
    for (path, item) in &spec.paths {
        for (method, op) in item.operations() {
            operations.push((path, method, op, spec.parameters(item, op)?));
        }
    }
    operations.sort_by_key(|(path, method, ..)| ((*path).clone(), method_rank(*method)));
    let subjects: Vec<Subject> = operations
        .iter()
        .map(|(path, method, op, _)| Subject {
            method: *method,
            path: (*path).clone(),
            operation_id: op
                .operation_id
                .clone()
                .unwrap_or_else(|| naming::fallback_id(*method, path)),
        })
        .collect();
    let names = naming::assign(&subjects, overrides)?;
    let mut tools = Vec::with_capacity(operations.len());
    for (((path, method, op, params), subject), name) in operations.iter().zip(&subjects).zip(names)
    {
        tools.push(tool(
            spec, overrides, options, name, subject, path, *method, op, params,
        )?);
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Generated {
        api_version: spec.info.version.clone(),
        tools,
    })
}

fn method_rank(method: Method) -> u8 {
    match method {
        Method::Get => 0,
        Method::Post => 1,
        Method::Put => 2,
        Method::Patch => 3,
        Method::Delete => 4,
    }
}

/// Argument names already used by a tool.
struct Names(HashSet<String>);

impl Names {
    fn new() -> Names {
        Names(HashSet::from([SUDO.to_owned()]))
    }

    /// `wanted` made a valid argument name, changed when it is taken.
    fn claim(&mut self, wanted: &str, location: &str) -> String {
        let base = sanitize(wanted);
        let mut name = base.clone();
        let mut n = 1;
        while self.0.contains(&name) {
            name = if n == 1 {
                format!("{base}_{location}")
            } else {
                format!("{base}_{location}_{n}")
            };
            n += 1;
        }
        self.0.insert(name.clone());
        name
    }
}

/// Letters, digits and `_` only (`user-id` → `user_id`).
fn sanitize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_').to_owned();
    if out.is_empty() {
        "arg".to_owned()
    } else {
        out
    }
}

#[allow(clippy::too_many_arguments)]
fn tool(
    spec: &Spec,
    overrides: &Overrides,
    options: Options,
    name: String,
    subject: &Subject,
    path: &str,
    method: Method,
    op: &Operation,
    params: &[Parameter],
) -> Result<GeneratedTool, CatalogError> {
    let mut names = Names::new();
    let mut args = Vec::new();
    let mut facts = Facts::default();

    // Path: every `{var}` of the path, typed by its parameter when the spec declares one.
    let segments: Vec<&str> = path.split('/').collect();
    let mut call_path = String::new();
    for (i, segment) in segments.iter().enumerate().skip(1) {
        call_path.push('/');
        let mut rest = *segment;
        while let Some(start) = rest.find('{') {
            let Some(len) = rest[start..].find('}') else {
                break;
            };
            let var = &rest[start + 1..start + len];
            let param = params
                .iter()
                .find(|p| p.location == "path" && p.name == var);
            let arg = names.claim(var, "path");
            let spans = i + 1 == segments.len()
                && *segment == format!("{{{var}}}")
                && overrides.spanning.iter().any(|s| s == var);
            call_path.push_str(&rest[..start]);
            call_path.push_str(&if spans {
                format!("{{+{arg}}}")
            } else {
                format!("{{{arg}}}")
            });
            facts.path.push(arg.clone());
            args.push(path_arg(arg, var, param, spans, overrides));
            rest = &rest[start + len + 1..];
        }
        call_path.push_str(rest);
    }

    // Query.
    let mut query = Vec::new();
    for p in params.iter().filter(|p| p.location == "query") {
        let arg = names.claim(&p.name, "query");
        let explode =
            p.kind.as_deref() == Some("array") && p.collection_format.as_deref() == Some("multi");
        query.push(format!(
            "{}={{{arg}{}}}",
            p.name,
            if explode { "*" } else { "" }
        ));
        facts.query.push(describe_param(&arg, p));
        args.push(GeneratedArg {
            field: None,
            description: query_description(p, explode),
            location: Location::Query,
            required: p.required,
            shape: Shape::Keys(keys(p)),
            name: arg,
        });
    }

    // Body, or a multipart form.
    let multipart = op.consumes.iter().any(|c| c == "multipart/form-data")
        || params.iter().any(|p| p.location == "formData");
    let mut has_body = false;
    if let Some(p) = params.iter().find(|p| p.location == "body") {
        has_body = true;
        let shape = schema::body(p.schema.as_ref().unwrap_or(&json!({})), &spec.definitions)?;
        match schema::fields(&shape) {
            Some(fields) => {
                let mut named = Vec::new();
                for (field, schema, required) in fields {
                    let arg = names.claim(field, "body");
                    // A field the schema requires is required whenever there is a body, and a
                    // write's body always is (the spec marks few bodies required).
                    named.push(match required {
                        true => format!("`{arg}` (required)"),
                        false => format!("`{arg}`"),
                    });
                    args.push(GeneratedArg {
                        description: "A field of the JSON body.".to_owned(),
                        field: (arg != field).then(|| field.to_owned()),
                        location: Location::Body,
                        required,
                        shape: Shape::Schema(schema.clone()),
                        name: arg,
                    });
                }
                facts.body = Some(format!("the JSON fields {}", named.join(", ")));
            }
            None => {
                let arg = names.claim("body", "payload");
                let what = match p.schema.as_ref().and_then(schema::definition_name) {
                    Some(def) => format!("a `{def}` object"),
                    None if shape.get("type") == Some(&json!("string")) => "text".to_owned(),
                    None => format!(
                        "{} JSON",
                        shape.get("type").and_then(Value::as_str).unwrap_or("any")
                    ),
                };
                facts.body = Some(format!(
                    "`{arg}`: {what}{}",
                    if p.required { " (required)" } else { "" }
                ));
                args.push(GeneratedArg {
                    description: if what == "text" {
                        "The request body, sent as text.".to_owned()
                    } else {
                        format!("The JSON request body: {what}.")
                    },
                    field: None,
                    location: Location::Payload,
                    required: p.required,
                    shape: Shape::Schema(shape),
                    name: arg,
                });
            }
        }
    } else if multipart {
        for p in params.iter().filter(|p| p.location == "formData") {
            has_body = true;
            let arg = names.claim(&p.name, "form");
            let file = p.kind.as_deref() == Some("file");
            facts.form.push(if file {
                format!("`{arg}` (a file, base64)")
            } else {
                describe_param(&arg, p)
            });
            args.push(if file {
                GeneratedArg {
                    field: None,
                    description: format!(
                        "Content of the file to upload, base64-encoded (multipart file `{}`).",
                        p.name
                    ),
                    location: Location::File,
                    required: p.required,
                    shape: Shape::Schema(json!({"type": "string", "contentEncoding": "base64"})),
                    name: arg,
                }
            } else {
                GeneratedArg {
                    field: None,
                    description: format!("Multipart form field `{}`.", p.name),
                    location: Location::Form,
                    required: p.required,
                    shape: Shape::Keys(keys(p)),
                    name: arg,
                }
            });
        }
    }

    let hints = annotate::hints(method, path, has_body, overrides);
    let accept = accept(&op.produces);
    let domain = naming::domain(path);
    let mut call = format!("{} {call_path}", method.as_str());
    if !query.is_empty() {
        call.push('?');
        call.push_str(&query.join("&"));
    }
    let posted = spec.paths.get(path).is_some_and(|item| item.post.is_some());
    let title = super::title::of(method, path, posted, &overrides.nouns).text;
    let description = describe(
        method,
        path,
        &subject.operation_id,
        op,
        &facts,
        hints,
        accept,
        options,
    );
    Ok(GeneratedTool {
        name,
        domain,
        method,
        path: path.to_owned(),
        operation_id: subject.operation_id.clone(),
        title,
        description,
        call,
        args,
        hints,
        accept,
    })
}

fn path_arg(
    arg: String,
    var: &str,
    param: Option<&Parameter>,
    spans: bool,
    overrides: &Overrides,
) -> GeneratedArg {
    let mut k = match param {
        Some(p) => keys(p),
        None => Map::from_iter([("type".to_owned(), json!("string"))]),
    };
    let class = overrides
        .pattern_of(var)
        .filter(|_| k.get("type") == Some(&json!("string")));
    let description = match class {
        Some(c) => {
            k.insert("pattern".into(), json!(c.pattern));
            if let Some(max) = c.max_length {
                k.insert("max_length".into(), json!(max));
            }
            c.description.clone()
        }
        None if spans => format!("Path parameter `{var}`; may contain `/`."),
        None => format!("Path parameter `{var}` ({}).", type_words(param)),
    };
    GeneratedArg {
        name: arg,
        field: None,
        description,
        location: Location::Path,
        required: true,
        shape: Shape::Keys(k),
    }
}

/// The manifest keys of a parameter's type.
fn keys(p: &Parameter) -> Map<String, Value> {
    let mut k = Map::new();
    let kind = schema::json_type(p.kind.as_deref());
    k.insert("type".into(), json!(kind));
    if let Some(values) = &p.values
        && !values.is_empty()
    {
        k.insert("enum".into(), Value::Array(values.clone()));
    }
    if kind == "integer" {
        for (key, bound) in [("minimum", p.minimum), ("maximum", p.maximum)] {
            if let Some(b) = bound.filter(|b| b.fract() == 0.0) {
                k.insert(key.into(), json!(b as i64));
            }
        }
    }
    if kind == "array" {
        k.insert("items".into(), item_keys(schema::items(p.items.as_ref())));
    }
    k
}

/// An array parameter's element schema in the manifest's words for `items:` (the keys it
/// takes; a bound that is not a whole number, which `items:` cannot say, is left out).
fn item_keys(schema: Value) -> Value {
    let Value::Object(schema) = schema else {
        return json!({"type": "string"});
    };
    let mut k = Map::new();
    for (key, value) in schema {
        let keep = match key.as_str() {
            "type" | "format" | "enum" | "pattern" => true,
            "minimum" | "maximum" => value.is_i64(),
            _ => false,
        };
        if keep {
            k.insert(key, value);
        }
    }
    if !k.contains_key("type") {
        k.insert("type".into(), json!("string"));
    }
    Value::Object(k)
}

/// `integer`, `string, date-time`, `array of string`.
fn type_words(p: Option<&Parameter>) -> String {
    let Some(p) = p else {
        return "string".to_owned();
    };
    let kind = schema::json_type(p.kind.as_deref());
    match (kind, &p.format) {
        ("array", _) => {
            let inner = schema::items(p.items.as_ref());
            format!(
                "array of {}",
                inner
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("string")
            )
        }
        ("integer", _) | (_, None) => kind.to_owned(),
        (_, Some(format)) => format!("{kind}, {format}"),
    }
}

fn query_description(p: &Parameter, explode: bool) -> String {
    let mut d = format!("Query parameter `{}` ({})", p.name, type_words(Some(p)));
    if p.kind.as_deref() == Some("array") {
        d.push_str(if explode {
            "; sent once per item"
        } else {
            "; sent comma-separated"
        });
    }
    if let Some(default) = &p.default {
        d.push_str(&format!("; the forge's default is {default}"));
    }
    d.push('.');
    d
}

/// `state` (closed, open, all), `since` (string, date-time).
fn describe_param(arg: &str, p: &Parameter) -> String {
    match &p.values {
        Some(values) if !values.is_empty() => {
            let shown: Vec<String> = values
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            format!("`{arg}` ({})", shown.join(", "))
        }
        _ => format!("`{arg}` ({})", type_words(Some(p))),
    }
}

/// How the answer is read: JSON unless the operation only produces text or other bytes.
fn accept(produces: &[String]) -> Option<&'static str> {
    let json = |m: &str| m == "application/json" || m.ends_with("+json");
    if produces.is_empty() || produces.iter().any(|m| json(m)) {
        None
    } else if produces
        .iter()
        .all(|m| m.starts_with("text/") || m == "application/octet-stream")
    {
        Some("text")
    } else {
        Some("binary")
    }
}

/// The facts a description lists.
#[derive(Default)]
struct Facts {
    path: Vec<String>,
    query: Vec<String>,
    body: Option<String>,
    form: Vec<String>,
}

#[allow(clippy::too_many_arguments)]
fn describe(
    method: Method,
    path: &str,
    operation_id: &str,
    op: &Operation,
    facts: &Facts,
    hints: Hints,
    accept: Option<&str>,
    options: Options,
) -> String {
    let mut parts = Vec::new();
    if options.summaries
        && let Some(summary) = op
            .summary
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
    {
        let mut s = summary.to_owned();
        if !s.ends_with('.') {
            s.push('.');
        }
        parts.push(s);
    }
    parts.push(format!(
        "Calls `{} {path}` (operation `{operation_id}`).",
        method.as_str()
    ));
    let quoted = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !facts.path.is_empty() {
        parts.push(format!("Path: {}.", quoted(&facts.path)));
    }
    if !facts.query.is_empty() {
        parts.push(format!("Query: {}.", facts.query.join(", ")));
    }
    if let Some(body) = &facts.body {
        parts.push(format!("Body: {body}."));
    }
    if !facts.form.is_empty() {
        parts.push(format!("Multipart form: {}.", facts.form.join(", ")));
    }
    match accept {
        Some("text") => parts.push("Answers text, returned under `result`.".to_owned()),
        Some(_) => parts.push("Answers bytes, returned base64-encoded under `result`.".to_owned()),
        None => {}
    }
    if hints.read_only == Some(true) {
        parts.push("Changes nothing on the forge.".to_owned());
    }
    if hints.destructive == Some(true) {
        parts.push(
            "Overwrites or removes state that cannot be restored by another call.".to_owned(),
        );
    }
    if op.deprecated {
        parts.push("Deprecated by the forge.".to_owned());
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_names_are_made_valid_and_unique() {
        let mut names = Names::new();
        assert_eq!(names.claim("user-id", "path"), "user_id");
        assert_eq!(names.claim("status-types", "query"), "status_types");
        assert_eq!(names.claim("sudo", "query"), "sudo_query");
        assert_eq!(names.claim("user_id", "query"), "user_id_query");
        assert_eq!(names.claim("user_id", "query"), "user_id_query_2");
        assert_eq!(sanitize("--"), "arg");
    }

    #[test]
    fn answers_are_read_by_what_the_operation_produces() {
        let cases: &[(&[&str], Option<&str>)] = &[
            (&[], None),
            (&["application/json"], None),
            (&["application/ld+json"], None),
            (&["text/plain"], Some("text")),
            (&["text/html"], Some("text")),
            (&["application/octet-stream"], Some("text")),
            (
                &["application/octet-stream", "application/zip"],
                Some("binary"),
            ),
        ];
        for (produces, expected) in cases {
            let produces: Vec<String> = produces.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(accept(&produces), *expected, "{produces:?}");
        }
    }
}
