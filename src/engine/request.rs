//! Request templates: `METHOD /path/{var}?name=value&other={var}`, parsed once, expanded per call.
//!
//! Expansion puts each path variable in exactly one segment, percent-encoded; a `{+var}` path
//! variable may span segments, each encoded alone. An empty value, `.` or `..` is refused in any
//! segment, so no value can climb out of the manifest's endpoint. A segment may also join
//! placeholders and literals (`{sha}.{type}`). A query pair whose variable has no value is left
//! out; `name={var*}` sends one pair per element of an array (the repeated form), where
//! `name={var}` joins them with commas.

use serde_json::{Map, Value};
use thiserror::Error;

use super::template::encode_component;
use crate::forge::{Accept, Method, Request};

/// Argument values by name.
pub type Args = Map<String, Value>;

/// One path segment: pieces of literal text and placeholders (`{index}.diff`), or the rest of
/// the path (`{+path}`, last only).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Segment(Vec<Piece>),
    Rest(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Var(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum QueryValue {
    Literal(String),
    Var(String),
    /// `{var*}`: one pair per array element (the repeated form).
    Explode(String),
}

/// The method of a request line: fixed, or an argument (`{method} /…`, for the escape hatch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MethodSpec {
    Fixed(Method),
    Var(String),
}

impl MethodSpec {
    /// The method when it is fixed.
    pub fn fixed(&self) -> Option<Method> {
        match self {
            MethodSpec::Fixed(m) => Some(*m),
            MethodSpec::Var(_) => None,
        }
    }

    pub fn is_get(&self) -> bool {
        self.fixed() == Some(Method::Get)
    }
}

/// A compiled request line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestTemplate {
    pub method: MethodSpec,
    source: String,
    path: Vec<Part>,
    query: Vec<(String, QueryValue)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RequestSyntaxError {
    #[error("expected `METHOD /path`, e.g. `GET /repos/{{owner}}/{{repo}}`")]
    Shape,
    #[error("`{0}` is not one of GET, POST, PUT, PATCH, DELETE or a `{{placeholder}}`")]
    Method(String),
    #[error("the path must start with `/`")]
    Slash,
    #[error(
        "path segment `{0}` is empty or malformed (placeholders are `{{name}}`, `{{+name}}` whole and last)"
    )]
    Segment(String),
    #[error("`{{+{0}}}` must be the last segment")]
    RestNotLast(String),
    #[error("query pair `{0}` is not `name=value` or `name={{var}}`")]
    Query(String),
}

/// Why a request could not be expanded from the given values.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ExpandError {
    #[error("`{0}` is required")]
    Missing(String),
    #[error("`{name}` cannot {why}")]
    Segment { name: String, why: &'static str },
    #[error("`{0}` must be one of GET, POST, PUT, PATCH, DELETE")]
    Method(String),
}

impl RequestTemplate {
    pub fn parse(line: &str) -> Result<RequestTemplate, RequestSyntaxError> {
        let mut words = line.split_whitespace();
        let (Some(method), Some(target), None) = (words.next(), words.next(), words.next()) else {
            return Err(RequestSyntaxError::Shape);
        };
        let method = match method.strip_prefix('{').and_then(|m| m.strip_suffix('}')) {
            Some(var) if is_name(var) => MethodSpec::Var(var.to_owned()),
            _ => MethodSpec::Fixed(
                Method::parse(method)
                    .ok_or_else(|| RequestSyntaxError::Method(method.to_owned()))?,
            ),
        };
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        let Some(path) = path.strip_prefix('/') else {
            return Err(RequestSyntaxError::Slash);
        };
        let mut parts = Vec::new();
        for segment in path.split('/') {
            parts.push(parse_part(segment)?);
        }
        if let Some(pos) = parts.iter().position(|p| matches!(p, Part::Rest(_)))
            && pos + 1 != parts.len()
            && let Part::Rest(name) = &parts[pos]
        {
            return Err(RequestSyntaxError::RestNotLast(name.clone()));
        }
        let mut pairs = Vec::new();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let Some((name, value)) = pair.split_once('=') else {
                return Err(RequestSyntaxError::Query(pair.to_owned()));
            };
            if name.is_empty() {
                return Err(RequestSyntaxError::Query(pair.to_owned()));
            }
            let value = match value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
                Some(var) if is_name(var) => QueryValue::Var(var.to_owned()),
                Some(var) if var.strip_suffix('*').is_some_and(is_name) => {
                    QueryValue::Explode(var.trim_end_matches('*').to_owned())
                }
                Some(_) => return Err(RequestSyntaxError::Query(pair.to_owned())),
                None if value.contains(['{', '}']) => {
                    return Err(RequestSyntaxError::Query(pair.to_owned()));
                }
                None => QueryValue::Literal(value.to_owned()),
            };
            pairs.push((name.to_owned(), value));
        }
        Ok(RequestTemplate {
            method,
            source: line.to_owned(),
            path: parts,
            query: pairs,
        })
    }

    /// The line as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// This request as another face of its endpoint reads it: every placeholder renamed by
    /// `rename`, and of the query only the fixed pairs and those whose renamed variable `keep`
    /// accepts. A list resource reads its tool's request this way, with the URI's variables.
    pub fn renamed(
        &self,
        rename: impl Fn(&str) -> String,
        keep: impl Fn(&str) -> bool,
    ) -> RequestTemplate {
        let method = match &self.method {
            MethodSpec::Fixed(m) => MethodSpec::Fixed(*m),
            MethodSpec::Var(v) => MethodSpec::Var(rename(v)),
        };
        let path: Vec<Part> = self
            .path
            .iter()
            .map(|part| match part {
                Part::Rest(v) => Part::Rest(rename(v)),
                Part::Segment(pieces) => Part::Segment(
                    pieces
                        .iter()
                        .map(|piece| match piece {
                            Piece::Literal(l) => Piece::Literal(l.clone()),
                            Piece::Var(v) => Piece::Var(rename(v)),
                        })
                        .collect(),
                ),
            })
            .collect();
        let query: Vec<(String, QueryValue)> = self
            .query
            .iter()
            .filter_map(|(name, value)| {
                let value = match value {
                    QueryValue::Literal(l) => QueryValue::Literal(l.clone()),
                    QueryValue::Var(v) => QueryValue::Var(rename(v)),
                    QueryValue::Explode(v) => QueryValue::Explode(rename(v)),
                };
                match &value {
                    QueryValue::Var(v) | QueryValue::Explode(v) if !keep(v) => None,
                    _ => Some((name.clone(), value)),
                }
            })
            .collect();
        let mut source = match &method {
            MethodSpec::Fixed(m) => m.as_str().to_owned(),
            MethodSpec::Var(v) => format!("{{{v}}}"),
        };
        source.push(' ');
        for part in &path {
            source.push('/');
            match part {
                Part::Rest(v) => source.push_str(&format!("{{+{v}}}")),
                Part::Segment(pieces) => {
                    for piece in pieces {
                        match piece {
                            Piece::Literal(l) => source.push_str(l),
                            Piece::Var(v) => source.push_str(&format!("{{{v}}}")),
                        }
                    }
                }
            }
        }
        for (i, (name, value)) in query.iter().enumerate() {
            source.push(if i == 0 { '?' } else { '&' });
            let value = match value {
                QueryValue::Literal(l) => l.clone(),
                QueryValue::Var(v) => format!("{{{v}}}"),
                QueryValue::Explode(v) => format!("{{{v}*}}"),
            };
            source.push_str(&format!("{name}={value}"));
        }
        RequestTemplate {
            method,
            source,
            path,
            query,
        }
    }

    /// The path with its placeholders, as the swagger writes it: `/repos/{owner}/{repo}`.
    pub fn path_pattern(&self) -> String {
        let mut s = String::new();
        for part in &self.path {
            s.push('/');
            match part {
                Part::Segment(pieces) => {
                    for piece in pieces {
                        match piece {
                            Piece::Literal(l) => s.push_str(l),
                            Piece::Var(v) => {
                                s.push('{');
                                s.push_str(v);
                                s.push('}');
                            }
                        }
                    }
                }
                Part::Rest(v) => {
                    s.push('{');
                    s.push_str(v);
                    s.push('}');
                }
            }
        }
        s
    }

    /// Whether `path` (encoded, as planned) is an instance of this template with each `{var}`
    /// inside exactly one non-empty segment that is not `.` or `..`, and a `{+var}` in one or more.
    pub fn matches_path(&self, path: &str) -> bool {
        let Some(rest) = path.strip_prefix('/') else {
            return false;
        };
        let segments: Vec<&str> = rest.split('/').collect();
        let value_ok = |s: &str| !s.is_empty() && s != "." && s != "..";
        for (i, part) in self.path.iter().enumerate() {
            match part {
                Part::Segment(pieces) => {
                    if !segments
                        .get(i)
                        .is_some_and(|s| value_ok(s) && pieces_match(pieces, s))
                    {
                        return false;
                    }
                }
                Part::Rest(_) => {
                    return segments.len() > i && segments[i..].iter().all(|s| value_ok(s));
                }
            }
        }
        self.path.len() == segments.len()
    }

    /// The variables that name the repository the request is about, as (owner, name): those
    /// the forge's own path rules (`forge::allow::target`) find in the owner's and the name's
    /// places, each a whole segment. The allow-list reads an endpoint's repository from them.
    pub fn repository_vars(&self) -> Option<(&str, &str)> {
        let var = |text: &str| {
            self.path_vars()
                .find(|v| text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) == Some(*v))
        };
        match crate::forge::allow::target(&self.path_pattern()) {
            crate::forge::allow::Target::Repo(owner, name) => Some((var(&owner)?, var(&name)?)),
            _ => None,
        }
    }

    /// Variables of the path, in order.
    pub fn path_vars(&self) -> impl Iterator<Item = &str> {
        self.path.iter().flat_map(|p| match p {
            Part::Segment(pieces) => pieces
                .iter()
                .filter_map(|piece| match piece {
                    Piece::Var(v) => Some(v.as_str()),
                    Piece::Literal(_) => None,
                })
                .collect::<Vec<_>>(),
            Part::Rest(v) => vec![v.as_str()],
        })
    }

    /// Query pairs as (upstream name, variable) for those bound to a variable.
    pub fn query_vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.query.iter().filter_map(|(n, v)| match v {
            QueryValue::Var(var) | QueryValue::Explode(var) => Some((n.as_str(), var.as_str())),
            QueryValue::Literal(_) => None,
        })
    }

    /// Every upstream query name, literal or bound.
    pub fn query_names(&self) -> impl Iterator<Item = &str> {
        self.query.iter().map(|(n, _)| n.as_str())
    }

    /// Every placeholder: the method's, path variables, then query variables.
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        let method = match &self.method {
            MethodSpec::Var(v) => Some(v.as_str()),
            MethodSpec::Fixed(_) => None,
        };
        method
            .into_iter()
            .chain(self.path_vars())
            .chain(self.query_vars().map(|(_, v)| v))
    }

    /// Expands the template with `args`; see the module documentation.
    pub fn expand(&self, args: &Args) -> Result<Request, ExpandError> {
        let method = match &self.method {
            MethodSpec::Fixed(m) => *m,
            MethodSpec::Var(name) => {
                let text = text_of(args, name).ok_or_else(|| ExpandError::Missing(name.clone()))?;
                Method::parse(&text.to_ascii_uppercase())
                    .ok_or(ExpandError::Method(name.clone()))?
            }
        };
        let mut path = String::new();
        for part in &self.path {
            path.push('/');
            match part {
                Part::Segment(pieces) => {
                    for piece in pieces {
                        match piece {
                            Piece::Literal(l) => path.push_str(l),
                            Piece::Var(name) => {
                                let value = text_of(args, name)
                                    .ok_or_else(|| ExpandError::Missing(name.clone()))?;
                                check_segment(name, &value)?;
                                path.push_str(&encode_component(&value));
                            }
                        }
                    }
                }
                Part::Rest(name) => {
                    let value =
                        text_of(args, name).ok_or_else(|| ExpandError::Missing(name.clone()))?;
                    // The template writes the slash before a rest: one the value begins with
                    // too is the same path, not an empty segment.
                    let value = value.strip_prefix('/').unwrap_or(&value);
                    for (i, segment) in value.split('/').enumerate() {
                        check_segment(name, segment)?;
                        if i > 0 {
                            path.push('/');
                        }
                        path.push_str(&encode_component(segment));
                    }
                }
            }
        }
        let mut query = Vec::with_capacity(self.query.len());
        for (name, value) in &self.query {
            match value {
                QueryValue::Literal(l) => query.push((name.clone(), l.clone())),
                QueryValue::Var(var) => {
                    if let Some(v) = text_of(args, var) {
                        query.push((name.clone(), v));
                    }
                }
                QueryValue::Explode(var) => match args.get(var) {
                    Some(Value::Array(items)) => {
                        query.extend(items.iter().map(|v| (name.clone(), scalar_text(v))))
                    }
                    _ => {
                        if let Some(v) = text_of(args, var) {
                            query.push((name.clone(), v));
                        }
                    }
                },
            }
        }
        Ok(Request {
            method,
            path,
            query,
            body: None,
            accept: Accept::Json,
            sudo: None,
            free_path: false,
            reads: None,
        })
    }
}

/// Whether `segment` is the pieces with each placeholder standing for non-empty text.
fn pieces_match(pieces: &[Piece], segment: &str) -> bool {
    match pieces.split_first() {
        None => segment.is_empty(),
        Some((Piece::Literal(l), rest)) => segment
            .strip_prefix(l.as_str())
            .is_some_and(|s| pieces_match(rest, s)),
        Some((Piece::Var(_), rest)) => (1..=segment.len())
            .filter(|&i| segment.is_char_boundary(i))
            .any(|i| pieces_match(rest, &segment[i..])),
    }
}

fn parse_part(segment: &str) -> Result<Part, RequestSyntaxError> {
    let bad = || RequestSyntaxError::Segment(segment.to_owned());
    if segment.is_empty() || segment == "." || segment == ".." || segment.contains(['?', '#']) {
        return Err(bad());
    }
    if let Some(name) = segment.strip_prefix("{+").and_then(|s| s.strip_suffix('}')) {
        return if is_name(name) {
            Ok(Part::Rest(name.to_owned()))
        } else {
            Err(bad())
        };
    }
    let mut pieces = Vec::new();
    let mut rest = segment;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => {
                let end = rest.find('}').ok_or_else(bad)?;
                let name = &rest[1..end];
                // Two placeholders side by side could not be told apart.
                if !is_name(name) || matches!(pieces.last(), Some(Piece::Var(_))) {
                    return Err(bad());
                }
                pieces.push(Piece::Var(name.to_owned()));
                rest = &rest[end + 1..];
            }
            found => {
                let end = found.unwrap_or(rest.len());
                let literal = &rest[..end];
                if literal.contains('}') {
                    return Err(bad());
                }
                pieces.push(Piece::Literal(literal.to_owned()));
                rest = &rest[end..];
            }
        }
    }
    Ok(Part::Segment(pieces))
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_segment(name: &str, value: &str) -> Result<(), ExpandError> {
    let why = match value {
        "" => "be empty",
        "." | ".." => "be `.` or `..`",
        // NUL, newlines and the like name no forge object, and a forge or proxy that decodes
        // them may read them as something else.
        _ if value.chars().any(char::is_control) => "hold a control character",
        _ => return Ok(()),
    };
    Err(ExpandError::Segment {
        name: name.to_owned(),
        why,
    })
}

/// One array element or map value as query text.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value as request text: strings as they are, numbers and booleans printed, arrays joined
/// with commas (Forgejo's convention for list filters); `None` for null or absent.
pub fn text_of(args: &Args, name: &str) -> Option<String> {
    match args.get(name)? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => Some(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(","),
        ),
        other => Some(other.to_string()),
    }
}

/// `{name}` in `template` replaced by each argument's request text.
pub fn substitute(template: &str, args: &Args) -> String {
    let mut out = template.to_owned();
    for name in args.keys() {
        let key = format!("{{{name}}}");
        if out.contains(&key) {
            out = out.replace(&key, &text_of(args, name).unwrap_or_default());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(v: Value) -> Args {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_repository_variables_are_where_the_forge_puts_the_repository() {
        let vars = |line: &str| {
            RequestTemplate::parse(line)
                .unwrap()
                .repository_vars()
                .map(|(o, n)| (o.to_owned(), n.to_owned()))
        };
        assert_eq!(
            vars("GET /repos/{who}/{what}/issues/{index}"),
            Some(("who".into(), "what".into()))
        );
        assert_eq!(
            vars("GET /user/starred/{owner}/{repo}"),
            Some(("owner".into(), "repo".into()))
        );
        assert_eq!(vars("GET /users/{owner}"), None);
        assert_eq!(vars("GET /repos/search?q={q}"), None);
        // A segment that is not one whole variable names no repository variable.
        assert_eq!(vars("GET /repos/{owner}/x{repo}/issues"), None);
    }

    #[test]
    fn a_renamed_request_is_the_one_its_line_would_parse_to() {
        let t = RequestTemplate::parse(
            "GET /repos/{owner}/{repo}/contents/{+path}?ref={ref}&type=issues&labels={labels*}&q={query}",
        )
        .unwrap();
        let renamed = t.renamed(
            |v| match v {
                "path" => "filepath".to_owned(),
                "labels" => "label".to_owned(),
                other => other.to_owned(),
            },
            |v| v != "query",
        );
        assert_eq!(
            renamed.as_str(),
            "GET /repos/{owner}/{repo}/contents/{+filepath}?ref={ref}&type=issues&labels={label*}"
        );
        assert_eq!(renamed, RequestTemplate::parse(renamed.as_str()).unwrap());
        // Nothing renamed and every pair kept: the same request.
        assert_eq!(t.renamed(str::to_owned, |_| true), t);
    }

    #[test]
    fn parses_and_expands() {
        let t = RequestTemplate::parse(
            "GET /repos/{owner}/{repo}/issues?type=issues&state={state}&labels={labels}",
        )
        .unwrap();
        assert_eq!(t.path_pattern(), "/repos/{owner}/{repo}/issues");
        assert_eq!(
            t.placeholders().collect::<Vec<_>>(),
            ["owner", "repo", "state", "labels"]
        );
        let r = t
            .expand(&args(
                json!({"owner": "a b", "repo": "r", "labels": ["x", "y"]}),
            ))
            .unwrap();
        assert_eq!(r.path, "/repos/a%20b/r/issues");
        assert_eq!(
            r.query,
            [
                ("type".to_string(), "issues".to_string()),
                ("labels".into(), "x,y".into())
            ]
        );
    }

    #[test]
    fn one_value_is_one_segment() {
        let t = RequestTemplate::parse("GET /repos/{owner}/{repo}/labels/{id}").unwrap();
        let r = t
            .expand(&args(json!({"owner": "../..", "repo": "a/b", "id": 5})))
            .unwrap();
        assert_eq!(r.path, "/repos/..%2F../a%2Fb/labels/5");
        for bad in ["..", ".", ""] {
            let e = t
                .expand(&args(json!({"owner": bad, "repo": "r", "id": 1})))
                .unwrap_err();
            assert!(matches!(e, ExpandError::Segment { .. }), "{bad:?}");
        }
        assert_eq!(
            t.expand(&args(json!({"owner": "o", "repo": "r"})))
                .unwrap_err(),
            ExpandError::Missing("id".into())
        );
    }

    #[test]
    fn rest_spans_segments_each_checked() {
        let t = RequestTemplate::parse("GET /repos/{owner}/{repo}/raw/{+path}").unwrap();
        let r = t
            .expand(&args(
                json!({"owner": "o", "repo": "r", "path": "docs/a b.md"}),
            ))
            .unwrap();
        assert_eq!(r.path, "/repos/o/r/raw/docs/a%20b.md");
        // A rest written with the slash the template already has is the same path.
        let leading = t
            .expand(&args(json!({"owner": "o", "repo": "r", "path": "/docs/x"})))
            .unwrap();
        assert_eq!(leading.path, "/repos/o/r/raw/docs/x");
        for bad in ["docs/../x", "docs//x", "//x", "x/"] {
            assert!(
                t.expand(&args(json!({"owner": "o", "repo": "r", "path": bad})))
                    .is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn placeholders_may_share_a_segment_with_text() {
        let t =
            RequestTemplate::parse("GET /repos/{owner}/{repo}/git/commits/{sha}.{kind}").unwrap();
        assert_eq!(
            t.path_pattern(),
            "/repos/{owner}/{repo}/git/commits/{sha}.{kind}"
        );
        let r = t
            .expand(&args(
                json!({"owner": "o", "repo": "r", "sha": "abc", "kind": "diff"}),
            ))
            .unwrap();
        assert_eq!(r.path, "/repos/o/r/git/commits/abc.diff");
        assert!(t.matches_path("/repos/o/r/git/commits/abc.diff"));
        assert!(!t.matches_path("/repos/o/r/git/commits/.diff"));
        assert_eq!(
            RequestTemplate::parse("GET /a/{x}{y}").unwrap_err(),
            RequestSyntaxError::Segment("{x}{y}".into())
        );
    }

    #[test]
    fn exploded_query_values_repeat_the_name() {
        let t = RequestTemplate::parse("GET /notifications?status-types={types*}&labels={labels}")
            .unwrap();
        let r = t
            .expand(&args(
                json!({"types": ["unread", "pinned"], "labels": ["a", "b"]}),
            ))
            .unwrap();
        let pairs: Vec<(&str, &str)> = r
            .query
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("status-types", "unread"),
                ("status-types", "pinned"),
                ("labels", "a,b")
            ]
        );
    }

    #[test]
    fn the_method_may_be_an_argument() {
        let t = RequestTemplate::parse("{method} /{+path}").unwrap();
        assert_eq!(t.placeholders().collect::<Vec<_>>(), ["method", "path"]);
        let r = t
            .expand(&args(json!({"method": "patch", "path": "repos/o/r"})))
            .unwrap();
        assert_eq!((r.method, r.path.as_str()), (Method::Patch, "/repos/o/r"));
        assert_eq!(
            t.expand(&args(json!({"method": "TRACE", "path": "x"})))
                .unwrap_err(),
            ExpandError::Method("method".into())
        );
    }

    #[test]
    fn paths_match_their_templates() {
        let t = RequestTemplate::parse("GET /repos/{owner}/{repo}/raw/{+path}").unwrap();
        assert!(t.matches_path("/repos/o/r/raw/a/b%2Fc.md"));
        for bad in [
            "/repos/o/r/raw",
            "/repos/o/r/raw/a//b",
            "/repos/o/r/raw/..",
            "/repos/o/x/y/raw/a",
            "repos/o/r/raw/a",
        ] {
            assert!(!t.matches_path(bad), "{bad}");
        }
        let one = RequestTemplate::parse("GET /repos/{owner}/{repo}").unwrap();
        assert!(one.matches_path("/repos/a%2Fb/r"));
        assert!(!one.matches_path("/repos/a/b/r"));
    }

    #[test]
    fn rejects_malformed_lines() {
        let cases: &[(&str, RequestSyntaxError)] = &[
            ("GET", RequestSyntaxError::Shape),
            ("FETCH /x", RequestSyntaxError::Method("FETCH".into())),
            ("GET x", RequestSyntaxError::Slash),
            ("GET /a//b", RequestSyntaxError::Segment("".into())),
            ("GET /a/../b", RequestSyntaxError::Segment("..".into())),
            ("GET /a/x{id", RequestSyntaxError::Segment("x{id".into())),
            ("GET /a/{x-y}", RequestSyntaxError::Segment("{x-y}".into())),
            ("GET /a/{+p}/b", RequestSyntaxError::RestNotLast("p".into())),
            ("GET /a?b", RequestSyntaxError::Query("b".into())),
            ("GET /a?b={c", RequestSyntaxError::Query("b={c".into())),
        ];
        for (line, expected) in cases {
            assert_eq!(
                RequestTemplate::parse(line).as_ref().err(),
                Some(expected),
                "{line}"
            );
        }
    }
}
