//! The raw manifests: serde types that mirror `resources.yaml` and `tools.yaml` one to one.
//!
//! Nothing here has behaviour. Values a later check may reject are wrapped in [`Spanned`] so a
//! diagnostic can point at their line and column; unknown keys are refused by every struct.
//! `engine::compile` turns these into the compiled catalog; see `docs/manifest-reference.md` for
//! what each key means.

use std::fmt;

use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_saphyr::Spanned;

/// `resources.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceManifest {
    /// Named validation rules for parameters, shared with the tool manifest.
    #[serde(default)]
    pub rules: IndexMap<String, Spanned<RuleDef>>,
    /// How upstream failures become wire errors.
    pub errors: Spanned<ErrorsDef>,
    #[serde(default)]
    pub defaults: DefaultsDef,
    #[serde(default)]
    pub resources: Vec<ResourceDef>,
}

/// `tools.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolManifest {
    /// More named rules; a name may be defined in only one of the two manifests.
    #[serde(default)]
    pub rules: IndexMap<String, Spanned<RuleDef>>,
    /// Toolset name → one-line description.
    #[serde(default)]
    pub toolsets: IndexMap<String, String>,
    #[serde(default)]
    pub tools: Vec<ToolDef>,
}

/// A named parameter rule: a small, JSON-Schema-like description of one value.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    pub description: Option<String>,
    /// `string` (the default) or `integer`.
    #[serde(rename = "type")]
    pub kind: Option<Spanned<String>>,
    pub pattern: Option<Spanned<String>>,
    pub max_length: Option<usize>,
    pub minimum: Option<i64>,
    pub maximum: Option<i64>,
    #[serde(rename = "enum")]
    pub values: Option<Vec<String>>,
}

/// The error table: upstream status → reason, reason → JSON-RPC code.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorsDef {
    /// Keys are a status (`"404"`) or a class (`"4xx"`, `"5xx"`); values are reasons.
    pub status: IndexMap<String, Spanned<String>>,
    /// Reason → JSON-RPC error code.
    pub codes: IndexMap<String, Spanned<i64>>,
    /// Reason → what the caller can do about it, appended to every such error's message.
    #[serde(default)]
    pub hints: IndexMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultsDef {
    /// Default cap of embedded lists and list pages.
    pub cap: Option<Spanned<u64>>,
    /// `ttlMs` announced for immutable resources.
    pub immutable_ttl_ms: Option<u64>,
    /// Default size cap of a markdown block, in characters.
    pub markdown_max_chars: Option<usize>,
}

/// One resource (a URI template or, without variables, a concrete resource).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceDef {
    pub name: Spanned<String>,
    pub title: String,
    pub uri: Spanned<String>,
    pub description: String,
    /// Template variable → rule name.
    #[serde(default)]
    pub params: IndexMap<String, Spanned<String>>,
    /// Template variable → value used when the URI leaves it out.
    #[serde(default)]
    pub defaults: IndexMap<String, Spanned<Value>>,
    /// The primary upstream request: `GET /path/{var}?name=value`.
    pub fetch: Spanned<String>,
    /// More upstream requests made concurrently with the primary one; name → request.
    #[serde(default)]
    pub with: IndexMap<String, Spanned<String>>,
    /// Fields of the JSON block (for a list: of each item).
    pub project: Option<Projection>,
    /// Makes the resource a page of a list.
    pub list: Option<Spanned<ListDef>>,
    /// Bounded lists embedded in the entity, by field name.
    #[serde(default)]
    pub embed: IndexMap<String, Spanned<EmbedDef>>,
    pub markdown: Option<Spanned<MarkdownDef>>,
    pub cache: Spanned<CacheClass>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheClass {
    Immutable,
    Mutable,
}

/// Where a list's paging happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Window {
    /// The forge pages: `page` and `limit` are sent upstream.
    #[default]
    Upstream,
    /// The forge returns the whole list and ignores paging: forgelens cuts the window.
    Server,
}

/// Which end of an embedded list is kept when it is capped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    #[default]
    Oldest,
    Newest,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListDef {
    /// Most items one read returns; `limit` is clamped to it.
    pub cap: Option<Spanned<u64>>,
    /// The tool a truncation sentinel names.
    pub tool: Spanned<String>,
    #[serde(default)]
    pub window: Window,
    /// JSONPath of the array in the answer (default: the answer itself).
    pub from: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedDef {
    /// Its own upstream request (made concurrently with the primary one).
    pub fetch: Option<Spanned<String>>,
    /// JSONPath of the array inside the source body (default: the body itself).
    pub from: Option<Spanned<String>>,
    pub cap: Option<Spanned<u64>>,
    #[serde(default)]
    pub keep: Keep,
    #[serde(default)]
    pub window: Window,
    pub tool: Spanned<String>,
    /// Fields of each item.
    pub project: Option<Projection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkdownDef {
    /// A minijinja template rendered from the JSON block's value.
    pub template: Spanned<String>,
    /// Fields the template may use that the JSON block does not carry.
    pub project: Option<Projection>,
    pub max_chars: Option<usize>,
}

/// One tool.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    pub name: Spanned<String>,
    pub title: String,
    pub description: String,
    pub toolset: Spanned<String>,
    /// The upstream request: `METHOD /path/{arg}?name={arg}`.
    pub call: Spanned<String>,
    #[serde(default)]
    pub args: IndexMap<String, Spanned<ArgDef>>,
    /// Makes the tool return one page of a list.
    pub list: Option<Spanned<ToolListDef>>,
    /// Fields of the result (for a list: of each item).
    pub project: Option<Projection>,
    /// Overrides of the annotations derived from the method.
    pub annotations: Option<AnnotationsDef>,
    /// How the answer is read (default: JSON).
    pub accept: Option<AcceptDef>,
}

/// How a tool reads the forge's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcceptDef {
    Json,
    /// The answer is text (a diff, a raw file, rendered HTML): the result is that string.
    Text,
    /// The answer is any bytes (an archive): the result is them, base64-encoded.
    Binary,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolListDef {
    pub default_limit: Option<Spanned<u64>>,
    pub max_limit: Option<Spanned<u64>>,
    #[serde(default)]
    pub window: Window,
    /// JSONPath of the array in the answer (default: the answer itself).
    pub from: Option<Spanned<String>>,
}

/// One tool argument: a rule reference or an inline JSON-Schema-like type.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgDef {
    pub description: String,
    pub rule: Option<Spanned<String>>,
    #[serde(rename = "type")]
    pub kind: Option<Spanned<String>>,
    #[serde(rename = "enum")]
    pub values: Option<Vec<Value>>,
    pub default: Option<Value>,
    pub required: Option<bool>,
    /// JSON Schema of the elements of an `array` argument.
    pub items: Option<Value>,
    pub minimum: Option<i64>,
    pub maximum: Option<i64>,
    pub pattern: Option<Spanned<String>>,
    pub max_length: Option<usize>,
    /// A whole JSON Schema (nested objects, arrays of objects), instead of `type` and the
    /// keywords beside it.
    pub schema: Option<Spanned<Value>>,
    /// Where the value goes upstream; derived from `call` when left out (body for the rest).
    #[serde(rename = "in")]
    pub location: Option<ArgLocation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgLocation {
    Path,
    Query,
    /// One field of the JSON body.
    Body,
    /// The whole request body: JSON, or `text/plain` when the value is a string.
    Payload,
    /// One text field of a `multipart/form-data` body.
    Form,
    /// One file of a `multipart/form-data` body; the value is its content, base64-encoded.
    File,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnnotationsDef {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// An ordered map of output field → value expression.
pub type Projection = IndexMap<String, Spanned<ProjectValue>>;

/// A projection value: an expression string, a scalar literal, or a nested object.
#[derive(Debug)]
pub enum ProjectValue {
    Expr(String),
    Literal(Value),
    Object(Projection),
}

impl<'de> Deserialize<'de> for ProjectValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Hand-written rather than `untagged` so nested values keep their source positions.
        struct ProjectVisitor;

        impl<'de> Visitor<'de> for ProjectVisitor {
            type Value = ProjectValue;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an expression string, a scalar, or a map of fields")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Expr(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Expr(v))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::Bool(v)))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::from(v)))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::from(v)))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::from(v)))
            }

            fn visit_unit<E: de::Error>(self) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::Null))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProjectValue, A::Error> {
                let mut fields = Projection::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value::<Spanned<ProjectValue>>()?;
                    if fields.insert(key.clone(), value).is_some() {
                        return Err(de::Error::custom(format!("duplicate field `{key}`")));
                    }
                }
                Ok(ProjectValue::Object(fields))
            }
        }

        deserializer.deserialize_any(ProjectVisitor)
    }
}
