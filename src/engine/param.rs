//! Parameter rules: named, reusable checks of one value (an owner name, a positive integer, a
//! full commit sha, an enumeration), compiled once from the manifests' `rules:`.
//!
//! A rule checks a URI parameter (always text) with [`Rule::check_text`], which also converts it
//! to its JSON type, and a tool argument (already JSON) with [`Rule::check_json`]. Both give the
//! same answers, and [`Rule::schema`] states them as JSON Schema for `tools/list`.

use regex::Regex;
use serde_json::{Map, Value, json};

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub name: String,
    pub description: Option<String>,
    pub kind: RuleKind,
}

#[derive(Debug, Clone)]
pub enum RuleKind {
    Text {
        pattern: Option<Regex>,
        max_length: Option<usize>,
        values: Option<Vec<String>>,
    },
    Integer {
        minimum: Option<i64>,
        maximum: Option<i64>,
    },
}

impl Rule {
    /// Checks URI text and returns it as its JSON value; `Err` says what was expected.
    pub fn check_text(&self, text: &str) -> Result<Value, String> {
        match &self.kind {
            RuleKind::Text { .. } => {
                self.check_str(text)?;
                Ok(Value::String(text.to_owned()))
            }
            RuleKind::Integer { .. } => {
                // Only ASCII digits (and a leading `-`): no `+`, spaces or look-alike digits.
                let digits = text.strip_prefix('-').unwrap_or(text);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(self.expected());
                }
                let n: i64 = text.parse().map_err(|_| self.expected())?;
                self.check_int(n)?;
                Ok(Value::from(n))
            }
        }
    }

    /// Checks a JSON argument.
    pub fn check_json(&self, value: &Value) -> Result<(), String> {
        match (&self.kind, value) {
            (RuleKind::Text { .. }, Value::String(s)) => self.check_str(s),
            (RuleKind::Integer { .. }, Value::Number(n)) => match n.as_i64() {
                Some(i) => self.check_int(i),
                None => Err(self.expected()),
            },
            _ => Err(self.expected()),
        }
    }

    fn check_str(&self, s: &str) -> Result<(), String> {
        let RuleKind::Text {
            pattern,
            max_length,
            values,
        } = &self.kind
        else {
            return Err(self.expected());
        };
        let ok = values.as_ref().is_none_or(|v| v.iter().any(|x| x == s))
            && max_length.is_none_or(|m| s.chars().count() <= m)
            && pattern.as_ref().is_none_or(|p| p.is_match(s));
        if ok { Ok(()) } else { Err(self.expected()) }
    }

    fn check_int(&self, n: i64) -> Result<(), String> {
        let RuleKind::Integer { minimum, maximum } = &self.kind else {
            return Err(self.expected());
        };
        if minimum.is_some_and(|m| n < m) || maximum.is_some_and(|m| n > m) {
            return Err(self.expected());
        }
        Ok(())
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
        Rule {
            name: "t".into(),
            description: None,
            kind: RuleKind::Text {
                pattern: Some(Regex::new(pattern).unwrap()),
                max_length: max,
                values: None,
            },
        }
    }

    fn positive() -> Rule {
        Rule {
            name: "n".into(),
            description: None,
            kind: RuleKind::Integer {
                minimum: Some(1),
                maximum: None,
            },
        }
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
