//! A compiled tool, the schemas it announces, and the two halves of calling one: checking the
//! arguments and building the upstream request, then shaping the answer.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};
use serde_json_path::JsonPath;

use super::answer::{self, Expected};
use super::bound::{self, PageRequest};
use super::bound::{LIMIT, PAGE};
use super::endpoint::{Endpoint, GoOn, Serving, list_page, room, within};
use super::error::{Error, Invalid};
use super::policy::{
    self,
    marks::{self, Mark},
};
use super::project::{Context, Meta, Projection};
use super::request::{Args, RequestTemplate};
use super::schema::Check;
use super::text::{Cut, TextSpec};
use super::untrusted::{Rendering, enveloped};
use crate::forge::allow::AllowList;
use crate::forge::{
    Accept, Body, ForgeError, FormPart, FormValue, Method, Payload, Request, Response,
};
use crate::manifest::raw::{ArgLocation, Window as WindowKind};

/// The optional argument every tool takes.
pub const SUDO: &str = "sudo";
/// The pattern of a `sudo` user name, as announced in every input schema.
pub const SUDO_PATTERN: &str = "^[A-Za-z0-9_][A-Za-z0-9_.-]*$";

/// Whether `s` matches [`SUDO_PATTERN`] (checked by hand: no regex on every call).
fn is_user_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Which form of a tool's schema: the lean one `tools/list` advertises, or the complete one
/// `describe_tools` gives (every pattern and length the checker holds a call to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// With `sudo` advertised or not (it is accepted either way).
    Lean {
        sudo: bool,
    },
    Complete,
}

/// The first sentence of a description: what the lean form shows of it.
pub fn summary_of(description: &str) -> &str {
    let text = description.trim();
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text,
    }
}

/// A compiled tool.
#[derive(Debug)]
pub struct Tool {
    pub name: String,
    /// Where the tool's `call` is written, for findings about its request.
    pub pos: crate::manifest::Pos,
    pub title: String,
    /// The manifest's description ([`Tool::complete_description`] adds the paging note).
    pub description: String,
    /// The first sentence of the manifest's description: what `tools/list` shows.
    pub summary: String,
    /// How people ask for what the tool does, for `search_tools`.
    pub keywords: Vec<String>,
    pub toolset: String,
    /// The request, secrets and marks: what the tool shares with a resource of its endpoint.
    pub(crate) endpoint: Endpoint,
    pub(crate) args: Vec<Arg>,
    pub(crate) list: Option<ToolList>,
    pub(crate) text: Option<TextSpec>,
    pub(crate) project: Projection,
    /// The JSON Schema of one result (of one item, for a list), from the projection and the
    /// manifest's field types; kept as JSON text, a fraction of the memory of the tree, which
    /// [`Tool::output_schema`] builds when it is listed (see `docs/performance.md`, Memory).
    pub(crate) item_schema: Box<str>,
    /// What `--allow-repos` holds the tool to, beyond the path of its request.
    pub(crate) scope: Scope,
    pub annotations: Annotations,
    /// How the answer is read.
    pub(crate) accept: Accept,
    /// What the answer must hold of an argument (see [`Confirm`]).
    pub(crate) confirm: Option<Confirm>,
    /// Which forges have the endpoint, when not every one does.
    pub needs: Option<String>,
    /// The meta-tool that runs this tool when `tools/list` does not show it.
    pub via: Option<&'static str>,
    /// From a generated catalog rather than `tools.yaml`.
    pub generated: bool,
    /// What it reads of its answers ([`Tool::reads`]).
    pub(crate) reads: std::sync::OnceLock<Option<std::sync::Arc<crate::forge::subset::Subset>>>,
}

#[derive(Debug)]
pub(crate) struct Arg {
    pub name: String,
    /// Read by forgelens itself (a text range, a diff's file), never sent upstream.
    pub local: bool,
    /// The name the value has upstream (in the body, query or form).
    pub field: String,
    /// Other names a call may use for it (accepted, never advertised).
    pub aliases: Vec<String>,
    /// The manifest's words, announced in the input schema.
    pub description: String,
    pub check: Check,
    pub location: ArgLocation,
    pub required: bool,
    pub default: Option<Value>,
}

#[derive(Debug)]
pub(crate) struct ToolList {
    pub from: Option<JsonPath>,
    pub default_limit: u64,
    pub max_limit: u64,
    pub window: WindowKind,
    /// Only `page` is sent: the forge's page size is fixed (and is `max_limit`).
    pub page_only: bool,
    /// Why an answer that is not a list is the caller's mistake, when the manifest says.
    pub not_a_list: Option<String>,
    /// Fields of the whole answer shown beside the items, and their JSON Schema (an object's,
    /// as text, built like the item schema).
    pub beside: Option<(Projection, Box<str>)>,
}

/// That every value of an argument is in the answer: a forge that drops what it does not know
/// (a label name on an issue) would otherwise answer a success that did less than asked.
#[derive(Debug)]
pub(crate) struct Confirm {
    pub arg: String,
    /// Where the answer holds the values.
    pub found: JsonPath,
    /// What each value must be, in words.
    pub what: String,
    /// GETs over the tool's arguments whose answers hold the values there are (at the path).
    pub known: Vec<(RequestTemplate, JsonPath)>,
}

/// The values of a confirmed argument the answer does not hold, and those it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Unconfirmed {
    pub missing: Vec<String>,
    pub held: Vec<String>,
}

/// The strings at `path` in `value`.
fn strings_at(path: &JsonPath, value: &Value) -> Vec<String> {
    path.query(value)
        .all()
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// What a tool's answers are about, for the repository allow-list (what its requests reach,
/// the forge client checks on every request).
#[derive(Debug, Default)]
pub(crate) struct Scope {
    /// JSONPaths to the full name, or to the owner and the name, of the repository an answer
    /// (each item of a list) is about.
    pub repository_of: Vec<JsonPath>,
}

/// MCP tool annotations, derived from the method unless the manifest overrides them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Annotations {
    /// GET reads; DELETE, PUT and PATCH replace or remove state; GET, PUT and DELETE repeat
    /// safely. A method chosen by the caller (`None`) may do anything.
    pub fn for_method(method: Option<Method>) -> Annotations {
        Annotations {
            read_only: method == Some(Method::Get),
            destructive: matches!(
                method,
                None | Some(Method::Delete | Method::Put | Method::Patch)
            ),
            idempotent: matches!(method, Some(Method::Get | Method::Put | Method::Delete)),
            open_world: true,
        }
    }
}

/// A checked call, ready to send.
#[derive(Debug)]
pub struct Call<'c> {
    pub tool: &'c Tool,
    args: Args,
    page: Option<PageRequest>,
    sudo: Option<String>,
}

impl Tool {
    /// The JSON Schema of the arguments, in the lean form `tools/list` advertises or the
    /// complete form `describe_tools` gives.
    ///
    /// Built on each request rather than kept: held for every tool, the schemas were the
    /// largest part of the server's resident memory (about 1 MB of JSON trees for 219 tools)
    /// for an answer a client asks once per session.
    pub fn input_schema(&self, form: Form) -> Map<String, Value> {
        let complete = form == Form::Complete;
        let mut properties = Map::new();
        let mut required = Vec::new();
        for arg in &self.args {
            let mut schema = match complete {
                true => arg.check.schema(),
                false => arg.check.lean_schema(),
            };
            // Undescribed in the manifest: the name says it; the complete form adds the rule's words.
            let description = match (arg.description.is_empty(), complete) {
                (false, _) => Some(arg.description.as_str()),
                (true, true) => arg.check.rule_description(),
                (true, false) => None,
            };
            if let Some(d) = description {
                schema.insert("description".into(), json!(d));
            }
            let upstream = self
                .endpoint
                .request
                .query_vars()
                .find(|(_, var)| *var == arg.name)
                .map_or(arg.field.as_str(), |(key, _)| key);
            if complete && upstream != arg.name && arg.location != ArgLocation::Path {
                let note = format!("Sent to the forge as `{upstream}`.");
                let text = match schema.get("description").and_then(Value::as_str) {
                    Some(d) => format!("{d} {note}"),
                    None => note,
                };
                schema.insert("description".into(), json!(text));
            }
            if let Some(d) = &arg.default {
                schema.insert("default".into(), d.clone());
            }
            properties.insert(arg.name.clone(), Value::Object(schema));
            if arg.required {
                required.push(json!(arg.name));
            }
        }
        if let Some(list) = &self.list {
            let mut page = json!({"type": "integer", "minimum": 1});
            if complete {
                page["default"] = json!(1);
                page["description"] = json!("Page number, from 1.");
            }
            properties.insert(PAGE.into(), page);
            // A `page_only` list pages by the forge's own size: its limit is that size or nothing.
            let (min, description) = if list.page_only {
                (
                    list.max_limit,
                    format!("Items per page: the forge's fixed {}.", list.max_limit),
                )
            } else {
                (
                    1,
                    format!(
                        "Items per page, 1 to {0}; more is read as {0}.",
                        list.max_limit
                    ),
                )
            };
            let mut limit = json!({"type": "integer", "minimum": min, "maximum": list.max_limit,
                "default": list.default_limit});
            if complete {
                limit["description"] = json!(description);
            }
            properties.insert(LIMIT.into(), limit);
        }
        if complete || form == (Form::Lean { sudo: true }) {
            let mut sudo = json!({"type": "string",
                "description": "Act as this user (sent as the Sudo header). Needs an admin token; leave out otherwise."});
            if complete {
                sudo["pattern"] = json!(SUDO_PATTERN);
            }
            properties.insert(SUDO.into(), sudo);
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".into(), Value::Array(required));
        }
        if complete {
            schema.insert("additionalProperties".into(), json!(false));
        }
        schema
    }

    /// The description with the bounds the engine enforces on a list's paging: what the
    /// complete form shows (the lean forms' schemas already give `page` and `limit`).
    pub fn complete_description(&self) -> String {
        let mut d = self.description.clone();
        if let Some(l) = &self.list {
            // A forge page of fixed size: `limit` can only be that size, so say so.
            let limit = match l.page_only {
                true => format!("{} items per page, the forge's fixed size", l.max_limit),
                false => format!("`limit` 1 to {} (default {})", l.max_limit, l.default_limit),
            };
            d.push_str(&format!(
                " Paged: `page` from 1, {limit}; the result has `items`, `has_more`, `next_page` \
                 when more remain, and `total_count` when the forge reports it."
            ));
        }
        d
    }

    /// The JSON Schema of the structured result, for a list or a GET; built like
    /// [`Tool::input_schema`].
    pub fn output_schema(&self) -> Option<Map<String, Value>> {
        let (method, list) = (self.endpoint.request.method.fixed(), self.list.as_ref());
        let item = || -> Value {
            serde_json::from_str(&self.item_schema).expect("the compiler wrote this JSON")
        };
        let schema = match (list, method) {
            (Some(list), _) => {
                let mut envelope = json!({
                    "type": "object",
                    "properties": {
                        "page": {"type": "integer"},
                        "limit": {"type": "integer"},
                        "total_count": {"type": "integer", "description": "Only when the forge reports it."},
                        "has_more": {"type": "boolean"},
                        "next_page": {"type": "integer"},
                        "items": {"type": "array", "items": item()},
                    },
                    "required": ["page", "limit", "has_more", "items"],
                });
                if let Some((_, schema)) = &list.beside {
                    let beside: Value =
                        serde_json::from_str(schema).expect("the compiler wrote this JSON");
                    if let Some(Value::Object(fields)) = beside.get("properties") {
                        let properties = envelope["properties"]
                            .as_object_mut()
                            .expect("the envelope literal has properties");
                        for (name, field) in fields {
                            properties.insert(name.clone(), field.clone());
                        }
                    }
                }
                envelope
            }
            (None, Some(Method::Get)) => item(),
            (None, _) => return None,
        };
        match schema {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The upstream request and every query name a call may add to it: arguments sent in the
    /// query (by their upstream names) and the paging of a list.
    pub fn upstream(&self) -> (&RequestTemplate, Vec<&str>) {
        let mut names: Vec<&str> = self
            .args
            .iter()
            .filter(|a| {
                !a.local
                    && a.location == ArgLocation::Query
                    && !self.endpoint.request.placeholders().any(|p| p == a.name)
            })
            .map(|a| a.field.as_str())
            .collect();
        if let Some(list) = self
            .list
            .as_ref()
            .filter(|l| l.window == WindowKind::Upstream)
        {
            names.push(PAGE);
            if !list.page_only {
                names.push(LIMIT);
            }
        }
        (&self.endpoint.request, names)
    }

    /// The arguments at a glance: the required ones, then the optional ones in brackets
    /// (`owner, repo, index, [state], [page], [limit]`).
    pub fn signature(&self) -> String {
        let required = self
            .args
            .iter()
            .filter(|a| a.required)
            .map(|a| a.name.clone());
        let optional = self
            .args
            .iter()
            .filter(|a| !a.required)
            .map(|a| a.name.as_str())
            .chain(self.list.iter().flat_map(|_| [PAGE, LIMIT]))
            .map(|name| format!("[{name}]"));
        required.chain(optional).collect::<Vec<_>>().join(", ")
    }

    /// The text a client shows the model for `value`, this tool's bounded answer to
    /// `request`, when it differs from the value's JSON: what forge users wrote, in an
    /// envelope. A text tool's text is enveloped inside its JSON; an unshaped answer whole.
    pub fn shown(&self, value: &Value, request: &str) -> Option<String> {
        let json =
            |value: &Value| serde_json::to_string(value).expect("a JSON value always serializes");
        if self.unshaped() {
            return Some(enveloped(&json(value), &self.name, None, request));
        }
        let text = value
            .get("text")
            .and_then(Value::as_str)
            .filter(|_| self.untrusted_text())?;
        let mut shown = value.clone();
        shown["text"] = Value::String(enveloped(text, &self.name, None, request));
        Some(json(&shown))
    }

    /// The `_meta` of the tool's answers: which fields hold text written by forge users (see
    /// `engine::policy::marks`); `None` when none does. An unshaped answer's every string is.
    pub fn untrusted_meta(&self) -> Option<Value> {
        self.endpoint.marked.meta.clone()
    }

    /// The marked fields of the tool's answers, each with where its projection sits.
    pub(crate) fn marks(&self) -> &[(String, Mark)] {
        &self.endpoint.marked.fields
    }

    /// Marks the tool as one of a generated catalog's: its answers are unshaped, so every
    /// string in them is marked.
    pub(crate) fn mark_generated(&mut self) {
        self.generated = true;
        self.endpoint.marked = marks::Marked::every_field();
    }

    /// The mark of the tool's text, when it answers with one forge users wrote.
    pub fn text_mark(&self) -> Option<&marks::TextMark> {
        self.text.as_ref().and_then(|t| t.untrusted.as_ref())
    }

    /// Whether the tool answers with a text forge users wrote (a file, a log, a diff).
    pub fn untrusted_text(&self) -> bool {
        self.text.as_ref().is_some_and(|t| t.untrusted.is_some())
    }

    /// Whether the tool passes the forge's answer on unshaped, its fields described by no
    /// manifest: a generated tool, or the escape hatch (whose caller picks the method). Such an
    /// answer is held to the generic policy (`engine::policy::generic`), and such a tool may
    /// reach anything, so a repository allow-list holds it to the listed repositories' paths.
    pub fn unshaped(&self) -> bool {
        self.generated || self.endpoint.request.method.fixed().is_none()
    }

    /// `error` as this tool's caller should read it: a 404 from a tool whose endpoint only
    /// some forges have may mean the forge lacks it, not that the thing asked for is missing.
    pub fn explain(&self, error: ForgeError) -> ForgeError {
        match (error, &self.needs) {
            (
                ForgeError::Status {
                    status: 404,
                    request,
                    message,
                    retry_after,
                },
                Some(needs),
            ) => ForgeError::Status {
                status: 404,
                request,
                message: format!(
                    "{message} (only some forges have this endpoint: {needs}; any other answers 404 to it, whatever the arguments)"
                ),
                retry_after,
            },
            (error, _) => error,
        }
    }

    /// The path of the upstream request, its placeholders as the manifest names them.
    pub fn path_pattern(&self) -> String {
        self.endpoint.request.path_pattern()
    }

    /// The upstream request as `METHOD /path` (placeholders as the manifest names them).
    pub fn endpoint_line(&self) -> String {
        let line = self.endpoint.request.as_str();
        line.split('?').next().unwrap_or(line).to_owned()
    }

    /// The method of the upstream call (`None` when the caller chooses it).
    pub fn method(&self) -> Option<Method> {
        self.endpoint.request.method.fixed()
    }

    /// The forge scope the tool's request needs; `None` when it needs none or the caller picks
    /// the method (the escape hatch, checked when its request is sent).
    pub fn needs(&self) -> Option<crate::forge::scope::Need> {
        let line = self.endpoint.request.as_str();
        let path = line.split_whitespace().nth(1)?;
        crate::forge::scope::Need::of(self.method()?, path)
    }

    /// Whether the tool's argument `name` is an array (`None`: it has no such argument).
    pub fn takes_array(&self, name: &str) -> Option<bool> {
        let arg = self.args.iter().find(|a| a.name == name)?;
        Some(arg.check.schema().get("type") == Some(&json!("array")))
    }

    /// The tool's largest page size (1 for a tool that does not page).
    pub fn max_limit(&self) -> u64 {
        self.list.as_ref().map_or(1, |l| l.max_limit)
    }

    /// Checks `arguments` against the input schema; nothing is sent when this fails.
    pub fn prepare(&self, arguments: Map<String, Value>) -> Result<Call<'_>, Error> {
        let mut args = Args::new();
        let mut sudo = None;
        let mut page = None;
        let mut limit = None;
        // Each argument given, with the name it was given by.
        let mut aliased: Vec<(&str, String)> = Vec::new();
        for (name, value) in arguments {
            if name == SUDO {
                match value {
                    Value::String(s) if is_user_name(&s) => sudo = Some(s),
                    Value::Null => {}
                    other => {
                        return Err(Invalid::Sudo(other).into());
                    }
                }
                continue;
            }
            if let Some(list) = &self.list
                && (name == PAGE || name == LIMIT)
            {
                // A limit above the list's largest page is read as that page, as a resource
                // reads it; a `page_only` list's limit is the forge's page size or nothing.
                let min = match (name == PAGE, list.page_only) {
                    (false, true) => list.max_limit,
                    _ => 1,
                };
                // A page written as a string ("2") is that page.
                let value = match value {
                    Value::String(s) => s.parse::<u64>().map_or(Value::String(s), Value::from),
                    other => other,
                };
                let n = value.as_u64().filter(|n| *n >= min).ok_or_else(|| {
                    let range = match (name == PAGE, list.page_only) {
                        (false, true) => format!("{min} (the forge's fixed page size)"),
                        _ => "an integer from 1".to_owned(),
                    };
                    Invalid::Paging {
                        name: if name == PAGE { PAGE } else { LIMIT },
                        range,
                        value: value.clone(),
                    }
                })?;
                if name == PAGE {
                    page = Some(n)
                } else {
                    limit = Some(n)
                }
                continue;
            }
            let Some(arg) = self
                .args
                .iter()
                .find(|a| a.name == name || a.aliases.contains(&name))
            else {
                return Err(Invalid::UnknownArgument {
                    name,
                    tool: self.name.clone(),
                    takes: self.argument_names().join(", "),
                }
                .into());
            };
            // An object's keys are distinct, so a name given twice is a name and its alias.
            if let Some((_, first)) = aliased.iter().find(|(n, _)| *n == arg.name) {
                let alias = match name == arg.name {
                    true => first.clone(),
                    false => name,
                };
                let name = arg.name.clone();
                return Err(Invalid::ArgumentTwice { name, alias }.into());
            }
            aliased.push((arg.name.as_str(), name.clone()));
            if value.is_null() && !arg.required {
                continue;
            }
            let value = arg.check.read(value);
            arg.check.check(&value).map_err(|why| Invalid::Argument {
                name: arg.name.clone(),
                why,
            })?;
            args.insert(arg.name.clone(), value);
        }
        for arg in &self.args {
            if args.contains_key(&arg.name) {
                continue;
            }
            match &arg.default {
                Some(default) => {
                    args.insert(arg.name.clone(), default.clone());
                }
                None if arg.required => {
                    return Err(Invalid::MissingArgument(arg.name.clone()).into());
                }
                None => {}
            }
        }
        if let Some(text) = &self.text {
            text.check_range(&args)?;
        }
        let page = self
            .list
            .as_ref()
            .map(|l| PageRequest::new(page, Some(limit.unwrap_or(l.default_limit)), l.max_limit));
        Ok(Call {
            tool: self,
            args,
            page,
            sudo,
        })
    }

    /// How an answer names this tool when it says to call it again: its name, and the
    /// meta-tool to call it through when `tools/list` does not show it.
    pub fn mention(&self) -> String {
        match self.via {
            Some(via) => format!("{} (through {via})", self.name),
            None => self.name.clone(),
        }
    }

    fn argument_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.args.iter().map(|a| a.name.as_str()).collect();
        if self.list.is_some() {
            names.extend([PAGE, LIMIT]);
        }
        names.push(SUDO);
        names
    }
}

/// One multipart field; a file argument's base64 text becomes the file's bytes, named after
/// the argument (the forge keeps that name unless the call gives another).
fn form_part(arg: &Arg, value: &Value) -> Result<FormPart, Error> {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let value = match arg.location {
        ArgLocation::File => FormValue::File {
            bytes: BASE64.decode(text.trim()).map_err(|e| Invalid::NotBase64 {
                name: arg.name.clone(),
                why: e.to_string(),
            })?,
            filename: arg.name.clone(),
        },
        _ => FormValue::Text(text),
    };
    Ok(FormPart {
        name: arg.field.clone(),
        value,
    })
}

impl Call<'_> {
    /// The values of the confirmed argument that `answer` (the forge's, before projection)
    /// does not hold; `None` when the tool confirms nothing or the answer holds them all.
    pub fn unconfirmed(&self, answer: &Value) -> Option<Unconfirmed> {
        let confirm = self.tool.confirm.as_ref()?;
        let given: Vec<String> = match self.args.get(&confirm.arg)? {
            Value::Array(values) => values
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Value::String(value) => vec![value.clone()],
            _ => Vec::new(),
        };
        let held = strings_at(&confirm.found, answer);
        let missing: Vec<String> = given.into_iter().filter(|v| !held.contains(v)).collect();
        (!missing.is_empty()).then_some(Unconfirmed { missing, held })
    }

    /// The requests whose answers hold the values the confirmed argument may take, to name
    /// them when some were not found.
    pub fn known_requests(&self) -> Vec<Result<Request, Error>> {
        let Some(confirm) = &self.tool.confirm else {
            return Vec::new();
        };
        confirm
            .known
            .iter()
            .map(|(line, _)| {
                line.expand(&self.args)
                    .map_err(|e| Invalid::ArgumentRequest(e).into())
            })
            .collect()
    }

    /// The error for values the answer did not hold: each named with the nearest of the
    /// values there are (read from `known`, the answers of [`Call::known_requests`] in order,
    /// `None` where one could not be read), those values, and what the call did all the same.
    pub fn unconfirmed_error(&self, unconfirmed: Unconfirmed, known: &[Option<Value>]) -> Error {
        let confirm = self
            .tool
            .confirm
            .as_ref()
            .expect("only a confirming tool finds values unconfirmed");
        let mut there: Vec<String> = Vec::new();
        for (answer, (_, path)) in known.iter().zip(&confirm.known) {
            if let Some(answer) = answer {
                for value in strings_at(path, answer) {
                    if !there.contains(&value) {
                        there.push(value);
                    }
                }
            }
        }
        let known = there;
        let quoted = |values: &[String]| {
            values
                .iter()
                .map(|v| format!("`{}`", super::error::echo(v)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let missing = unconfirmed
            .missing
            .iter()
            .map(|m| {
                let near =
                    crate::manifest::diagnostic::did_you_mean(m, known.iter().map(String::as_str));
                format!("`{}`{near}", super::error::echo(m))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let there = match known.is_empty() {
            true => String::new(),
            false => format!(" The ones there are: {}.", quoted(&known)),
        };
        let held = match unconfirmed.held.is_empty() {
            true => "nothing".to_owned(),
            false => quoted(&unconfirmed.held),
        };
        Invalid::Unconfirmed {
            arg: confirm.arg.clone(),
            missing,
            what: confirm.what.clone(),
            there,
            held,
        }
        .into()
    }

    /// The upstream request of the call.
    pub fn request(&self) -> Result<Request, Error> {
        let mut request = self
            .tool
            .endpoint
            .request
            .expand(&self.args)
            .map_err(Invalid::ArgumentRequest)?;
        if let (Some(list), Some(page)) = (&self.tool.list, self.page)
            && list.window == WindowKind::Upstream
        {
            page.ask(&mut request, !list.page_only);
        }
        let mut body = Map::new();
        let mut payload = None;
        let mut form = Vec::new();
        for arg in self.tool.args.iter().filter(|a| !a.local) {
            if let Some(value) = self.args.get(&arg.name) {
                match arg.location {
                    ArgLocation::Body => {
                        body.insert(arg.field.clone(), value.clone());
                    }
                    ArgLocation::Payload => {
                        payload = Some(match value {
                            Value::String(text) => Payload::Text(text.clone()),
                            other => Payload::Json(other.clone()),
                        })
                    }
                    ArgLocation::Form | ArgLocation::File => form.push(form_part(arg, value)?),
                    // An object spreads into one pair per entry (a free-form query).
                    ArgLocation::Query
                        if !self
                            .tool
                            .endpoint
                            .request
                            .placeholders()
                            .any(|p| p == arg.name) =>
                    {
                        match value {
                            Value::Object(pairs) => request.query.extend(
                                pairs
                                    .iter()
                                    .map(|(k, v)| (k.clone(), super::request::scalar_text(v))),
                            ),
                            _ => {
                                let text = super::request::text_of(&self.args, &arg.name)
                                    .unwrap_or_default();
                                request.query.push((arg.field.clone(), text));
                            }
                        }
                    }
                    ArgLocation::Path | ArgLocation::Query => {}
                }
            }
        }
        if !body.is_empty() {
            request.body = Some(Payload::Json(Value::Object(body)));
        } else if !form.is_empty() {
            request.body = Some(Payload::Multipart(form));
        } else {
            request.body = payload;
        }
        // A bounded text answer without `from` is the body itself, read as text.
        request.accept = if self.tool.accept == Accept::Any {
            Accept::Any
        } else if self.tool.text.as_ref().is_some_and(|t| t.from.is_none()) {
            Accept::Text
        } else {
            self.tool.accept
        };
        request.sudo = self.sudo.clone();
        request.reads = self.tool.reads();
        request.free_path = self.tool.unshaped();
        Ok(request)
    }

    /// The structured result of the call from the forge's answer, in at most `budget` bytes of
    /// JSON text.
    /// The repository `value` is about, by the tool's `repository_of` paths.
    fn repository_of(&self, value: &Value) -> Option<String> {
        let text = |path: &JsonPath| path.query(value).first().and_then(Value::as_str);
        match self.tool.scope.repository_of.as_slice() {
            [full] => text(full).map(str::to_owned),
            [owner, name] => Some(format!("{}/{}", text(owner)?, text(name)?)),
            _ => None,
        }
    }

    /// Whether `value` may be shown under `allow`: it is about a listed repository, or the
    /// tool does not say what it is about. One that does not name its repository is not.
    fn admitted(&self, value: &Value, allow: Option<&AllowList>) -> bool {
        match allow {
            Some(allow) if !self.tool.scope.repository_of.is_empty() => self
                .repository_of(value)
                .is_some_and(|r| allow.allows_full_name(&r)),
            _ => true,
        }
    }

    /// The structured result of the call from the forge's answer, in at most `budget` bytes,
    /// with nothing withheld.
    pub fn finish(&self, response: Response, serving: &Serving) -> Result<Value, Error> {
        let projected = self.project(response, serving)?;
        self.bound(projected, serving.budget)
    }

    /// Step 1: the forge's answer checked and projected (and, for an unshaped answer, held to
    /// the generic policy), before lockdown and the bound.
    pub fn project(&self, response: Response, serving: &Serving) -> Result<CallProjected, Error> {
        let allow = serving.allow.as_ref();
        let bodiless = matches!(response.body, Body::Empty);
        let is_text = matches!(response.body, Body::Text(_));
        let mut body = response.body.into_json();
        self.tool.endpoint.redact(&mut body);
        let ctx = Context {
            primary: &body,
            with: &[],
            args: &self.args,
            meta: Meta {
                total_count: response.total_count,
                answered: None,
            },
            instance: &serving.instance,
        };
        let unconfirmed = self.unconfirmed(&body);
        let projected = |value: Value, shape: Projecting| CallProjected {
            value,
            shape,
            withheld_text: None,
            unconfirmed: unconfirmed.clone(),
        };
        if let (Some(list), Some(page)) = (&self.tool.list, self.page) {
            let items: Vec<&Value> = answer::list_items(
                &body,
                list.from.as_ref(),
                list.not_a_list.as_deref(),
                &self.request().map_or_else(
                    |_| self.tool.endpoint.request.as_str().to_owned(),
                    |r| r.describe(),
                ),
                response.status,
                "; another tool may fit this target",
            )?
            .iter()
            .collect();
            let mut window = match list.window {
                WindowKind::Upstream => {
                    bound::upstream_page(items, page, response.total_count, response.has_next)
                }
                WindowKind::Server => bound::server_page(items, page),
            };
            let before = window.items.len();
            window.items.retain(|i| self.admitted(i, allow));
            let left_out = before - window.items.len();
            if allow.is_some() && !self.tool.scope.repository_of.is_empty() {
                // The forge's count includes what the allow-list hides.
                window.total = None;
            }
            let items: Vec<Value> = window
                .items
                .iter()
                .map(|i| {
                    self.tool
                        .project
                        .apply(&Context::item(i, &self.args).at(&serving.instance))
                })
                .collect();
            let mut value = match list.beside.as_ref().map(|(b, _)| b.apply(&ctx)) {
                Some(Value::Object(beside)) => Value::Object(beside),
                _ => json!({}),
            };
            value["items"] = Value::Array(items);
            policy::clean(&mut value, Rendering::Plain, &serving.instance);
            let rest = bound::Window {
                items: Vec::new(),
                total: window.total,
                has_more: window.has_more,
            };
            return Ok(projected(
                value,
                Projecting::List {
                    window: rest,
                    page,
                    left_out,
                },
            ));
        }
        if let Some(text) = &self.tool.text
            && (self.tool.accept != Accept::Any || is_text)
        {
            // With a projection, its fields describe what the text is (a file's path, size…).
            let mut described = match self.tool.project.is_identity() {
                true => Value::Object(Map::new()),
                false => match self.tool.project.apply(&ctx) {
                    Value::Object(map) => Value::Object(map),
                    _ => Value::Object(Map::new()),
                },
            };
            policy::clean(&mut described, Rendering::Plain, &serving.instance);
            return Ok(projected(
                described,
                Projecting::Text {
                    whole: text.text_of(&ctx),
                },
            ));
        }
        // A read with fields to project needs an object; a write may well answer with nothing.
        if self.tool.method() == Some(Method::Get) && !self.tool.project.is_identity() {
            answer::expect(
                Expected::Object,
                Some(&body),
                self.tool.endpoint.request.as_str(),
                response.status,
                "",
            )?;
        }
        if bodiless {
            return Ok(projected(
                json!({"ok": true, "status": response.status}),
                Projecting::Entity { left_out: 0 },
            ));
        }
        if !self.admitted(&body, allow) {
            return Err(self.withheld_by_allow_list(self.repository_of(&body)));
        }
        let mut value = match self.tool.project.apply(&ctx) {
            Value::Object(map) => Value::Object(map),
            // Moved in, not through `json!`, which would serialise the answer into a copy.
            other => Value::Object(Map::from_iter([("result".to_owned(), other)])),
        };
        let mut left_out = 0;
        if self.tool.unshaped() {
            policy::generic::strip_secrets(&mut value);
            if let Some(allow) = allow {
                let about = value.as_object().and_then(policy::generic::repository_of);
                if let Some(repo) = about.filter(|r| !allow.allows_full_name(r)) {
                    return Err(self.withheld_by_allow_list(Some(repo.to_owned())));
                }
                left_out = policy::generic::leave_out(&mut value, allow);
            }
            policy::clean(&mut value, Rendering::Markdown, &serving.instance);
        } else {
            policy::clean(&mut value, Rendering::Plain, &serving.instance);
        }
        Ok(projected(value, Projecting::Entity { left_out }))
    }

    fn withheld_by_allow_list(&self, repository: Option<String>) -> Error {
        Error::Forge(ForgeError::NotAllowed {
            request: self.tool.endpoint.request.as_str().to_owned(),
            why: format!(
                "the answer is about {}, which is not in the repository allow-list; it was withheld",
                repository.unwrap_or_else(|| "a repository it does not name".into())
            ),
        })
    }

    /// Step 2: the projected answer (after lockdown) fitted to `budget` bytes, saying how to
    /// go on.
    pub fn bound(&self, projected: CallProjected, budget: usize) -> Result<Value, Error> {
        let CallProjected {
            value,
            shape,
            withheld_text,
            ..
        } = projected;
        match shape {
            Projecting::List {
                window,
                page,
                left_out,
            } => {
                // What is not the items is the fields shown beside them.
                let (items, beside) = match value {
                    Value::Object(mut map) => match map.remove("items") {
                        Some(Value::Array(items)) => (items, map),
                        _ => (Vec::new(), map),
                    },
                    _ => (Vec::new(), Map::new()),
                };
                let go_on = GoOn::Call {
                    mention: self.tool.mention(),
                };
                let mut out = list_page(window, items, page, budget, go_on, beside);
                if left_out > 0 {
                    out.insert(
                        "left_out".into(),
                        format!(
                            "{left_out} items of this page are outside the repository allow-list"
                        )
                        .into(),
                    );
                }
                // The envelope fits in its room; only an item too large alone needs cutting.
                Ok(within(Value::Object(out), budget))
            }
            Projecting::Text { whole } => {
                let text = self
                    .tool
                    .text
                    .as_ref()
                    .expect("a text answer comes from a tool with a text block");
                let described = match value {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                // Withheld: the notice stands for the text, a diff's file names included.
                if let Some(notice) = withheld_text {
                    let mut out = described;
                    out.insert("text".into(), Value::String(notice));
                    return Ok(within(Value::Object(out), budget));
                }
                let carried = |cut: &Cut, fields: &Map<String, Value>| {
                    let mut out = described.clone();
                    out.extend(fields.clone());
                    if let Cut::Lines(w) = cut {
                        out.insert("text".into(), Value::String(w.text.clone()));
                    }
                    Value::Object(out)
                };
                let (cut, fields) = text.fit(
                    whole.as_deref(),
                    &self.args,
                    room(budget, bound::json_size(&Value::Object(described.clone()))),
                    |line, byte| {
                        let arg = text.start_line.as_deref().unwrap_or("start_line");
                        let at = match (byte, text.start_byte.as_deref()) {
                            (Some(b), Some(name)) => format!(" and {name}={b}"),
                            _ => String::new(),
                        };
                        format!("Call {} again with {arg}={line}{at}", self.tool.mention())
                    },
                    // Escapes make the JSON text longer than the text.
                    |cut, fields| bound::json_size(&carried(cut, fields)).saturating_sub(budget),
                )?;
                Ok(within(carried(&cut, &fields), budget))
            }
            Projecting::Entity { left_out } => {
                let mut value = value;
                if left_out > 0
                    && let Value::Object(map) = &mut value
                {
                    map.insert(
                        "left_out".into(),
                        format!("{left_out} items are outside the repository allow-list").into(),
                    );
                }
                Ok(within(value, budget))
            }
        }
    }

    /// The call's arguments, as checked.
    pub fn args(&self) -> &Args {
        &self.args
    }
}

/// A call's answer projected, before lockdown and the bound.
#[derive(Debug)]
pub struct CallProjected {
    /// The answer's value: a list's `{"items": [...]}`, a text's describing fields, an entity.
    pub value: Value,
    shape: Projecting,
    /// The notice shown instead of a text, when lockdown withheld it.
    pub withheld_text: Option<String>,
    /// Values of the confirmed argument the answer did not hold: the call's result is then an
    /// error ([`Call::unconfirmed_error`]).
    pub unconfirmed: Option<Unconfirmed>,
}

impl CallProjected {
    /// Whether the answer is a text (its marks name `text`).
    pub fn is_text(&self) -> bool {
        matches!(self.shape, Projecting::Text { .. })
    }
}

#[derive(Debug)]
enum Projecting {
    List {
        window: bound::Window<()>,
        page: PageRequest,
        left_out: usize,
    },
    Text {
        whole: Option<String>,
    },
    Entity {
        left_out: usize,
    },
}
