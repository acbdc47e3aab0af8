//! The generator's hand-kept data, `catalog/overrides.yaml`: tool names that replace awkward
//! derived ones, the POST operations whose annotations the method gets wrong, the path
//! parameters that span segments, and the name patterns of owner, repository and user
//! parameters. It is compiled into the binary and checked whole when loaded.

use std::collections::HashSet;

use indexmap::IndexMap;
use regex::Regex;
use serde::Deserialize;

use super::CatalogError;
use super::{PREFIX, is_tool_name};
use crate::engine::MAX_TOOL_NAME;
use crate::forge::Method;

/// The file as shipped.
pub const BUILTIN: &str = include_str!("../../catalog/overrides.yaml");

/// The overrides, checked.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    /// operationId → tool name.
    #[serde(default)]
    pub names: IndexMap<String, String>,
    /// `POST /path` lines annotated read-only and idempotent.
    #[serde(default)]
    pub read_only: Vec<String>,
    /// `POST /path` lines annotated destructive.
    #[serde(default)]
    pub destructive: Vec<String>,
    /// Path parameter names that may span segments when they end the path.
    #[serde(default)]
    pub spanning: Vec<String>,
    /// Pattern classes of name-holding path parameters.
    #[serde(default)]
    pub patterns: IndexMap<String, NamePattern>,
    /// Path segment → how people say it in a title (`keys` → `SSH keys`); a key
    /// `scope:segment` (`repos:keys`) applies under that scope only (`catalog::title`).
    #[serde(default)]
    pub nouns: IndexMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamePattern {
    /// An anchored regular expression (JSON Schema patterns are not anchored by themselves).
    pub pattern: String,
    pub max_length: Option<u64>,
    pub description: String,
    /// The path parameters it applies to.
    pub params: Vec<String>,
}

impl Overrides {
    /// The shipped overrides.
    pub fn builtin() -> Result<Overrides, CatalogError> {
        Overrides::parse(BUILTIN)
    }

    /// Parses and checks an overrides file; `Err` names every problem.
    pub fn parse(text: &str) -> Result<Overrides, CatalogError> {
        let overrides: Overrides = serde_saphyr::from_str(text)
            .map_err(|e| CatalogError::Overrides(vec![e.to_string()]))?;
        let problems = overrides.problems();
        if problems.is_empty() {
            Ok(overrides)
        } else {
            Err(CatalogError::Overrides(problems))
        }
    }

    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut seen = HashSet::new();
        for (operation, name) in &self.names {
            if !is_tool_name(name) || !name.starts_with(&format!("{PREFIX}_")) {
                problems.push(format!(
                    "`{operation}`: `{name}` is not `{PREFIX}_…` in snake_case of at most {MAX_TOOL_NAME} characters"
                ));
            }
            if !seen.insert(name) {
                problems.push(format!("`{name}` is given to two operations"));
            }
        }
        for line in self.read_only.iter().chain(&self.destructive) {
            if !matches!(parse_line(line), Some((Method::Post, _))) {
                problems.push(format!(
                    "`{line}` is not `POST /path`; other methods take their annotations from the method"
                ));
            }
        }
        for line in &self.read_only {
            if self.destructive.contains(line) {
                problems.push(format!("`{line}` is both read-only and destructive"));
            }
        }
        let mut classed = HashSet::new();
        for (class, p) in &self.patterns {
            if !(p.pattern.starts_with('^') && p.pattern.ends_with('$')) {
                problems.push(format!("pattern `{class}` must be anchored with `^…$`"));
            }
            if let Err(e) = Regex::new(&p.pattern) {
                problems.push(format!("pattern `{class}` does not compile: {e}"));
            }
            for param in &p.params {
                if !classed.insert(param) {
                    problems.push(format!("parameter `{param}` is in two pattern classes"));
                }
            }
        }
        problems
    }

    /// The pattern class of a path parameter, when it has one.
    pub fn pattern_of(&self, param: &str) -> Option<&NamePattern> {
        self.patterns
            .values()
            .find(|p| p.params.iter().any(|n| n == param))
    }

    /// Whether `METHOD /path` is listed in `lines`.
    pub fn lists(lines: &[String], method: Method, path: &str) -> bool {
        lines
            .iter()
            .any(|l| parse_line(l) == Some((method, path.to_owned())))
    }
}

/// `POST /markdown` → (POST, `/markdown`).
fn parse_line(line: &str) -> Option<(Method, String)> {
    let (method, path) = line.trim().split_once(' ')?;
    let path = path.trim();
    path.starts_with('/')
        .then(|| Method::parse(method).map(|m| (m, path.to_owned())))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_is_well_formed() {
        let o = Overrides::builtin().expect("catalog/overrides.yaml is valid");
        assert!(!o.names.is_empty() && !o.read_only.is_empty() && !o.destructive.is_empty());
        assert!(Overrides::lists(&o.read_only, Method::Post, "/markdown"));
        assert!(!Overrides::lists(&o.read_only, Method::Get, "/markdown"));
        assert_eq!(o.pattern_of("org").map(|p| p.max_length), Some(Some(40)));
        assert!(o.pattern_of("id").is_none());
    }

    #[test]
    fn every_problem_is_reported() {
        let text = "names: {a: Not_Snake, b: forgejo_x_y, c: forgejo_x_y}\n\
                    read_only: [GET /markdown, POST /x]\n\
                    destructive: [POST /x]\n\
                    patterns:\n  p: {pattern: '[a-z', description: d, params: [owner]}\n  \
                    q: {pattern: '^a$', description: d, params: [owner]}\n";
        let Err(CatalogError::Overrides(problems)) = Overrides::parse(text) else {
            panic!("expected problems");
        };
        let expected = [
            "`a`: `Not_Snake` is not",
            "`forgejo_x_y` is given to two operations",
            "`GET /markdown` is not `POST /path`",
            "`POST /x` is both read-only and destructive",
            "pattern `p` must be anchored",
            "pattern `p` does not compile",
            "parameter `owner` is in two pattern classes",
        ];
        assert_eq!(problems.len(), expected.len(), "{problems:#?}");
        for (p, e) in problems.iter().zip(expected) {
            assert!(p.starts_with(e), "{p} / {e}");
        }
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(Overrides::parse("nmes: {}\n").is_err());
    }
}
