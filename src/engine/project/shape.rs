//! The JSON Schema of what a projection builds: the `outputSchema` of a tool.
//!
//! A path into the forge's answer says where a value is, not what it is, so the type of each
//! field read from the forge is declared by name in the manifest (`field_types:`, keyed by the
//! field's own name, nested fields included). Everything else follows from the expression:
//!
//! - a value read by a path is nullable, because the projection gives null when the forge
//!   leaves the field out (another forge, another version) or sends null;
//! - a path that selects many nodes gives an array (never null), so its declared type must be one;
//! - `| count` is an integer, `| present` a boolean, `| base64` a string, `@total_count` an
//!   integer, `@answered` a string; `| default(X)` with a non-null X is no longer nullable;
//! - a literal is its own type, a nested map an object of its fields, and a list of
//!   alternatives any of their types or null.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use super::{Base, Expr, Field, Operand, Pipe, Projection, is_empty};

/// A JSON type a projected field is declared with: `string`, `integer`, `number`, `boolean`,
/// `object`, `array`, or `[T]` for an array of `T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    String,
    Integer,
    Number,
    Boolean,
    Object,
    Array(Option<Box<FieldType>>),
}

impl FromStr for FieldType {
    type Err = Untyped;

    fn from_str(text: &str) -> Result<FieldType, Untyped> {
        let text = text.trim();
        if let Some(item) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            return Ok(FieldType::Array(Some(Box::new(item.parse()?))));
        }
        Ok(match text {
            "string" => FieldType::String,
            "integer" => FieldType::Integer,
            "number" => FieldType::Number,
            "boolean" => FieldType::Boolean,
            "object" => FieldType::Object,
            "array" => FieldType::Array(None),
            other => return Err(Untyped::UnknownType(other.to_owned())),
        })
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldType::Array(Some(item)) => write!(f, "[{item}]"),
            other => f.write_str(other.json_name()),
        }
    }
}

impl FieldType {
    fn json_name(&self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::Integer => "integer",
            FieldType::Number => "number",
            FieldType::Boolean => "boolean",
            FieldType::Object => "object",
            FieldType::Array(_) => "array",
        }
    }

    /// The type of a literal value (`None` for null).
    fn of(value: &Value) -> Option<FieldType> {
        match value {
            Value::Null => None,
            Value::Bool(_) => Some(FieldType::Boolean),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(FieldType::Integer),
            Value::Number(_) => Some(FieldType::Number),
            Value::String(_) => Some(FieldType::String),
            Value::Array(_) => Some(FieldType::Array(None)),
            Value::Object(_) => Some(FieldType::Object),
        }
    }
}

/// Why a field has no schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    /// The field, dotted from the top of the projection (`head.repo`).
    pub field: String,
    pub why: Untyped,
}

/// Why a type cannot be given: each kind with the words of its finding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Untyped {
    #[error(
        "`{0}` is not a field type; known: string, integer, number, boolean, object, array, [T] (an array of T)"
    )]
    UnknownType(String),
    #[error("its type is not declared: add `{0}` to its type's list under `field_types`")]
    Undeclared(String),
    #[error("the path selects a list, so its type is an array: declare `[{0}]`, not `{0}`")]
    NotAnArray(FieldType),
}

/// What one value can be.
#[derive(Debug, Default)]
struct Shape {
    types: Vec<FieldType>,
    nullable: bool,
}

impl Shape {
    fn of(ty: FieldType, nullable: bool) -> Shape {
        Shape {
            types: vec![ty],
            nullable,
        }
    }

    /// Only null so far: what a union starts from, and a literal `null`.
    fn null() -> Shape {
        Shape {
            types: Vec::new(),
            nullable: true,
        }
    }

    fn add(&mut self, ty: FieldType) {
        if !self.types.contains(&ty) {
            self.types.push(ty);
        }
    }

    /// Writes the schema: one type is `{"type": T}`; several (a nullable one among them) are
    /// `anyOf` branches of one type each, since several clients read `type` as a single string
    /// and reject or misread the array form (`["string", "null"]`) that JSON Schema also allows.
    fn write(&self, out: &mut String) {
        let null = self.nullable || self.types.is_empty();
        match self.types.as_slice() {
            [ty] if !null => write_type(ty, out),
            [] => out.push_str(NULL),
            types => {
                out.push_str(r#"{"anyOf":["#);
                for (i, ty) in types.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_type(ty, out);
                }
                if null {
                    out.push(',');
                    out.push_str(NULL);
                }
                out.push_str("]}");
            }
        }
    }
}

const NULL: &str = r#"{"type":"null"}"#;

/// The schema of one type, with its items for an array.
fn write_type(ty: &FieldType, out: &mut String) {
    out.push_str(r#"{"type":""#);
    out.push_str(ty.json_name());
    out.push('"');
    if let FieldType::Array(Some(item)) = ty {
        out.push_str(r#","items":"#);
        Shape::of((**item).clone(), false).write(out);
    }
    out.push('}');
}

impl Projection {
    /// The schema of the object this projection builds, as compact JSON text. `types` gives
    /// the declared type of a field by its own name; every field it is asked about and cannot
    /// type is an error. The text is written directly, not through a `Value`: every tool's
    /// schema is made at start-up and kept as text, and only a listing reads one.
    pub fn schema(
        &self,
        types: &mut dyn FnMut(&str) -> Option<FieldType>,
    ) -> Result<String, Vec<ShapeError>> {
        if self.is_identity() {
            return Ok(r#"{"type":"object"}"#.to_owned());
        }
        let (mut out, mut errors) = (String::new(), Vec::new());
        write_object(&self.fields, "", types, &mut errors, &mut out);
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }
}

fn write_object(
    fields: &[(String, Field)],
    prefix: &str,
    types: &mut dyn FnMut(&str) -> Option<FieldType>,
    errors: &mut Vec<ShapeError>,
    out: &mut String,
) {
    out.push_str(r#"{"type":"object","properties":{"#);
    for (i, (name, field)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(name.as_str()).to_string());
        out.push(':');
        let path = Projection::path_of(prefix, name);
        match field {
            Field::Object(inner) => write_object(inner, &path, types, errors, out),
            other => match other.shape(name, types) {
                Ok(shape) => shape.write(out),
                Err(why) => {
                    errors.push(ShapeError { field: path, why });
                    out.push_str("{}");
                }
            },
        }
    }
    out.push_str("}}");
}

impl Field {
    fn shape(
        &self,
        name: &str,
        types: &mut dyn FnMut(&str) -> Option<FieldType>,
    ) -> Result<Shape, Untyped> {
        match self {
            Field::Literal(v) => Ok(literal(v)),
            Field::Expr(e) => e.shape(name, types),
            Field::FirstOf(alternatives) => {
                let mut union = Shape::null();
                for alternative in alternatives {
                    for ty in alternative.shape(name, types)?.types {
                        union.add(ty);
                    }
                }
                Ok(union)
            }
            Field::Object(_) => Ok(Shape::of(FieldType::Object, false)),
        }
    }
}

fn literal(value: &Value) -> Shape {
    match FieldType::of(value) {
        Some(ty) => Shape::of(ty, false),
        None => Shape::null(),
    }
}

impl Expr {
    fn shape(
        &self,
        name: &str,
        types: &mut dyn FnMut(&str) -> Option<FieldType>,
    ) -> Result<Shape, Untyped> {
        // The last pipe whose result does not depend on its input makes what comes before it
        // irrelevant; otherwise the base decides, and a path's value needs a declared type.
        let fixed = self.pipes.iter().rposition(|p| {
            matches!(
                p,
                Pipe::Count | Pipe::Present | Pipe::Base64 | Pipe::Then(Operand::Literal(_))
            )
        });
        let (from, mut shape) = match (fixed, &self.base) {
            (Some(i), _) => (i + 1, fixed_by(&self.pipes[i])),
            (None, Base::TotalCount) => (0, Shape::of(FieldType::Integer, true)),
            (None, Base::Answered) => (0, Shape::of(FieldType::String, true)),
            (None, _) => (0, self.base_shape(declared(name, types)?)?),
        };
        for pipe in &self.pipes[from..] {
            match pipe {
                Pipe::Default(Operand::Literal(v)) if !is_empty(v) => {
                    shape.nullable = false;
                    if let Some(ty) = FieldType::of(v) {
                        shape.add(ty);
                    }
                }
                Pipe::Then(Operand::Arg(_)) => {
                    shape = Shape::of(declared(name, types)?, true);
                }
                Pipe::FirstLine
                | Pipe::Excerpt(_)
                | Pipe::StripCredentials
                | Pipe::Untrusted(_)
                | Pipe::Default(_)
                | Pipe::Count
                | Pipe::Present
                | Pipe::Base64
                | Pipe::Then(Operand::Literal(_)) => {}
            }
        }
        Ok(shape)
    }

    /// What the base of the expression gives, declared `ty`.
    fn base_shape(&self, ty: FieldType) -> Result<Shape, Untyped> {
        match &self.base {
            Base::Query { many: true, .. } => match ty {
                FieldType::Array(_) => Ok(Shape::of(ty, false)),
                other => Err(Untyped::NotAnArray(other)),
            },
            _ => Ok(Shape::of(ty, true)),
        }
    }
}

fn declared(
    name: &str,
    types: &mut dyn FnMut(&str) -> Option<FieldType>,
) -> Result<FieldType, Untyped> {
    types(name).ok_or_else(|| Untyped::Undeclared(name.to_owned()))
}

/// The shape after a pipe whose result does not depend on its input's type.
fn fixed_by(pipe: &Pipe) -> Shape {
    match pipe {
        Pipe::Count => Shape::of(FieldType::Integer, false),
        Pipe::Present => Shape::of(FieldType::Boolean, false),
        Pipe::Base64 => Shape::of(FieldType::String, true),
        Pipe::Then(Operand::Literal(v)) => Shape {
            nullable: true,
            ..literal(v)
        },
        _ => Shape::default(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn types(name: &str) -> Option<FieldType> {
        match name {
            "title" => Some(FieldType::String),
            "number" => Some(FieldType::Integer),
            "labels" => "[string]".parse().ok(),
            "flag" => Some(FieldType::Boolean),
            _ => None,
        }
    }

    fn schema_of(fields: &[(&str, &str)]) -> Result<Value, Vec<ShapeError>> {
        let projection =
            Projection::compile_str(fields, &[]).expect("the test projection compiles");
        parsed(projection.schema(&mut types))
    }

    /// The schema text as JSON: that it parses is part of what is tested.
    fn parsed(schema: Result<String, Vec<ShapeError>>) -> Result<Value, Vec<ShapeError>> {
        schema.map(|text| serde_json::from_str(&text).expect("the schema is JSON"))
    }

    #[test]
    fn a_path_is_its_declared_type_or_null() {
        let s = schema_of(&[("title", "$.title"), ("number", "$.number")]).unwrap();
        assert_eq!(
            s["properties"]["title"],
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
        assert_eq!(
            s["properties"]["number"],
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})
        );
    }

    #[test]
    fn a_path_over_many_nodes_is_an_array_that_is_never_null() {
        let s = schema_of(&[("labels", "$.labels[*].name")]).unwrap();
        assert_eq!(
            s["properties"]["labels"],
            json!({"type": "array", "items": {"type": "string"}})
        );
        let err = schema_of(&[("title", "$.labels[*].name")]).unwrap_err();
        assert_eq!(err[0].why, Untyped::NotAnArray(FieldType::String));
        assert!(err[0].why.to_string().contains("declare `[string]`"));
    }

    #[test]
    fn pipes_that_fix_the_type_need_no_declaration() {
        let s = schema_of(&[
            ("n", "$.items[*] | count"),
            ("p", "$.x | present"),
            ("t", "@total_count"),
            ("a", "@answered"),
            ("d", "$.body | base64"),
            ("w", "$.merged | then('merged')"),
        ])
        .unwrap();
        let p = &s["properties"];
        assert_eq!(p["n"], json!({"type": "integer"}));
        assert_eq!(p["p"], json!({"type": "boolean"}));
        let nullable = |t: &str| json!({"anyOf": [{"type": t}, {"type": "null"}]});
        assert_eq!(p["t"], nullable("integer"));
        assert_eq!(p["a"], nullable("string"));
        assert_eq!(p["d"], nullable("string"));
        assert_eq!(p["w"], nullable("string"));
    }

    #[test]
    fn a_default_removes_null_and_adds_its_own_type() {
        let s = schema_of(&[
            ("title", "$.title | default('none')"),
            ("number", "$.n | default('?')"),
        ])
        .unwrap();
        assert_eq!(s["properties"]["title"], json!({"type": "string"}));
        assert_eq!(
            s["properties"]["number"],
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        );
    }

    #[test]
    fn an_undeclared_field_is_named_with_its_path() {
        let p = Projection::new(vec![(
            "head".into(),
            Field::Object(vec![(
                "repo".into(),
                Expr::compile("$.head.repo.full_name", &[]).unwrap(),
            )]),
        )]);
        let err = parsed(p.schema(&mut types)).unwrap_err();
        assert_eq!(err[0].field, "head.repo");
        assert_eq!(err[0].why, Untyped::Undeclared("repo".into()));
        assert!(
            err[0]
                .why
                .to_string()
                .contains("add `repo` to its type's list")
        );
    }

    #[test]
    fn literals_and_nested_objects_type_themselves() {
        let p = Projection::new(vec![
            ("kind".into(), Field::Literal(json!("issue"))),
            (
                "inner".into(),
                Field::Object(vec![("flag".into(), Expr::compile("$.f", &[]).unwrap())]),
            ),
        ]);
        let s = parsed(p.schema(&mut types)).unwrap();
        assert_eq!(s["properties"]["kind"], json!({"type": "string"}));
        assert_eq!(
            s["properties"]["inner"],
            json!({"type": "object", "properties": {"flag": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}}})
        );
    }

    #[test]
    fn type_names_parse_and_print_the_same() {
        for text in [
            "string",
            "integer",
            "number",
            "boolean",
            "object",
            "array",
            "[string]",
            "[[integer]]",
        ] {
            assert_eq!(text.parse::<FieldType>().unwrap().to_string(), text);
        }
        let err = "text".parse::<FieldType>().unwrap_err();
        assert_eq!(err, Untyped::UnknownType("text".into()));
        assert!(err.to_string().contains("known: string"));
    }
}
