//! Projections: the small, flat JSON an agent reasons with, built from the forge's answer.
//!
//! A projection is an ordered map of output field → expression, compiled once. Expressions:
//!
//! | form | value |
//! |---|---|
//! | `$.a.b`, `$.labels[*].name` | RFC 9535 JSONPath on the primary answer; a path with a wildcard, descendant, filter or slice gives a list, any other path one value (`null` when absent) |
//! | `$name.a` | the same on the answer of the `with:` request called `name` |
//! | `{var}` | the value of a URI parameter or tool argument |
//! | `@total_count` | the primary answer's `X-Total-Count` (`null` when not sent) |
//! | `@answered` | which alternative of the primary request answered (its label; see `fallback`) |
//! | anything else | the string itself; YAML numbers, booleans and `null` stay what they are |
//! | a map | a nested object, projected the same way |
//!
//! Any expression but a literal may be followed by pipes, applied left to right:
//! `| first_line`, `| excerpt(N)` (at most N characters, cut on a character boundary, `…`
//! included), `| default(X)` (X when the value is null or empty; X is a quoted string, a
//! number, `true`/`false` or a `{var}`), `| count` (length of a list).
//!
//! ```
//! use forgelens::engine::project::{Context, Projection};
//! let p = Projection::compile_str(&[("title", "$.title"), ("labels", "$.labels[*].name"),
//!                                    ("subject", "$.body | first_line")], &[]).unwrap();
//! let doc = serde_json::json!({"title": "T", "labels": [{"name": "bug"}], "body": "one\ntwo"});
//! let out = p.apply(&Context::of(&doc));
//! assert_eq!(out, serde_json::json!({"title": "T", "labels": ["bug"], "subject": "one"}));
//! ```

use std::borrow::Cow;

use serde_json::{Map, Value};
use serde_json_path::JsonPath;
use thiserror::Error;

use super::policy::marks::{self, Mark, MarkError, Shown};
use super::request::Args;
use super::untrusted::neutralize;
use crate::forge::subset::{Step as Reading, Subset};

mod shape;

pub use shape::{FieldType, ShapeError, Untyped};

/// Everything an expression may read.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The primary answer.
    pub primary: &'a Value,
    /// Each `with:` answer, in declaration order.
    pub with: &'a [Value],
    pub args: &'a Args,
    pub meta: Meta<'a>,
    /// The forge's host, for `| untrusted` (images it serves stay images).
    pub instance: &'a str,
}

/// Facts about the primary answer that are not in its body.
#[derive(Debug, Clone, Copy, Default)]
pub struct Meta<'a> {
    pub total_count: Option<u64>,
    pub answered: Option<&'a str>,
}

static NO_ARGS: std::sync::LazyLock<Args> = std::sync::LazyLock::new(Args::new);

impl<'a> Context<'a> {
    /// A context with one source and nothing else.
    pub fn of(doc: &'a Value) -> Context<'a> {
        Context {
            primary: doc,
            with: &[],
            args: &NO_ARGS,
            meta: Meta::default(),
            instance: "",
        }
    }
}

impl<'a> Context<'a> {
    /// The context of one list item: the item is the primary document.
    pub fn item(item: &'a Value, args: &'a Args) -> Context<'a> {
        Context {
            primary: item,
            with: &[],
            args,
            meta: Meta::default(),
            instance: "",
        }
    }

    /// The same context for the forge at `instance` (its host).
    pub fn at(self, instance: &'a str) -> Context<'a> {
        Context { instance, ..self }
    }
}

/// A compiled projection.
#[derive(Debug, Clone)]
pub struct Projection {
    fields: Vec<(String, Field)>,
}

/// One compiled output field.
#[derive(Debug, Clone)]
pub enum Field {
    Expr(Expr),
    Literal(Value),
    Object(Vec<(String, Field)>),
    /// The first alternative that is neither null nor an empty string.
    FirstOf(Vec<Field>),
}

/// One compiled expression: a base value and its pipes.
#[derive(Debug, Clone)]
pub struct Expr {
    base: Base,
    pipes: Vec<Pipe>,
}

#[derive(Debug, Clone)]
enum Base {
    Query {
        source: usize,
        path: Locator,
        many: bool,
    },
    Arg(String),
    TotalCount,
    Answered,
}

/// How a query finds its value. Most manifest paths are a chain of names and indices
/// (`$.user.login`, `$.labels[0]`); those are walked directly, which is several times faster than
/// running the general JSONPath engine, and give the same answer (a property test holds them to it).
#[derive(Debug, Clone)]
enum Locator {
    Steps(Vec<Step>),
    Path(Box<JsonPath>),
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Name(String),
    Index(usize),
    /// `[*]` or `.*`: every element of an array, every member value of an object.
    Each,
}

impl Locator {
    /// The walker for a simple path, JSONPath for any other: parsing JSONPath was most of what
    /// compiling the manifests' projections cost, and nearly every path is simple.
    fn parse(path_rest: &str) -> Result<Locator, serde_json_path::ParseError> {
        match simple_steps(path_rest) {
            Some(steps) => Ok(Locator::Steps(steps)),
            None => JsonPath::parse(&format!("${path_rest}")).map(|p| Locator::Path(Box::new(p))),
        }
    }

    /// The first node the path selects.
    fn first<'a>(&self, doc: &'a Value) -> Option<&'a Value> {
        match self {
            Locator::Steps(steps) if !steps.contains(&Step::Each) => {
                steps.iter().try_fold(doc, |node, step| match step {
                    Step::Name(name) => member(node, name),
                    Step::Index(i) => node.as_array()?.get(*i),
                    Step::Each => None,
                })
            }
            Locator::Steps(_) => self.all(doc).first().copied(),
            Locator::Path(path) => path.query(doc).first(),
        }
    }

    /// Every node the path selects, in document order.
    fn all<'a>(&self, doc: &'a Value) -> Vec<&'a Value> {
        match self {
            Locator::Steps(steps) => {
                let mut nodes = vec![doc];
                for step in steps {
                    nodes = match step {
                        Step::Name(name) => {
                            nodes.into_iter().filter_map(|n| member(n, name)).collect()
                        }
                        Step::Index(i) => nodes
                            .into_iter()
                            .filter_map(|n| n.as_array()?.get(*i))
                            .collect(),
                        Step::Each => nodes.into_iter().flat_map(children).collect(),
                    };
                }
                nodes
            }
            Locator::Path(path) => path.query(doc).all(),
        }
    }
}

impl Locator {
    /// Adds `what`, read at every node the path selects, to `subset`; a path that is not
    /// simple reads the whole value.
    fn reads(&self, subset: &mut Subset, what: &Subset) {
        match self {
            Locator::Steps(steps) => add_steps(subset, &mut Vec::new(), steps, what),
            Locator::Path(_) => *subset = Subset::Whole,
        }
    }
}

/// Adds `what`, read at every node `path` selects (`[*]`, `.*` and an index selecting among
/// elements and members alike), to `subset`.
pub(crate) fn read_at(subset: &mut Subset, path: &JsonPath, what: &Subset) {
    // A path that compiles as simple steps prints as them (`$.a.b`); any other reads it all.
    let text = path.to_string();
    match text.strip_prefix('$').and_then(simple_steps) {
        Some(steps) => add_steps(subset, &mut Vec::new(), &steps, what),
        None => *subset = Subset::Whole,
    }
}

fn add_steps<'s>(
    subset: &mut Subset,
    done: &mut Vec<Reading<'s>>,
    rest: &'s [Step],
    what: &Subset,
) {
    let Some((step, rest)) = rest.split_first() else {
        subset.add(done, what);
        return;
    };
    // `Each` selects array elements and object members both: each is read as either.
    let choices: &[Reading] = match step {
        Step::Name(name) => &[Reading::Member(name)],
        Step::Index(_) => &[Reading::Element],
        Step::Each => &[Reading::Element, Reading::EveryMember],
    };
    for choice in choices {
        done.push(*choice);
        add_steps(subset, done, rest, what);
        done.pop();
    }
}

/// The member `name` of an object. The objects projections read are small (an answer keeps only
/// what is read of it): comparing a few names costs less than hashing one.
fn member<'v>(node: &'v Value, name: &str) -> Option<&'v Value> {
    let members = node.as_object()?;
    if members.len() > 16 {
        return members.get(name);
    }
    members.iter().find_map(|(k, v)| (k == name).then_some(v))
}

/// The direct children of a node: array elements or object member values.
fn children(node: &Value) -> Box<dyn Iterator<Item = &Value> + '_> {
    match node {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(members) => Box::new(members.values()),
        _ => Box::new(std::iter::empty()),
    }
}

/// The steps of a path made only of `.name`, `[index]`, `[*]` and `.*` segments; `None` for
/// anything else.
fn simple_steps(path_rest: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = path_rest;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("[*]").or_else(|| rest.strip_prefix(".*")) {
            steps.push(Step::Each);
            rest = after;
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            steps.push(Step::Name(name.to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let digits = &after[..end];
            // A leading zero is not a valid JSONPath index; leave it to the parser's verdict.
            if digits.is_empty()
                || !digits.bytes().all(|b| b.is_ascii_digit())
                || (digits.len() > 1 && digits.starts_with('0'))
            {
                return None;
            }
            steps.push(Step::Index(digits.parse().ok()?));
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

#[derive(Debug, Clone)]
enum Pipe {
    FirstLine,
    Excerpt(usize),
    Default(Operand),
    Count,
    Then(Operand),
    Present,
    Base64,
    StripCredentials,
    /// Text a forge user wrote: neutralized, and named (with the field holding its author) in
    /// what the answer says about itself.
    Untrusted(Mark),
}

#[derive(Debug, Clone)]
enum Operand {
    Literal(Value),
    Arg(String),
}

/// Why an expression does not compile.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ExprError {
    #[error("JSONPath `{path}` does not compile: {message}")]
    JsonPath { path: String, message: String },
    #[error("`${0}` names no source; declared: the primary answer (`$`){1}")]
    Source(String, String),
    #[error(
        "unknown pipe `{0}`; known: first_line, excerpt(N), default(X), then(X), count, present, base64, strip_credentials, untrusted(author)"
    )]
    Pipe(String),
    #[error("pipe `{0}` needs {1}")]
    PipeArgument(String, &'static str),
    #[error(transparent)]
    Mark(MarkError),
    #[error("unknown meta field `@{0}`; known: @total_count, @answered")]
    Meta(String),
    #[error("`{{{0}}}` is not a variable reference")]
    Arg(String),
}

impl Expr {
    /// Compiles `text`; `sources` are the names of the `with:` requests (`$name`).
    /// A plain string compiles to a literal ([`Expr::literal`] tells).
    pub fn compile(text: &str, sources: &[&str]) -> Result<Field, ExprError> {
        compile_expr(text, sources)
    }

    pub fn eval(&self, ctx: &Context) -> Value {
        let mut value: Cow<Value> = match &self.base {
            Base::Query { source, path, many } => {
                let doc = match source {
                    0 => ctx.primary,
                    i => match ctx.with.get(i - 1) {
                        Some(doc) => doc,
                        None => return Value::Null,
                    },
                };
                if *many {
                    Cow::Owned(Value::Array(path.all(doc).into_iter().cloned().collect()))
                } else {
                    path.first(doc)
                        .map_or(Cow::Owned(Value::Null), Cow::Borrowed)
                }
            }
            Base::Arg(name) => ctx
                .args
                .get(name)
                .map_or(Cow::Owned(Value::Null), Cow::Borrowed),
            Base::TotalCount => Cow::Owned(ctx.meta.total_count.map_or(Value::Null, Value::from)),
            Base::Answered => Cow::Owned(ctx.meta.answered.map_or(Value::Null, Value::from)),
        };
        // Pipes read the value where it lies; only what they produce is copied.
        for pipe in &self.pipes {
            value = apply_pipe(pipe, value, ctx);
        }
        value.into_owned()
    }

    /// The variables (`{var}`) the expression reads.
    pub fn args(&self) -> impl Iterator<Item = &str> {
        let base = match &self.base {
            Base::Arg(name) => Some(name.as_str()),
            _ => None,
        };
        base.into_iter()
            .chain(self.pipes.iter().filter_map(|p| match p {
                Pipe::Default(Operand::Arg(name)) | Pipe::Then(Operand::Arg(name)) => {
                    Some(name.as_str())
                }
                _ => None,
            }))
    }
}

impl Field {
    pub fn eval(&self, ctx: &Context) -> Value {
        match self {
            Field::Literal(v) => v.clone(),
            Field::Object(fields) => Value::Object(apply_fields(fields, ctx)),
            Field::Expr(e) => e.eval(ctx),
            Field::FirstOf(alternatives) => alternatives
                .iter()
                .map(|f| f.eval(ctx))
                .find(|v| !is_empty(v))
                .unwrap_or(Value::Null),
        }
    }

    fn collect_marks(&self, path: &str, out: &mut Vec<Mark>) {
        match self {
            Field::Literal(_) => {}
            Field::Object(fields) => {
                for (name, f) in fields {
                    f.collect_marks(&format!("{path}.{name}"), out);
                }
            }
            Field::FirstOf(alternatives) => {
                alternatives.iter().for_each(|f| f.collect_marks(path, out))
            }
            Field::Expr(e) => {
                for pipe in &e.pipes {
                    if let Pipe::Untrusted(mark) = pipe {
                        out.push(Mark {
                            field: path.to_owned(),
                            ..mark.clone()
                        });
                    }
                }
            }
        }
    }

    /// Adds what the field reads of each source (`sources[0]` the primary answer, then each
    /// `with:` answer) to `sources`.
    pub(crate) fn reads(&self, sources: &mut [Subset]) {
        match self {
            Field::Literal(_) => {}
            Field::Object(fields) => fields.iter().for_each(|(_, f)| f.reads(sources)),
            Field::FirstOf(alternatives) => alternatives.iter().for_each(|f| f.reads(sources)),
            Field::Expr(Expr {
                base: Base::Query { source, path, .. },
                ..
            }) => {
                if let Some(subset) = sources.get_mut(*source) {
                    path.reads(subset, &Subset::Whole);
                }
            }
            Field::Expr(_) => {}
        }
    }

    fn collect_args<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Field::Literal(_) => {}
            Field::Object(fields) => fields.iter().for_each(|(_, f)| f.collect_args(out)),
            Field::FirstOf(alternatives) => alternatives.iter().for_each(|f| f.collect_args(out)),
            Field::Expr(e) => out.extend(e.args()),
        }
    }
}

impl Projection {
    pub fn new(fields: Vec<(String, Field)>) -> Projection {
        Projection { fields }
    }

    /// Compiles flat `(field, expression)` pairs, stopping at the first error; for tests and docs.
    pub fn compile_str(fields: &[(&str, &str)], sources: &[&str]) -> Result<Projection, ExprError> {
        let fields = fields
            .iter()
            .map(|(k, v)| Ok(((*k).to_owned(), compile_expr(v, sources)?)))
            .collect::<Result<Vec<_>, ExprError>>()?;
        Ok(Projection { fields })
    }

    /// The identity projection: the whole primary answer.
    pub fn identity() -> Projection {
        Projection { fields: Vec::new() }
    }

    pub fn is_identity(&self) -> bool {
        self.fields.is_empty()
    }

    /// Adds what the projection reads of each source to `sources` (see [`Field::reads`]); the
    /// identity reads the whole primary answer.
    pub(crate) fn reads(&self, sources: &mut [Subset]) {
        match (self.is_identity(), sources.first_mut()) {
            (true, Some(primary)) => *primary = Subset::Whole,
            _ => self.fields.iter().for_each(|(_, f)| f.reads(sources)),
        }
    }

    /// Builds the output object (or, for the identity projection, a copy of the answer).
    pub fn apply(&self, ctx: &Context) -> Value {
        if self.fields.is_empty() {
            return ctx.primary.clone();
        }
        Value::Object(apply_fields(&self.fields, ctx))
    }

    /// The top-level output field names.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(k, _)| k.as_str())
    }

    /// The projection of only the top-level fields `names`, in that order (all when empty);
    /// the first name it lacks is the error.
    pub fn pick<'n>(&self, names: &[&'n str]) -> Result<Projection, &'n str> {
        if names.is_empty() {
            return Ok(self.clone());
        }
        let fields = names
            .iter()
            .map(|name| {
                self.fields
                    .iter()
                    .find(|(n, _)| n == name)
                    .cloned()
                    .ok_or(*name)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Projection { fields })
    }

    /// This projection with `more`'s fields: one of a name this has takes its place, the
    /// others follow.
    pub fn overridden_by(mut self, more: Projection) -> Projection {
        for (name, field) in more.fields {
            match self.fields.iter_mut().find(|(n, _)| *n == name) {
                Some((_, existing)) => *existing = field,
                None => self.fields.push((name, field)),
            }
        }
        self
    }

    /// The dotted path (`head.ref`) of field `name` inside the field at `prefix` (`""` at the top):
    /// how findings and [`Projection::has`] name a nested field.
    pub fn path_of(prefix: &str, name: &str) -> String {
        if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}.{name}")
        }
    }

    /// Whether the projection builds the field at dotted `path` (`head.ref`).
    pub fn has(&self, path: &str) -> bool {
        let mut fields = &self.fields;
        let mut parts = path.split('.').peekable();
        while let Some(part) = parts.next() {
            match fields.iter().find(|(n, _)| n == part) {
                Some((_, Field::Object(inner))) if parts.peek().is_some() => fields = inner,
                Some(_) => return parts.peek().is_none(),
                None => return false,
            }
        }
        false
    }

    /// The fields marked `| untrusted`, dotted from the top (`title`, `head.title`).
    pub fn marks(&self) -> Vec<Mark> {
        let mut out = Vec::new();
        for (name, field) in &self.fields {
            field.collect_marks(name, &mut out);
        }
        out.dedup_by(|a, b| a.field == b.field);
        out
    }

    /// The variables (`{var}`) any field reads.
    pub fn args(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for (_, field) in &self.fields {
            field.collect_args(&mut out);
        }
        out
    }
}

fn compile_expr(text: &str, sources: &[&str]) -> Result<Field, ExprError> {
    let mut parts = text.split(" | ");
    let head = parts.next().unwrap_or("").trim();
    let pipes = parts.map(compile_pipe).collect::<Result<Vec<_>, _>>()?;
    let base = if let Some(rest) = head.strip_prefix('$') {
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, path_rest) = rest.split_at(name_len);
        let source = if name.is_empty() {
            0
        } else {
            match sources.iter().position(|s| *s == name) {
                Some(i) => i + 1,
                None => {
                    let declared: String = sources.iter().map(|s| format!(", `${s}`")).collect();
                    return Err(ExprError::Source(name.to_owned(), declared));
                }
            }
        };
        let path = Locator::parse(path_rest).map_err(|e| ExprError::JsonPath {
            path: head.to_owned(),
            message: e.message().to_owned(),
        })?;
        Base::Query {
            source,
            path,
            many: yields_list(path_rest),
        }
    } else if let Some(var) = head.strip_prefix('{').and_then(|h| h.strip_suffix('}')) {
        if !is_name(var) {
            return Err(ExprError::Arg(var.to_owned()));
        }
        Base::Arg(var.to_owned())
    } else if let Some(meta) = head.strip_prefix('@') {
        match meta {
            "total_count" => Base::TotalCount,
            "answered" => Base::Answered,
            other => return Err(ExprError::Meta(other.to_owned())),
        }
    } else if pipes.is_empty() {
        return Ok(Field::Literal(Value::String(text.to_owned())));
    } else {
        return Err(ExprError::Pipe(format!(
            "{head} | …: pipes apply to `$…`, `{{var}}` or `@…`"
        )));
    };
    Ok(Field::Expr(Expr { base, pipes }))
}

fn compile_pipe(text: &str) -> Result<Pipe, ExprError> {
    let text = text.trim();
    let (name, arg) = match text.split_once('(') {
        Some((name, rest)) => match rest.strip_suffix(')') {
            Some(arg) => (name.trim(), Some(arg.trim())),
            None => return Err(ExprError::Pipe(text.to_owned())),
        },
        None => (text, None),
    };
    match (name, arg) {
        ("first_line", None) => Ok(Pipe::FirstLine),
        ("count", None) => Ok(Pipe::Count),
        ("excerpt", Some(n)) => match n.parse::<usize>() {
            Ok(n) if n > 0 => Ok(Pipe::Excerpt(n)),
            _ => Err(ExprError::PipeArgument(
                "excerpt".into(),
                "a positive number of characters",
            )),
        },
        ("excerpt", None) => Err(ExprError::PipeArgument(
            "excerpt".into(),
            "a positive number of characters",
        )),
        ("default", Some(arg)) => Ok(Pipe::Default(operand(arg)?)),
        ("then", Some(arg)) => Ok(Pipe::Then(operand(arg)?)),
        ("default" | "then", None) => Err(ExprError::PipeArgument(name.into(), "a value")),
        ("present", None) => Ok(Pipe::Present),
        ("base64", None) => Ok(Pipe::Base64),
        ("strip_credentials", None) => Ok(Pipe::StripCredentials),
        ("untrusted", arg) => {
            let words = marks::parse(arg.unwrap_or(""), false).map_err(ExprError::Mark)?;
            let Shown::As(rendering) = words.shown else {
                return Err(ExprError::PipeArgument(
                    "untrusted".into(),
                    "`plain` or `markdown`: a field has no file name to go by",
                ));
            };
            Ok(Pipe::Untrusted(Mark {
                field: String::new(),
                writer: words.writer,
                rendering,
            }))
        }
        _ => Err(ExprError::Pipe(text.to_owned())),
    }
}

fn operand(arg: &str) -> Result<Operand, ExprError> {
    if let Some(var) = arg.strip_prefix('{').and_then(|a| a.strip_suffix('}')) {
        return if is_name(var) {
            Ok(Operand::Arg(var.to_owned()))
        } else {
            Err(ExprError::Arg(var.to_owned()))
        };
    }
    for quote in ['\'', '"'] {
        if let Some(s) = arg.strip_prefix(quote).and_then(|a| a.strip_suffix(quote)) {
            return Ok(Operand::Literal(Value::String(s.to_owned())));
        }
    }
    serde_json::from_str::<Value>(arg)
        .map(Operand::Literal)
        .map_err(|_| {
            ExprError::PipeArgument(
                "default".into(),
                "a quoted string, a number, true/false/null or {var}",
            )
        })
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether a JSONPath (after `$`) can select more than one node: a wildcard, a descendant
/// segment, a filter, a slice or a union, outside quoted names.
fn yields_list(path: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut prev = '\0';
    for c in path.chars() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => quote = Some(c),
                '[' => depth += 1,
                ']' => depth = depth.saturating_sub(1),
                '*' | '?' => return true,
                '.' if prev == '.' => return true,
                ':' | ',' if depth > 0 => return true,
                _ => {}
            },
        }
        prev = c;
    }
    false
}

fn apply_fields(fields: &[(String, Field)], ctx: &Context) -> Map<String, Value> {
    let mut out = Map::with_capacity(fields.len());
    for (name, field) in fields {
        out.insert(name.clone(), field.eval(ctx));
    }
    out
}

fn apply_pipe<'a>(pipe: &Pipe, value: Cow<'a, Value>, ctx: &Context<'a>) -> Cow<'a, Value> {
    let owned = |v: Value| Cow::Owned(v);
    match pipe {
        Pipe::FirstLine => match &*value {
            Value::String(s) => owned(Value::String(s.lines().next().unwrap_or("").to_owned())),
            _ => value,
        },
        Pipe::Excerpt(n) => match &*value {
            Value::String(s) => owned(Value::String(excerpt(s, *n))),
            _ => value,
        },
        Pipe::Default(operand) => {
            if is_empty(&value) {
                operand.value(ctx)
            } else {
                value
            }
        }
        Pipe::Then(operand) => {
            let truthy = match &*value {
                Value::Bool(b) => *b,
                other => !is_empty(other),
            };
            if truthy {
                operand.value(ctx)
            } else {
                owned(Value::Null)
            }
        }
        Pipe::Present => owned(Value::Bool(!value.is_null())),
        Pipe::Base64 => match &*value {
            Value::String(s) => owned(decode_base64(s).map_or(Value::Null, Value::String)),
            _ => value,
        },
        Pipe::Untrusted(mark) => match &*value {
            Value::String(s) => match neutralize(s, mark.rendering, ctx.instance) {
                Cow::Borrowed(_) => value,
                Cow::Owned(clean) => owned(Value::String(clean)),
            },
            Value::Array(items) if items.iter().any(Value::is_string) => owned(Value::Array(
                items
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => {
                            Value::String(neutralize(s, mark.rendering, ctx.instance).into_owned())
                        }
                        other => other.clone(),
                    })
                    .collect(),
            )),
            _ => value,
        },
        Pipe::StripCredentials => match &*value {
            Value::String(s) => owned(Value::String(strip_credentials(s))),
            _ => value,
        },
        Pipe::Count => match &*value {
            Value::Array(a) => owned(Value::from(a.len())),
            Value::Null => owned(Value::from(0)),
            _ => value,
        },
    }
}

impl Operand {
    fn value<'a>(&self, ctx: &Context<'a>) -> Cow<'a, Value> {
        match self {
            Operand::Literal(v) => Cow::Owned(v.clone()),
            Operand::Arg(name) => ctx
                .args
                .get(name)
                .map_or(Cow::Owned(Value::Null), Cow::Borrowed),
        }
    }
}

/// Null, or an empty string: what `default` replaces and `FirstOf` skips.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// Standard base64 (the forge wraps it in lines) to UTF-8 text; `None` when it is neither.
fn decode_base64(text: &str) -> Option<String> {
    use base64::Engine;
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// A URL without the `user:password@` part, which may carry a credential.
fn strip_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// At most `max` characters of `text`, ending in `…` when cut; never splits a character.
pub fn excerpt(text: &str, max: usize) -> String {
    // No more bytes than `max` means no more characters either: nothing to count.
    if text.len() <= max {
        return text.to_owned();
    }
    let Some(keep) = max.checked_sub(1) else {
        return "…".to_owned();
    };
    // One walk: where character `max - 1` starts, the kept part ends; a character after that
    // one means the text has more than `max`.
    let mut starts = text.char_indices().map(|(i, _)| i);
    match (starts.nth(keep), starts.next()) {
        (Some(end), Some(_)) => {
            let mut out = String::with_capacity(end + '…'.len_utf8());
            out.push_str(&text[..end]);
            out.push('…');
            out
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_field_of_the_same_name_takes_the_place_of_the_tools() {
        let tool = Projection::compile_str(&[("id", "$.id"), ("body", "$.body | excerpt(3)")], &[])
            .unwrap();
        let own = Projection::compile_str(&[("body", "$.body"), ("extra", "$.x")], &[]).unwrap();
        let joined = tool.overridden_by(own);
        assert_eq!(
            joined.field_names().collect::<Vec<_>>(),
            ["id", "body", "extra"]
        );
        let body = json!({"id": 1, "body": "abcdef", "x": true});
        assert_eq!(
            joined.apply(&Context::of(&body)),
            json!({"id": 1, "body": "abcdef", "extra": true})
        );
    }

    fn run(fields: &[(&str, &str)], doc: Value) -> Value {
        let p = Projection::compile_str(fields, &[]).unwrap();
        p.apply(&Context::of(&doc))
    }

    #[test]
    fn singular_and_list_paths() {
        let doc = json!({"a": {"b": 1}, "l": [{"n": "x"}, {"n": "y"}], "k": {"p": 1, "q": 2}});
        let out = run(
            &[
                ("b", "$.a.b"),
                ("missing", "$.a.zz"),
                ("names", "$.l[*].n"),
                ("first", "$.l[0].n"),
                ("all", "$..n"),
                ("slice", "$.l[0:1].n"),
                ("union", "$.k['p','q']"),
                ("quoted", "$['a']['b']"),
            ],
            doc,
        );
        assert_eq!(
            out,
            json!({"b": 1, "missing": null, "names": ["x", "y"], "first": "x", "all": ["x", "y"],
                   "slice": ["x"], "union": [1, 2], "quoted": 1})
        );
    }

    #[test]
    fn pipes() {
        let doc = json!({"m": "subject\r\nbody", "s": "", "e": "héllo wörld", "l": [1, 2, 3]});
        let out = run(
            &[
                ("subject", "$.m | first_line"),
                ("state", "$.s | default('unknown')"),
                ("n", "$.none | default(0)"),
                ("short", "$.e | excerpt(5)"),
                ("whole", "$.e | excerpt(11)"),
                ("count", "$.l | count"),
                ("literal", "plain text"),
            ],
            doc,
        );
        assert_eq!(
            out,
            json!({"subject": "subject", "state": "unknown", "n": 0, "short": "héll…", "whole": "héllo wörld",
                   "count": 3, "literal": "plain text"})
        );
    }

    #[test]
    fn more_pipes_and_alternatives() {
        let doc = json!({"private": false, "internal": true, "pr": {"merged": false}, "none": null,
                         "content": "aGVsbG8K4pyTCg==", "url": "https://user:s3cret@hooks.example/x?a=1"});
        let out = run(
            &[
                ("is_pull", "$.pr | present"),
                ("not_pull", "$.none | present"),
                ("text", "$.content | base64"),
                ("url", "$.url | strip_credentials"),
                ("private", "$.private | then('private')"),
                ("internal", "$.internal | then('internal')"),
            ],
            doc.clone(),
        );
        assert_eq!(
            out,
            json!({"is_pull": true, "not_pull": false, "text": "hello\n✓\n", "url": "https://hooks.example/x?a=1",
                   "private": null, "internal": "internal"})
        );
        let visibility = Field::FirstOf(vec![
            Expr::compile("$.private | then('private')", &[]).unwrap(),
            Expr::compile("$.internal | then('internal')", &[]).unwrap(),
            Field::Literal(json!("public")),
        ]);
        assert_eq!(visibility.eval(&Context::of(&doc)), json!("internal"));
        assert_eq!(
            visibility.eval(&Context::of(&json!({"private": false}))),
            json!("public")
        );
        assert_eq!(strip_credentials("no scheme@here"), "no scheme@here");
        assert_eq!(decode_base64("!!"), None);
    }

    #[test]
    fn named_sources_args_and_meta() {
        let p = Projection::compile_str(
            &[
                ("v", "$.version"),
                ("max", "$settings.max_response_items"),
                ("sha", "$.sha | default({sha})"),
                ("total", "@total_count"),
                ("who", "@answered"),
            ],
            &["settings"],
        )
        .unwrap();
        let primary = json!({"version": "15.0.3", "sha": ""});
        let settings = json!({"max_response_items": 50});
        let mut args = Args::new();
        args.insert("sha".into(), json!("abc"));
        let with = [settings];
        let ctx = Context {
            primary: &primary,
            with: &with,
            args: &args,
            meta: Meta {
                total_count: Some(7),
                answered: Some("user"),
            },
            instance: "",
        };
        assert_eq!(
            p.apply(&ctx),
            json!({"v": "15.0.3", "max": 50, "sha": "abc", "total": 7, "who": "user"})
        );
        assert_eq!(p.args(), ["sha"]);
    }

    #[test]
    fn compile_errors() {
        type Matches = fn(&ExprError) -> bool;
        let cases: &[(&str, Matches)] = &[
            ("$.x[?", |e| matches!(e, ExprError::JsonPath { .. })),
            ("$nope.x", |e| matches!(e, ExprError::Source(..))),
            ("$.x | shout", |e| matches!(e, ExprError::Pipe(_))),
            ("@when", |e| matches!(e, ExprError::Meta(_))),
            ("$.x | excerpt(0)", |e| {
                matches!(e, ExprError::PipeArgument(..))
            }),
            ("{a-b}", |e| matches!(e, ExprError::Arg(_))),
            ("text | first_line", |e| matches!(e, ExprError::Pipe(_))),
        ];
        for (text, ok) in cases {
            let e = Expr::compile(text, &["settings"]).unwrap_err();
            assert!(ok(&e), "{text}: {e}");
        }
    }

    #[test]
    fn excerpt_never_splits_a_character() {
        for (text, max, expected) in [
            ("abc", 3, "abc"),
            ("abcd", 3, "ab…"),
            ("日本語です", 4, "日本語…"),
            ("", 1, ""),
        ] {
            assert_eq!(excerpt(text, max), expected);
            assert!(excerpt(text, max).chars().count() <= max);
        }
    }

    proptest::proptest! {
        /// The one-walk excerpt says what counting characters says.
        #[test]
        fn excerpt_counts_characters(text in "[a-zé日😀 ]{0,12}", max in 0usize..14) {
            let chars: Vec<char> = text.chars().collect();
            let expected: String = if chars.len() <= max {
                text.clone()
            } else {
                chars[..max.saturating_sub(1)].iter().chain(['…'].iter()).collect()
            };
            proptest::prop_assert_eq!(excerpt(&text, max), expected);
        }
    }

    /// A JSON document of nested objects and arrays over a few names, so paths often hit.
    fn doc() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0u32..100).prop_map(Value::from),
            "[a-z]{0,3}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((prop_oneof!["a", "b", "c_d", "x1"], inner), 0..4)
                    .prop_map(|kv| Value::Object(
                        kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                    )),
            ]
        })
    }

    /// A path after `$`: mostly simple segments, sometimes ones the fast path must refuse.
    fn path() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let segment = prop_oneof![
            4 => prop_oneof![Just(".a"), Just(".b"), Just(".c_d"), Just(".x1")].prop_map(str::to_owned),
            3 => (0usize..4).prop_map(|i| format!("[{i}]")),
            2 => prop_oneof![Just("[*]"), Just(".*")].prop_map(str::to_owned),
            1 => prop_oneof![Just("['a']"), Just("[-1]"), Just("[01]"), Just(".1a"), Just("..a"), Just("[?@.a]")]
                .prop_map(str::to_owned),
        ];
        proptest::collection::vec(segment, 0..5).prop_map(|s| s.concat())
    }

    #[test]
    fn names_indices_and_wildcards_are_walked_directly() {
        assert_eq!(
            simple_steps(".user.login[2]"),
            Some(vec![
                Step::Name("user".into()),
                Step::Name("login".into()),
                Step::Index(2)
            ])
        );
        assert_eq!(
            simple_steps(".labels[*].name.*"),
            Some(vec![
                Step::Name("labels".into()),
                Step::Each,
                Step::Name("name".into()),
                Step::Each
            ])
        );
        assert_eq!(simple_steps(""), Some(vec![]));
        for general in ["..a", "[?@.a]", "['a']", "[-1]", "[01]", ".a[?@.b]"] {
            assert_eq!(simple_steps(general), None, "{general}");
        }
    }

    proptest::proptest! {
        #[test]
        fn direct_walks_agree_with_jsonpath(doc in doc(), rest in path()) {
            let Ok(parsed) = JsonPath::parse(&format!("${rest}")) else {
                // Not JSONPath: the walker must not accept it either (a simple path is never
                // handed to JSONPath, so this is what keeps its errors).
                proptest::prop_assert!(simple_steps(&rest).is_none());
                proptest::prop_assert!(Locator::parse(&rest).is_err());
                return Ok(());
            };
            let general = parsed.query(&doc).all();
            let locator = Locator::parse(&rest).expect("JSONPath takes it, so the locator does");
            proptest::prop_assert_eq!(locator.all(&doc), general.clone());
            proptest::prop_assert_eq!(locator.first(&doc), general.first().copied());
        }
    }
}
