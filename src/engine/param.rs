//! Parameter rules: named, reusable checks of one value (an owner name, a positive integer, a
//! full commit sha, an enumeration), compiled once from the manifests' `rules:`.
//!
//! A rule checks a URI parameter (always text) with [`Rule::check_text`], which also converts it
//! to its JSON type, and a tool argument (already JSON) with [`Rule::check_json`]. Both give the
//! same answers, and [`Rule::schema`] states them as JSON Schema for `tools/list`.

use serde_json::{Map, Value, json};

use super::schema::{Pattern, Schema, SchemaError, Violation};

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub name: String,
    pub description: Option<String>,
    pub kind: RuleKind,
    /// The rule as a compiled JSON Schema: one checker holds rules and inline schemas alike.
    checker: Schema,
}

#[derive(Debug, Clone)]
pub enum RuleKind {
    Text {
        /// Anchored at both ends (`^(?:…)$`): a rule matches the whole value.
        pattern: Option<Pattern>,
        max_length: Option<usize>,
        values: Option<Vec<String>>,
    },
    Integer {
        minimum: Option<i64>,
        maximum: Option<i64>,
    },
}

impl Rule {
    /// A rule of `kind`; `Err` when its pattern is not anchored at both ends.
    pub fn new(
        name: impl Into<String>,
        description: Option<String>,
        kind: RuleKind,
    ) -> Result<Rule, SchemaError> {
        let mut rule = Rule {
            name: name.into(),
            description,
            kind,
            checker: Schema::default(),
        };
        rule.checker = Schema::compile(&rule.schema())?;
        Ok(rule)
    }

    /// Checks URI text and returns it as its JSON value; `Err` says what was expected.
    pub fn check_text(&self, text: &str) -> Result<Value, Violation> {
        let value = match &self.kind {
            RuleKind::Text { .. } => Value::String(text.to_owned()),
            RuleKind::Integer { .. } => {
                // Only ASCII digits (and a leading `-`): no `+`, spaces or look-alike digits.
                let digits = text.strip_prefix('-').unwrap_or(text);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(self.mismatch());
                }
                Value::from(text.parse::<i64>().map_err(|_| self.mismatch())?)
            }
        };
        self.check_json(&value)?;
        Ok(value)
    }

    /// Checks a JSON argument.
    /// `value` as the rule reads it (a number written as a string, for an integer rule).
    pub fn read(&self, value: Value) -> Value {
        self.checker.read(value)
    }

    pub fn check_json(&self, value: &Value) -> Result<(), Violation> {
        self.checker.check(value).map_err(|_| self.mismatch())
    }

    /// A value the rule refuses, in the rule's words.
    fn mismatch(&self) -> Violation {
        Violation::Rule(self.expected())
    }

    /// What a valid value looks like, for error messages.
    pub fn expected(&self) -> String {
        match &self.kind {
            RuleKind::Text {
                pattern,
                max_length,
                values,
            } => {
                if let Some(values) = values {
                    let list: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
                    return format!("one of {}", list.join(", "));
                }
                let mut s = String::from("text");
                if let Some(p) = pattern {
                    s.push_str(&format!(" matching `{}`", p.as_str()));
                }
                if let Some(m) = max_length {
                    s.push_str(&format!(", at most {m} characters"));
                }
                s
            }
            RuleKind::Integer { minimum, maximum } => match (minimum, maximum) {
                (Some(lo), Some(hi)) => format!("an integer from {lo} to {hi}"),
                (Some(lo), None) => format!("an integer of at least {lo}"),
                (None, Some(hi)) => format!("an integer of at most {hi}"),
                (None, None) => "an integer".to_owned(),
            },
        }
    }

    /// What a valid value looks like beside the rule's own description: its limits, without
    /// the pattern (the description says in words what the pattern says in symbols, and the
    /// complete schema still gives the pattern).
    pub fn limits(&self) -> Option<String> {
        match &self.kind {
            RuleKind::Text {
                max_length,
                values: None,
                ..
            } => max_length.map(|m| format!("at most {m} characters")),
            _ => Some(self.expected()),
        }
    }

    /// The rule as JSON Schema.
    pub fn schema(&self) -> Map<String, Value> {
        let mut schema = Map::new();
        match &self.kind {
            RuleKind::Text {
                pattern,
                max_length,
                values,
            } => {
                schema.insert("type".into(), json!("string"));
                if let Some(values) = values {
                    schema.insert("enum".into(), json!(values));
                }
                if let Some(p) = pattern {
                    schema.insert("pattern".into(), json!(p.as_str()));
                }
                if let Some(m) = max_length {
                    schema.insert("maxLength".into(), json!(m));
                }
            }
            RuleKind::Integer { minimum, maximum } => {
                schema.insert("type".into(), json!("integer"));
                if let Some(m) = minimum {
                    schema.insert("minimum".into(), json!(m));
                }
                if let Some(m) = maximum {
                    schema.insert("maximum".into(), json!(m));
                }
            }
        }
        schema
    }

    /// Whether the rule pins a value to exactly 40 hexadecimal digits (a full commit sha).
    pub fn is_full_sha(&self) -> bool {
        let RuleKind::Text {
            pattern: Some(p), ..
        } = &self.kind
        else {
            return false;
        };
        let hex40 = "0123456789abcdef0123456789abcdef01234567";
        p.is_match(hex40)
            && !p.is_match(&hex40[..39])
            && !p.is_match(&format!("{hex40}0"))
            && !p.is_match("g123456789abcdef0123456789abcdef01234567")
    }

    /// Whether the rule is an integer.
    pub fn is_integer(&self) -> bool {
        matches!(self.kind, RuleKind::Integer { .. })
    }

    /// The allowed values of an enumeration.
    pub fn values(&self) -> Option<&[String]> {
        match &self.kind {
            RuleKind::Text { values, .. } => values.as_deref(),
            RuleKind::Integer { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(pattern: &str, max: Option<usize>) -> Rule {
        let kind = RuleKind::Text {
            pattern: Some(super::super::schema::pattern(pattern).unwrap()),
            max_length: max,
            values: None,
        };
        Rule::new("t", None, kind).unwrap()
    }

    fn positive() -> Rule {
        let kind = RuleKind::Integer {
            minimum: Some(1),
            maximum: None,
        };
        Rule::new("n", None, kind).unwrap()
    }

    #[test]
    fn integers_are_ascii_digits_only() {
        let rule = positive();
        for ok in ["1", "42", "9223372036854775807"] {
            assert!(rule.check_text(ok).is_ok(), "{ok}");
        }
        for bad in [
            "0",
            "-1",
            "abc",
            "",
            "+1",
            " 1",
            "1 ",
            "１２",
            "1e3",
            "9223372036854775808",
        ] {
            assert!(rule.check_text(bad).is_err(), "{bad:?}");
        }
        assert_eq!(rule.check_text("7").unwrap(), json!(7));
        assert!(rule.check_json(&json!(7)).is_ok());
        assert!(rule.check_json(&json!("7")).is_err());
        assert!(rule.check_json(&json!(0)).is_err());
    }

    #[test]
    fn text_rules_apply_pattern_and_length() {
        let rule = text("^[a-z]+$", Some(3));
        assert!(rule.check_text("abc").is_ok());
        assert!(rule.check_text("abcd").is_err());
        assert!(rule.check_text("ab1").is_err());
        assert_eq!(rule.check_text("ab").unwrap(), json!("ab"));
    }

    #[test]
    fn recognises_a_full_sha_rule() {
        assert!(text("^[0-9a-f]{40}$", None).is_full_sha());
        assert!(text("^[0-9a-fA-F]{40}$", None).is_full_sha());
        assert!(!text("^[0-9a-f]{7,40}$", None).is_full_sha());
        assert!(!text("^.+$", None).is_full_sha());
    }
}
