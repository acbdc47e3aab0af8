//! URI templates: the RFC 6570 subset forgelens serves, and the matchit route each compiles to.
//!
//! Supported, each expression standing for whole path segments:
//!
//! - `{var}` — simple expansion: one path segment; everything but unreserved characters is
//!   percent-encoded.
//! - `{+var}` — reserved expansion: one or more segments (a file path); only as the last
//!   expression of the path. `/` separates segments; other reserved characters are encoded by
//!   forgelens's own expansion, and a client must encode `?` and `#` itself.
//! - `{?a,b}` — form-style query: only at the end.
//!
//! ```
//! use forgelens::engine::template::UriTemplate;
//! let t = UriTemplate::parse("forgejo://repo/{owner}/{repo}/labels{?page,limit}").unwrap();
//! assert_eq!(t.route(), "/repo/{owner}/{repo}/labels");
//! assert_eq!(t.query_vars(), ["page", "limit"]);
//! assert_eq!(
//!     t.expand(|v| match v { "owner" => Some("a b".into()), "repo" => Some("r".into()),
//!                            "page" => Some("2".into()), _ => None }),
//!     "forgejo://repo/a%20b/r/labels?page=2",
//! );
//! ```

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use thiserror::Error;

/// The only scheme served.
pub const SCHEME: &str = "forgejo";

/// Characters encoded in one segment: all but RFC 3986 unreserved.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes `value` as exactly one path segment or query value.
pub fn encode_component(value: &str) -> String {
    utf8_percent_encode(value, SEGMENT).to_string()
}

/// One segment of a template's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Literal(String),
    /// `{var}`: exactly one segment.
    Var(String),
    /// `{+var}`: the rest of the path, one or more segments.
    Rest(String),
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    segments: Vec<Segment>,
    query: Vec<String>,
}

/// Why a template is not in the supported subset.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TemplateError {
    #[error("the scheme must be `{SCHEME}://`, found `{0}`")]
    Scheme(String),
    #[error("the template has no path after `{SCHEME}://`")]
    EmptyPath,
    #[error("an empty path segment (`//` or a trailing `/`)")]
    EmptySegment,
    #[error("`{{` without a matching `}}`")]
    Unclosed,
    #[error("`}}` without a matching `{{`")]
    Unopened,
    #[error(
        "expression `{{{0}}}` uses an operator outside the subset (`{{var}}`, `{{+var}}`, `{{?a,b}}`)"
    )]
    Operator(String),
    #[error("`{0}` is not a variable name (letters, digits and `_`)")]
    VarName(String),
    #[error("expression `{0}` must be a whole path segment")]
    PartialSegment(String),
    #[error("`{{+{0}}}` must be the last segment of the path")]
    RestNotLast(String),
    #[error("the query expression must come last")]
    QueryNotLast,
    #[error("variable `{0}` appears twice")]
    Duplicate(String),
}

impl UriTemplate {
    pub fn parse(source: &str) -> Result<UriTemplate, TemplateError> {
        let rest = match source.split_once("://") {
            Some((scheme, rest)) if scheme == SCHEME => rest,
            Some((scheme, _)) => return Err(TemplateError::Scheme(scheme.to_owned())),
            None => return Err(TemplateError::Scheme(String::new())),
        };
        let (path, query) = split_query_expression(rest)?;
        if path.is_empty() {
            return Err(TemplateError::EmptyPath);
        }
        let mut segments = Vec::new();
        for raw in path.split('/') {
            segments.push(parse_segment(raw)?);
        }
        if let Some(pos) = segments.iter().position(|s| matches!(s, Segment::Rest(_)))
            && pos + 1 != segments.len()
            && let Segment::Rest(name) = &segments[pos]
        {
            return Err(TemplateError::RestNotLast(name.clone()));
        }
        let template = UriTemplate {
            source: source.to_owned(),
            segments,
            query,
        };
        let mut seen = std::collections::HashSet::new();
        for var in template.vars() {
            if !seen.insert(var) {
                return Err(TemplateError::Duplicate(var.to_owned()));
            }
        }
        Ok(template)
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Variables of the path, in order.
    pub fn path_vars(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Var(v) | Segment::Rest(v) => Some(v.as_str()),
            Segment::Literal(_) => None,
        })
    }

    /// Variables of the query expression, in order.
    pub fn query_vars(&self) -> &[String] {
        &self.query
    }

    /// Every variable: path first, then query.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.path_vars()
            .chain(self.query.iter().map(String::as_str))
    }

    /// Whether `var` is the multi-segment `{+var}`.
    pub fn is_rest(&self, var: &str) -> bool {
        self.segments
            .iter()
            .any(|s| matches!(s, Segment::Rest(v) if v == var))
    }

    /// The segments of the path, a variable as `{name}` and a rest as `{+name}`:
    /// `["repo", "{owner}", "{repo}", "contents", "{+path}"]`.
    pub fn path_segments(&self) -> Vec<String> {
        self.route()
            .trim_start_matches('/')
            .split('/')
            .map(|s| s.replacen("{*", "{+", 1))
            .collect()
    }

    /// The matchit route of the path: `/repo/{owner}/{repo}/contents/{*path}`.
    pub fn route(&self) -> String {
        let mut route = String::new();
        for segment in &self.segments {
            route.push('/');
            match segment {
                Segment::Literal(l) => route.push_str(l),
                Segment::Var(v) => {
                    route.push('{');
                    route.push_str(v);
                    route.push('}');
                }
                Segment::Rest(v) => {
                    route.push_str("{*");
                    route.push_str(v);
                    route.push('}');
                }
            }
        }
        route
    }

    /// Expands the template; `value` gives each variable's value, `None` leaves a query variable
    /// out (a path variable without a value expands to nothing, which no URI parse accepts).
    pub fn expand(&self, value: impl Fn(&str) -> Option<String>) -> String {
        let mut out = format!("{SCHEME}:/");
        for segment in &self.segments {
            out.push('/');
            match segment {
                Segment::Literal(l) => out.push_str(l),
                Segment::Var(v) => out.push_str(&encode_component(&value(v).unwrap_or_default())),
                Segment::Rest(v) => {
                    let path = value(v).unwrap_or_default();
                    let parts: Vec<String> = path.split('/').map(encode_component).collect();
                    out.push_str(&parts.join("/"));
                }
            }
        }
        let mut sep = '?';
        for var in &self.query {
            if let Some(v) = value(var) {
                out.push(sep);
                out.push_str(var);
                out.push('=');
                out.push_str(&encode_component(&v));
                sep = '&';
            }
        }
        out
    }
}

/// Splits a trailing `{?a,b}` off the rest of the template.
fn split_query_expression(rest: &str) -> Result<(&str, Vec<String>), TemplateError> {
    let Some(start) = rest.find("{?") else {
        return Ok((rest, Vec::new()));
    };
    let expr = &rest[start..];
    let Some(end) = expr.find('}') else {
        return Err(TemplateError::Unclosed);
    };
    if end + 1 != expr.len() {
        return Err(TemplateError::QueryNotLast);
    }
    let mut names = Vec::new();
    for name in expr[2..end].split(',') {
        check_var_name(name)?;
        names.push(name.to_owned());
    }
    Ok((&rest[..start], names))
}

fn parse_segment(raw: &str) -> Result<Segment, TemplateError> {
    if raw.is_empty() {
        return Err(TemplateError::EmptySegment);
    }
    match (raw.find('{'), raw.find('}')) {
        (None, None) => Ok(Segment::Literal(raw.to_owned())),
        (None, Some(_)) => Err(TemplateError::Unopened),
        (Some(_), None) => Err(TemplateError::Unclosed),
        (Some(open), Some(close)) => {
            if open != 0 || close + 1 != raw.len() || close < open {
                return Err(TemplateError::PartialSegment(raw.to_owned()));
            }
            let inner = &raw[1..close];
            let (rest, name) = match inner.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, inner),
            };
            if let Some(op) = name.chars().next().filter(|c| "#./;?&=,!@|".contains(*c)) {
                return Err(TemplateError::Operator(format!("{op}{}", &name[1..])));
            }
            check_var_name(name)?;
            Ok(if rest {
                Segment::Rest(name.to_owned())
            } else {
                Segment::Var(name.to_owned())
            })
        }
    }
}

fn check_var_name(name: &str) -> Result<(), TemplateError> {
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(TemplateError::VarName(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_subset() {
        let t =
            UriTemplate::parse("forgejo://repo/{owner}/{repo}/contents/{+path}{?ref,start_line}")
                .unwrap();
        assert_eq!(t.route(), "/repo/{owner}/{repo}/contents/{*path}");
        assert_eq!(
            t.vars().collect::<Vec<_>>(),
            ["owner", "repo", "path", "ref", "start_line"]
        );
        assert!(t.is_rest("path"));
        let plain = UriTemplate::parse("forgejo://instance").unwrap();
        assert_eq!(plain.route(), "/instance");
        assert_eq!(plain.vars().count(), 0);
    }

    #[test]
    fn rejects_what_is_outside_the_subset() {
        let cases: &[(&str, TemplateError)] = &[
            (
                "https://repo/{owner}",
                TemplateError::Scheme("https".into()),
            ),
            ("forgejo:repo", TemplateError::Scheme(String::new())),
            ("forgejo://", TemplateError::EmptyPath),
            ("forgejo://repo//x", TemplateError::EmptySegment),
            ("forgejo://repo/{owner", TemplateError::Unclosed),
            ("forgejo://repo/owner}", TemplateError::Unopened),
            (
                "forgejo://repo/{#frag}",
                TemplateError::Operator("#frag".into()),
            ),
            ("forgejo://repo/{a-b}", TemplateError::VarName("a-b".into())),
            (
                "forgejo://repo/x{id}",
                TemplateError::PartialSegment("x{id}".into()),
            ),
            (
                "forgejo://repo/{+path}/x",
                TemplateError::RestNotLast("path".into()),
            ),
            ("forgejo://repo{?a}/x", TemplateError::QueryNotLast),
            (
                "forgejo://repo/{a}/{a}",
                TemplateError::Duplicate("a".into()),
            ),
            (
                "forgejo://repo/{a}{?a}",
                TemplateError::Duplicate("a".into()),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(UriTemplate::parse(input).as_ref(), Err(expected), "{input}");
        }
    }

    #[test]
    fn expands_with_encoding() {
        let t = UriTemplate::parse("forgejo://repo/{owner}/{repo}/contents/{+path}{?ref}").unwrap();
        let uri = t.expand(|v| {
            Some(match v {
                "owner" => "o".into(),
                "repo" => "r".into(),
                "path" => "docs/a b/c?.md".into(),
                _ => return None,
            })
        });
        assert_eq!(uri, "forgejo://repo/o/r/contents/docs/a%20b/c%3F.md");
    }
}
