//! Tool arguments: the JSON Schema each one is announced with, and the check that holds a call
//! to it before anything is sent upstream.
//!
//! The checker covers the keywords the manifests use — `type`, `enum`, `pattern`, `minimum`,
//! `maximum`, `maxLength`, `items`, `properties`, `required`, `additionalProperties` (`false`
//! or a schema for the values of a map) — so what `tools/list` announces is exactly what a call
//! is held to. Annotations (`format`, `description`, `contentEncoding`) are announced, not
//! checked.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use regex::Regex;
use serde_json::{Map, Value};
use thiserror::Error;

use super::param::Rule;

/// How a value breaks its schema; the text reads after the argument's name (`argument `state`
/// must be one of …`).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Violation {
    /// A rule's own words for what it takes.
    #[error("must be {0}")]
    Rule(String),
    #[error("must be of type {expected}, not {found}")]
    Type {
        expected: String,
        found: &'static str,
    },
    #[error("must be one of {}", list(.0))]
    NotOneOf(Vec<Value>),
    #[error("must match `{0}`")]
    Pattern(String),
    #[error("must be at most {0} characters")]
    TooLong(usize),
    #[error("must be at least {0}")]
    Below(f64),
    #[error("must be at most {0}")]
    Above(f64),
    #[error("item {0} {1}")]
    Item(usize, Box<Violation>),
    #[error("needs property `{0}`")]
    MissingProperty(String),
    #[error("has unknown property `{0}`")]
    UnknownProperty(String),
    #[error("property `{0}` {1}")]
    Property(String, Box<Violation>),
}

/// Why an inline schema (or a rule as one) does not compile: a manifest mistake.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SchemaError {
    #[error("`type` {0} is not one of {types}", types = TYPES.join(", "))]
    Type(Value),
    #[error("`enum` must be a non-empty list")]
    Enum,
    #[error("`pattern` must be a string")]
    PatternType,
    #[error(
        "`pattern` `{0}` is not anchored: a JSON Schema pattern matches anywhere in the value, so write `^(?:{0})$`"
    )]
    Unanchored(String),
    #[error("`pattern` does not compile: {0}")]
    PatternSyntax(String),
    #[error("`{0}` must be a number")]
    Number(&'static str),
    #[error("`items` must be a schema object")]
    Items,
    #[error("`properties` must be a map")]
    Properties,
    #[error("property `{0}` must be a schema object")]
    PropertyType(String),
    #[error("property `{0}`: {1}")]
    Property(String, Box<SchemaError>),
    #[error("`required` must be a list of names")]
    Required,
    #[error("additionalProperties: {0}")]
    Additional(Box<SchemaError>),
}

fn list(values: &[Value]) -> String {
    let shown: Vec<String> = values.iter().map(Value::to_string).collect();
    shown.join(", ")
}

/// How one argument is checked.
#[derive(Debug, Clone)]
pub enum Check {
    /// A named rule (owner names, positive integers, …).
    Rule(std::sync::Arc<Rule>),
    /// An inline schema.
    Schema(Box<Schema>),
}

impl Check {
    pub fn check(&self, value: &Value) -> Result<(), Violation> {
        match self {
            // The rule's own words say what the value is, with its limits; a pattern in symbols
            // would only be noise to whoever reads the error (describe_tools gives it).
            Check::Rule(rule) => rule.check_json(value).map_err(|_| {
                Violation::Rule(match &rule.description {
                    Some(what) => {
                        let what = lowercase_first(what.trim_end_matches('.'));
                        match rule.limits() {
                            Some(limits) => format!("{what} ({limits})"),
                            None => what,
                        }
                    }
                    None => rule.expected(),
                })
            }),
            Check::Schema(schema) => schema.check(value),
        }
    }

    /// `value` as the argument reads it: a number or a boolean written as a string (`"3"`,
    /// `"true"`) where the argument takes a number or a boolean, at any depth of an array. Any
    /// other value is left for the check to judge.
    pub fn read(&self, value: Value) -> Value {
        match self {
            Check::Rule(rule) => rule.read(value),
            Check::Schema(schema) => schema.read(value),
        }
    }

    /// The JSON Schema of the argument (without its description).
    pub fn schema(&self) -> Map<String, Value> {
        match self {
            Check::Rule(rule) => rule.schema(),
            Check::Schema(schema) => schema.source.clone(),
        }
    }

    /// The schema as `tools/list` advertises it: what a model needs to write a good value
    /// (types, enums, defaults, numeric ranges, the shape of objects and arrays), without what
    /// only the checker needs (see [`lean`]).
    pub fn lean_schema(&self) -> Map<String, Value> {
        lean(self.schema())
    }

    /// The rule's own description, for an argument the manifest leaves undescribed.
    pub fn rule_description(&self) -> Option<&str> {
        match self {
            Check::Rule(rule) => rule.description.as_deref(),
            Check::Schema(_) => None,
        }
    }
}

/// Keywords a lean schema leaves out: the checker still enforces them before any request, and
/// its refusal says what is wrong, so a model reading the list does not need them.
const CHECKER_ONLY: [&str; 5] = [
    "pattern",
    "maxLength",
    "minLength",
    "format",
    "additionalProperties",
];

/// `schema` without the [`CHECKER_ONLY`] keywords, at every depth. A map's value schema
/// (`additionalProperties` as an object) says what the map holds, so it stays. A lone
/// `minimum: 1` (an id, an index, a count) goes too: no model writes 0 for an issue number.
pub fn lean(schema: Map<String, Value>) -> Map<String, Value> {
    let positive =
        schema.get("minimum") == Some(&Value::from(1)) && !schema.contains_key("maximum");
    schema
        .into_iter()
        .filter(|(key, _)| !(positive && key == "minimum"))
        .filter_map(|(key, value)| match (key.as_str(), value) {
            ("additionalProperties", Value::Object(inner)) => {
                Some((key, Value::Object(lean(inner))))
            }
            (k, _) if CHECKER_ONLY.contains(&k) => None,
            ("items", Value::Object(inner)) => Some((key, Value::Object(lean(inner)))),
            ("properties", Value::Object(props)) => {
                let props = props
                    .into_iter()
                    .map(|(name, p)| match p {
                        Value::Object(inner) => (name, Value::Object(lean(inner))),
                        other => (name, other),
                    })
                    .collect();
                Some((key, Value::Object(props)))
            }
            (_, value) => Some((key, value)),
        })
        .collect()
}

/// A compiled inline JSON Schema (the default one takes anything).
#[derive(Debug, Clone, Default)]
pub struct Schema {
    source: Map<String, Value>,
    kind: Option<String>,
    values: Option<Vec<Value>>,
    pattern: Option<Pattern>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    max_length: Option<usize>,
    items: Option<Box<Schema>>,
    properties: Vec<(String, Schema)>,
    required: Vec<String>,
    closed: bool,
    /// The schema of properties `properties` does not name (the values of a map).
    additional: Option<Box<Schema>>,
}

const TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "array", "object"];

impl Schema {
    /// Compiles a schema; `Err` says which keyword is wrong.
    pub fn compile(source: &Map<String, Value>) -> Result<Schema, SchemaError> {
        let kind = match source.get("type") {
            None => None,
            Some(Value::String(t)) if TYPES.contains(&t.as_str()) => Some(t.clone()),
            Some(other) => {
                return Err(SchemaError::Type(other.clone()));
            }
        };
        let values = match source.get("enum") {
            None => None,
            Some(Value::Array(v)) if !v.is_empty() => Some(v.clone()),
            Some(_) => return Err(SchemaError::Enum),
        };
        let pattern = match source.get("pattern") {
            None => None,
            Some(Value::String(p)) => Some(pattern(p)?),
            Some(_) => return Err(SchemaError::PatternType),
        };
        let number = |key: &'static str| -> Result<Option<f64>, SchemaError> {
            match source.get(key) {
                None => Ok(None),
                Some(v) => v.as_f64().map(Some).ok_or(SchemaError::Number(key)),
            }
        };
        let items = match source.get("items") {
            None => None,
            Some(Value::Object(inner)) => Some(Box::new(Schema::compile(inner)?)),
            Some(_) => return Err(SchemaError::Items),
        };
        let mut properties = Vec::new();
        if let Some(props) = source.get("properties") {
            let Value::Object(props) = props else {
                return Err(SchemaError::Properties);
            };
            for (name, schema) in props {
                let Value::Object(schema) = schema else {
                    return Err(SchemaError::PropertyType(name.clone()));
                };
                properties.push((
                    name.clone(),
                    Schema::compile(schema)
                        .map_err(|e| SchemaError::Property(name.clone(), Box::new(e)))?,
                ));
            }
        }
        let required = match source.get("required") {
            None => Vec::new(),
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Some(_) => return Err(SchemaError::Required),
        };
        Ok(Schema {
            source: source.clone(),
            kind,
            values,
            pattern,
            minimum: number("minimum")?,
            maximum: number("maximum")?,
            max_length: source
                .get("maxLength")
                .and_then(Value::as_u64)
                .map(|n| n as usize),
            items,
            properties,
            required,
            closed: source.get("additionalProperties") == Some(&Value::Bool(false)),
            additional: match source.get("additionalProperties") {
                Some(Value::Object(inner)) => Some(Box::new(
                    Schema::compile(inner).map_err(|e| SchemaError::Additional(Box::new(e)))?,
                )),
                _ => None,
            },
        })
    }

    /// `value` with a number or a boolean written as a string read as what this schema takes
    /// (see [`Check::read`]); only a string that is exactly such a value, so nothing else is
    /// guessed.
    pub fn read(&self, value: Value) -> Value {
        match (self.kind.as_deref(), value) {
            (Some("integer"), Value::String(s)) => match s.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(s),
            },
            (Some("number"), Value::String(s)) => match s.parse::<serde_json::Number>() {
                Ok(n) => Value::Number(n),
                Err(_) => Value::String(s),
            },
            (Some("boolean"), Value::String(s)) => match s.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => Value::String(s),
            },
            (Some("array"), Value::Array(items)) => match &self.items {
                Some(schema) => Value::Array(items.into_iter().map(|v| schema.read(v)).collect()),
                None => Value::Array(items),
            },
            (_, value) => value,
        }
    }

    /// Checks `value`; the error reads after the argument's name ("must be …").
    pub fn check(&self, value: &Value) -> Result<(), Violation> {
        if let Some(kind) = &self.kind {
            let ok = match kind.as_str() {
                "string" => value.is_string(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "boolean" => value.is_boolean(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => false,
            };
            if !ok {
                return Err(Violation::Type {
                    expected: kind.clone(),
                    found: type_name(value),
                });
            }
        }
        if let Some(values) = &self.values
            && !values.contains(value)
        {
            return Err(Violation::NotOneOf(values.clone()));
        }
        if let Value::String(s) = value {
            if let Some(p) = &self.pattern
                && !p.is_match(s)
            {
                return Err(Violation::Pattern(p.as_str().to_owned()));
            }
            if let Some(max) = self.max_length
                && s.chars().count() > max
            {
                return Err(Violation::TooLong(max));
            }
        }
        if let Some(n) = value.as_f64() {
            if let Some(min) = self.minimum
                && n < min
            {
                return Err(Violation::Below(min));
            }
            if let Some(max) = self.maximum
                && n > max
            {
                return Err(Violation::Above(max));
            }
        }
        if let (Some(items), Value::Array(values)) = (&self.items, value) {
            for (i, v) in values.iter().enumerate() {
                items
                    .check(v)
                    .map_err(|e| Violation::Item(i, Box::new(e)))?;
            }
        }
        if let Value::Object(map) = value {
            for name in &self.required {
                if !map.contains_key(name) {
                    return Err(Violation::MissingProperty(name.clone()));
                }
            }
            for (name, v) in map {
                match self.properties.iter().find(|(n, _)| n == name) {
                    Some((_, schema)) => schema
                        .check(v)
                        .map_err(|e| Violation::Property(name.clone(), Box::new(e)))?,
                    None if self.closed => {
                        return Err(Violation::UnknownProperty(name.clone()));
                    }
                    None => {
                        if let Some(schema) = &self.additional {
                            schema
                                .check(v)
                                .map_err(|e| Violation::Property(name.clone(), Box::new(e)))?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// A `pattern`, checked when its schema compiles and turned into a matcher on its first use:
/// building the matcher is most of what a pattern costs, and most patterns of a catalog are
/// never matched in a session (see docs/performance.md, "Start-up"). Clones share the matcher.
#[derive(Debug, Clone)]
pub struct Pattern(Arc<(Box<str>, OnceLock<Option<Regex>>)>);

impl Pattern {
    pub fn as_str(&self) -> &str {
        &self.0.0
    }

    /// Whether `text` matches. A pattern whose syntax was accepted but whose matcher cannot
    /// be built (past the regex engine's size limit) matches nothing: a value is refused rather
    /// than let through unchecked.
    pub fn is_match(&self, text: &str) -> bool {
        let (source, matcher) = &*self.0;
        let matcher = matcher.get_or_init(|| {
            Regex::new(source)
                .inspect_err(
                    |e| tracing::error!(pattern = %source, "a pattern cannot be used: {e}"),
                )
                .ok()
        });
        matcher.as_ref().is_some_and(|m| m.is_match(text))
    }
}

/// Compiles a `pattern`. A generated catalog repeats a few patterns hundreds of times (owner
/// and repository names), so each source is checked once and its matcher shared.
///
/// A JSON Schema pattern matches anywhere in the value, so one that is not anchored at both
/// ends would let anything around the part it describes through (a rule's pattern is anchored
/// by the compiler; an inline one must say so itself).
pub(crate) fn pattern(source: &str) -> Result<Pattern, SchemaError> {
    // `\$` is a dollar sign, not the end: an odd run of backslashes before it escapes it.
    let backslashes = source
        .strip_suffix('$')
        .map(|rest| rest.chars().rev().take_while(|c| *c == '\\').count());
    if !source.starts_with('^') || backslashes.is_none_or(|n| n % 2 == 1) {
        return Err(SchemaError::Unanchored(source.to_owned()));
    }
    static COMPILED: LazyLock<Mutex<HashMap<String, Pattern>>> = LazyLock::new(Default::default);
    let mut compiled = COMPILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(pattern) = compiled.get(source) {
        return Ok(pattern.clone());
    }
    // The syntax the regex engine reads, with its defaults: a mistake is reported now.
    regex_syntax::Parser::new()
        .parse(source)
        .map_err(|e| SchemaError::PatternSyntax(e.to_string()))?;
    let pattern = Pattern(Arc::new((source.into(), OnceLock::new())));
    compiled.insert(source.to_owned(), pattern.clone());
    Ok(pattern)
}

/// `text` with its first letter in lower case ("A user name" → "a user name").
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The JSON type of a value, as JSON Schema names it.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema(v: Value) -> Schema {
        Schema::compile(v.as_object().unwrap()).unwrap()
    }

    /// A rule speaks in its own words: its description when it has one, else what it takes.
    #[test]
    fn a_rule_without_a_description_says_what_it_takes_once() {
        let kind = crate::engine::param::RuleKind::Integer {
            minimum: Some(1),
            maximum: None,
        };
        let rule = Rule::new("n", None, kind).unwrap();
        let check = Check::Rule(std::sync::Arc::new(rule));
        assert_eq!(
            check.check(&json!(0)).unwrap_err().to_string(),
            "must be an integer of at least 1"
        );
    }

    #[test]
    fn checks_each_keyword() {
        let cases: &[(Value, Value, Result<(), &str>)] = &[
            (json!({"type": "string"}), json!("x"), Ok(())),
            (
                json!({"type": "string"}),
                json!(1),
                Err("must be of type string, not integer"),
            ),
            (
                json!({"type": "integer", "minimum": 1}),
                json!(0),
                Err("must be at least 1"),
            ),
            (
                json!({"type": "integer"}),
                json!(1.5),
                Err("must be of type integer, not number"),
            ),
            (
                json!({"enum": ["open", "closed"]}),
                json!("all"),
                Err("must be one of \"open\", \"closed\""),
            ),
            (
                json!({"type": "string", "pattern": "^[a-z]+$"}),
                json!("A"),
                Err("must match `^[a-z]+$`"),
            ),
            (
                json!({"type": "string", "maxLength": 2}),
                json!("abc"),
                Err("must be at most 2 characters"),
            ),
            (
                json!({"type": "array", "items": {"type": "integer"}}),
                json!([1, "x"]),
                Err("item 1 must be of type integer, not string"),
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
                json!({"b": 1}),
                Err("has unknown property `b`"),
            ),
            (
                json!({"type": "object", "required": ["a"]}),
                json!({}),
                Err("needs property `a`"),
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                json!({"k": 1}),
                Err("property `k` must be of type string, not integer"),
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}, "additionalProperties": false}}}),
                json!({"a": {"c": 1}}),
                Err("property `a` has unknown property `c`"),
            ),
        ];
        for (s, v, expected) in cases {
            let got = schema(s.clone()).check(v).map_err(|e| e.to_string());
            assert_eq!(
                got.as_ref().map_err(String::as_str).copied(),
                *expected,
                "{s} {v}"
            );
        }
    }

    #[test]
    fn a_pattern_is_checked_at_once_and_matched_later() {
        let bad = json!({"type": "string", "pattern": "^([a-z]$"});
        assert!(matches!(
            Schema::compile(bad.as_object().unwrap()),
            Err(SchemaError::PatternSyntax(_))
        ));
        let first = pattern("^[a-z]{2}$").unwrap();
        let again = pattern("^[a-z]{2}$").unwrap();
        assert!(Arc::ptr_eq(&first.0, &again.0), "one source, one matcher");
        assert!(first.0.1.get().is_none(), "nothing is built before a match");
        assert!(again.is_match("ab") && !again.is_match("abc"));
        assert!(
            first.0.1.get().is_some(),
            "a clone's match builds the shared matcher"
        );
    }

    #[test]
    fn lean_schemas_keep_what_a_model_writes_values_from() {
        let full = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 9, "description": "d"},
                "ids": {"type": "array", "items": {"type": "integer", "format": "int64", "minimum": 1}},
                "count": {"type": "integer", "minimum": 1, "maximum": 9},
                "meta": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}},
            },
            "required": ["name"],
            "additionalProperties": false,
        });
        let lean = lean(full.as_object().unwrap().clone());
        assert_eq!(
            Value::Object(lean),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "d"},
                    "ids": {"type": "array", "items": {"type": "integer"}},
                    "count": {"type": "integer", "minimum": 1, "maximum": 9},
                    "meta": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "required": ["name"],
            })
        );
    }

    #[test]
    fn refuses_bad_schemas() {
        for bad in [
            json!({"type": "str"}),
            json!({"pattern": "("}),
            json!({"type": "string", "pattern": "[a-z]+"}),
            json!({"type": "string", "pattern": "^[a-z]+\\$"}),
            json!({"enum": []}),
            json!({"items": 1}),
        ] {
            assert!(Schema::compile(bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }
}
