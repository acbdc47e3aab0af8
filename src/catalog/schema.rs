//! JSON Schemas from the spec's parameter types and body definitions.
//!
//! Only structural keywords are carried over — `type`, `format`, `enum`, `items`, `properties`,
//! `required`, `additionalProperties`, `minimum`, `maximum` — so no prose of the spec (its
//! `description`, `title`, `example`, `x-…` extensions) reaches the generated file. `$ref`s are
//! inlined; a definition met again inside itself becomes a plain `{"type": "object"}`. An object
//! that lists its properties is closed with `additionalProperties: false`; a map (an object
//! whose `additionalProperties` is a schema) stays open to any key.

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::CatalogError;

/// Keywords copied from a spec schema as they are.
const SCALAR_KEYWORDS: &[&str] = &["type", "format", "enum", "minimum", "maximum"];

/// Resolves and cleans the schema of a body parameter.
pub fn body(schema: &Value, definitions: &IndexMap<String, Value>) -> Result<Value, CatalogError> {
    let mut stack = Vec::new();
    clean(schema, definitions, &mut stack)
}

/// The fields of a cleaned body schema that is an object of named fields, each with its schema
/// and whether it is required, in the schema's order; `None` for any other body (an array, a
/// map open to any key, text, an object that names no field).
pub fn fields(schema: &Value) -> Option<Vec<(&str, &Value, bool)>> {
    if schema
        .get("additionalProperties")
        .is_some_and(Value::is_object)
    {
        return None;
    }
    let properties = schema.get("properties")?.as_object()?;
    if properties.is_empty() {
        return None;
    }
    let required = |name: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(name)))
    };
    Some(
        properties
            .iter()
            .map(|(name, field)| (name.as_str(), field, required(name)))
            .collect(),
    )
}

/// The name of the definition a schema refers to, when it is a bare `$ref`.
pub fn definition_name(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix("#/definitions/")
}

fn clean(
    schema: &Value,
    definitions: &IndexMap<String, Value>,
    stack: &mut Vec<String>,
) -> Result<Value, CatalogError> {
    let Value::Object(source) = schema else {
        return Ok(json!({}));
    };
    if let Some(reference) = source.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/definitions/").ok_or_else(|| {
            CatalogError::Spec(format!("`{reference}` is not a `#/definitions/` reference"))
        })?;
        if stack.iter().any(|n| n == name) {
            return Ok(json!({"type": "object"}));
        }
        let target = definitions
            .get(name)
            .ok_or_else(|| CatalogError::Spec(format!("`{reference}` names no definition")))?;
        stack.push(name.to_owned());
        let out = clean(target, definitions, stack);
        stack.pop();
        return out;
    }
    let mut out = Map::new();
    for key in SCALAR_KEYWORDS {
        if let Some(v) = source.get(*key) {
            out.insert((*key).to_owned(), v.clone());
        }
    }
    if let Some(items) = source.get("items") {
        out.insert("items".into(), clean(items, definitions, stack)?);
    }
    let mut listed = false;
    if let Some(Value::Object(props)) = source.get("properties") {
        let mut cleaned = Map::new();
        for (name, prop) in props {
            cleaned.insert(name.clone(), clean(prop, definitions, stack)?);
        }
        listed = true;
        out.insert("properties".into(), Value::Object(cleaned));
        if let Some(Value::Array(required)) = source.get("required") {
            let names: Vec<Value> = required
                .iter()
                .filter(|r| r.as_str().is_some_and(|r| props.contains_key(r)))
                .cloned()
                .collect();
            if !names.is_empty() {
                out.insert("required".into(), Value::Array(names));
            }
        }
    }
    match source.get("additionalProperties") {
        Some(Value::Object(inner)) => {
            let inner = clean(&Value::Object(inner.clone()), definitions, stack)?;
            out.insert("additionalProperties".into(), inner);
        }
        Some(Value::Bool(b)) => {
            out.insert("additionalProperties".into(), json!(b));
        }
        _ if listed => {
            out.insert("additionalProperties".into(), json!(false));
        }
        _ => {}
    }
    if listed && !out.contains_key("type") {
        out.insert("type".into(), json!("object"));
    }
    Ok(Value::Object(out))
}

/// The JSON type of a non-body parameter's swagger type (`file` is base64 text).
pub fn json_type(kind: Option<&str>) -> &'static str {
    match kind {
        Some("integer") => "integer",
        Some("number") => "number",
        Some("boolean") => "boolean",
        Some("array") => "array",
        _ => "string",
    }
}

/// The `items` schema of an array parameter, cleaned like a body.
pub fn items(items: Option<&Value>) -> Value {
    let empty = IndexMap::new();
    items
        .and_then(|i| clean(i, &empty, &mut Vec::new()).ok())
        .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
        .unwrap_or_else(|| json!({"type": "string"}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs(v: Value) -> IndexMap<String, Value> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn references_are_inlined_and_prose_dropped() {
        let d = defs(json!({
            "Opt": {"type": "object", "description": "words", "title": "T", "x-go-package": "p",
                    "required": ["title", "ghost"],
                    "properties": {
                        "title": {"type": "string", "description": "more words", "example": "x"},
                        "labels": {"type": "array", "items": {"type": "integer", "format": "int64"}, "uniqueItems": true},
                        "user": {"$ref": "#/definitions/User"},
                        "meta": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "User": {"type": "object", "properties": {"login": {"type": "string"}}}
        }));
        let got = body(&json!({"$ref": "#/definitions/Opt"}), &d).unwrap();
        assert_eq!(
            got,
            json!({"type": "object", "properties": {
                "title": {"type": "string"},
                "labels": {"type": "array", "items": {"type": "integer", "format": "int64"}},
                "user": {"type": "object", "properties": {"login": {"type": "string"}}, "additionalProperties": false},
                "meta": {"type": "object", "additionalProperties": {"type": "string"}}},
              "required": ["title"], "additionalProperties": false})
        );
    }

    #[test]
    fn a_cycle_is_cut() {
        let d = defs(
            json!({"Node": {"type": "object", "properties": {"next": {"$ref": "#/definitions/Node"}}}}),
        );
        let got = body(&json!({"$ref": "#/definitions/Node"}), &d).unwrap();
        assert_eq!(got["properties"]["next"], json!({"type": "object"}));
    }

    #[test]
    fn a_dangling_reference_is_an_error() {
        assert!(body(&json!({"$ref": "#/definitions/None"}), &IndexMap::new()).is_err());
        assert_eq!(
            definition_name(&json!({"$ref": "#/definitions/A"})),
            Some("A")
        );
    }
}
