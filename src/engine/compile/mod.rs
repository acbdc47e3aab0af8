//! The compiler: raw manifests in, a [`Catalog`] out — or every finding, positioned.
//!
//! This is the only place that raises semantic errors about the manifests. It checks each rule of
//! `manifest::checks` that needs no outside input (the swagger checks live in `lint`), derives
//! what the manifests do not restate (annotations from methods, argument locations from the
//! request line, the bounds sentence of each description), and builds the router.
//!
//! `resource.rs` compiles resources, listings and completions; `tool.rs` compiles tools; this
//! file holds the entry point and what both share.

mod finding;
mod resource;
mod tool;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json_path::JsonPath;
use serde_saphyr::Spanned;

use self::finding::Kind;
use super::error::{Case, Hints};
use super::param::{Rule, RuleKind};
use super::policy::marks::{self, Shown, Writer};
use super::project::{Expr, ExprError, Field, FieldType, Projection};
use super::render::Renderer;
use super::request::RequestTemplate;
use super::text::TextSpec;
use super::tool::Tool;
use super::{Catalog, ErrorTable, Reason};
use crate::manifest::diagnostic::did_you_mean;
use crate::manifest::raw::{self, ProjectValue};
use crate::manifest::{FileId, Finding, Manifests, Pos};

/// Default cap of lists when the manifest sets none.
pub const DEFAULT_CAP: u64 = 30;
/// Default largest page of a list tool.
pub const DEFAULT_MAX_LIMIT: u64 = 50;
/// Default `ttlMs` of immutable resources: one day.
pub const DEFAULT_IMMUTABLE_TTL_MS: u64 = 86_400_000;
/// Default size cap of a markdown block, in characters.
pub const DEFAULT_MARKDOWN_CHARS: usize = 20_000;
/// Default most lines of a text answer.
pub const DEFAULT_TEXT_LINES: u64 = 400;
/// Default most bytes of a text answer.
pub const DEFAULT_TEXT_BYTES: u64 = 64 * 1024;
/// Longest first sentence of a tool description: what `tools/list` shows of it.
pub const MAX_SUMMARY: usize = 200;
/// Longest tool name MCP clients accept everywhere.
pub const MAX_TOOL_NAME: usize = 64;

/// Compiles both manifests; on failure, every finding (sorted by position).
pub fn compile(manifests: &Manifests) -> Result<Catalog, Vec<Finding>> {
    let mut c = Compiler::default();
    c.rules(FileId::Resources, &manifests.resources.rules);
    c.rules(FileId::Tools, &manifests.tools.rules);
    let errors = c.errors(&manifests.resources.errors);
    c.variables = manifests.resources.variables.clone();
    let defaults = Defaults::from(&manifests.resources.defaults, &mut c);
    let toolsets: IndexMap<String, String> = manifests
        .tools
        .toolsets
        .iter()
        .map(|(name, set)| (name.clone(), set.description.clone()))
        .collect();
    c.field_types = c.field_type_table(&manifests.tools.field_types);
    let mut tools = Vec::new();
    let mut tool_index = HashMap::new();
    for (toolset, def) in manifests.tools.tools() {
        if let Some(tool) = c.tool(def, toolset, &defaults, &manifests.tools.arguments) {
            if tool_index.contains_key(&tool.name) {
                let tool = tool.name.clone();
                c.raise(
                    Pos::of(FileId::Tools, &def.name),
                    Kind::DuplicateTool { tool },
                );
                continue;
            }
            tool_index.insert(tool.name.clone(), tools.len());
            tools.push(tool);
        }
    }
    add_keywords(&manifests.search.keywords, &mut tools, &tool_index);
    c.unused_field_types(&manifests.tools.field_types);
    let tools_ref = ToolRefs {
        tools: &tools,
        index: &tool_index,
    };
    let mut renderer = Renderer::default();
    let mut resources = Vec::new();
    let mut router = matchit::Router::new();
    let mut routes: HashMap<String, String> = HashMap::new();
    for def in &manifests.resources.resources {
        let Some(resource) = c.resource(def, &defaults, &tools_ref, &mut renderer) else {
            continue;
        };
        let pos = Pos::of(FileId::Resources, &def.uri);
        let duplicate = resources.iter().find(|r: &&super::Resource| {
            r.name == resource.name || r.template.as_str() == resource.template.as_str()
        });
        if let Some(other) = duplicate {
            let kind = Kind::DuplicateTemplate {
                resource: resource.name.clone(),
                template: resource.template.as_str().to_owned(),
                other: other.name.clone(),
                other_template: other.template.as_str().to_owned(),
            };
            c.raise(pos, kind);
            continue;
        }
        let route = resource.template.route();
        if let Err(e) = router.insert(route.clone(), resources.len()) {
            let with = match &e {
                matchit::InsertError::Conflict { with } => {
                    routes.get(with).cloned().unwrap_or_else(|| with.clone())
                }
                other => other.to_string(),
            };
            let template = resource.template.as_str().to_owned();
            c.raise(pos, Kind::RouteConflict { template, with });
            continue;
        }
        routes.insert(route, resource.template.as_str().to_owned());
        resources.push(resource);
    }
    let listings: Vec<_> = manifests
        .resources
        .listing
        .iter()
        .filter_map(|l| c.listing(l, &resources))
        .collect();
    let mut completions = HashMap::new();
    for (var, def) in &manifests.resources.completions {
        if let Some(completion) = c.completion(var, def, &resources) {
            completions.insert(var.clone(), completion);
        }
    }
    let core = c.core(&manifests.tools.core, &tool_index);
    // A tool manifest's own `search:` first; search.yaml's fills what it leaves out.
    let search = c
        .words(&manifests.tools.search, FileId::Tools)
        .or(c.words(&manifests.search.search, FileId::Search));
    if !c.findings.is_empty() {
        c.findings
            .sort_by(|a, b| a.pos.cmp(&b.pos).then(a.code.cmp(&b.code)));
        return Err(c.findings);
    }
    Ok(Catalog {
        resources,
        router,
        tools,
        tool_index,
        errors: errors.expect("no findings means the error table compiled"),
        renderer,
        toolsets,
        listings,
        completions,
        core,
        search,
    })
}

/// search.yaml's keywords added to their tools' own. An entry for a tool this manifest
/// does not have is passed over: the built-in search.yaml serves a tool manifest of one's
/// own too, which may leave tools out (a test holds the built-in one to the built-in tools).
fn add_keywords(
    keywords: &IndexMap<String, Spanned<Vec<String>>>,
    tools: &mut [Tool],
    index: &HashMap<String, usize>,
) {
    for (name, words) in keywords {
        if let Some(&i) = index.get(name) {
            tools[i].keywords.extend(words.value.iter().cloned());
        }
    }
}

/// The tools a resource may name, for sentinel checks.
struct ToolRefs<'a> {
    tools: &'a [Tool],
    index: &'a HashMap<String, usize>,
}

impl ToolRefs<'_> {
    fn get(&self, name: &str) -> Option<&Tool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }
}

/// The `defaults:` block, resolved.
struct Defaults {
    cap: u64,
    immutable_ttl_ms: u64,
    markdown_max_chars: usize,
}

impl Defaults {
    fn from(raw: &raw::DefaultsDef, c: &mut Compiler) -> Defaults {
        let cap = match &raw.cap {
            Some(cap) => c.positive(FileId::Resources, cap).unwrap_or(DEFAULT_CAP),
            None => DEFAULT_CAP,
        };
        Defaults {
            cap,
            immutable_ttl_ms: raw.immutable_ttl_ms.unwrap_or(DEFAULT_IMMUTABLE_TTL_MS),
            markdown_max_chars: raw.markdown_max_chars.unwrap_or(DEFAULT_MARKDOWN_CHARS),
        }
    }
}

impl Compiler {
    /// The `core:` list: every name a declared tool, none twice.
    fn core(&mut self, names: &[Spanned<String>], tools: &HashMap<String, usize>) -> Vec<String> {
        let mut core: Vec<String> = Vec::new();
        for name in names {
            let pos = Pos::of(FileId::Tools, name);
            if !tools.contains_key(&name.value) {
                let hint = did_you_mean(&name.value, tools.keys().map(String::as_str));
                let name = name.value.clone();
                self.raise(pos, Kind::CoreNotATool { name, hint });
            } else if core.contains(&name.value) {
                let name = name.value.clone();
                self.raise(pos, Kind::CoreTwice { name });
            } else {
                core.push(name.value.clone());
            }
        }
        core
    }

    /// The search words `search` declares (written in `file`); each synonym says what it means.
    fn words(&mut self, search: &raw::SearchDef, file: FileId) -> super::search::Words {
        use super::search::Shape;
        let mut synonyms = Vec::new();
        for (word, means) in &search.synonyms {
            if word.trim().is_empty() || means.value.iter().all(|m| m.trim().is_empty()) {
                let word = word.clone();
                self.raise(Pos::of(file, means), Kind::EmptySynonym { word });
                continue;
            }
            synonyms.push((word.clone(), means.value.clone()));
        }
        let shapes = &search.shapes;
        super::search::Words {
            synonyms,
            shapes: vec![
                (Shape::Path, shapes.path.clone()),
                (Shape::Directory, shapes.directory.clone()),
                (Shape::Version, shapes.version.clone()),
                (Shape::Sha, shapes.sha.clone()),
                (Shape::Number, shapes.number.clone()),
                (Shape::Duration, shapes.duration.clone()),
                (Shape::Repository, shapes.repository.clone()),
                (Shape::Identifier, shapes.identifier.clone()),
            ],
            reading: search.intents.read.clone(),
            changing: search.intents.change.clone(),
            deleting: search.intents.delete.clone(),
            verbs: search
                .verbs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            lists: search.lists.clone(),
            scopes: search
                .scopes
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            whose: search.whose.clone(),
            examples: search.examples.clone(),
        }
    }
}

#[derive(Default)]
struct Compiler {
    findings: Vec<Finding>,
    rules: IndexMap<String, Arc<Rule>>,
    /// The resource manifest's `variables`: the rule of a variable a resource leaves out.
    variables: IndexMap<String, Spanned<String>>,
    /// The manifest's `field_types`, and which of them a tool's projection asked for.
    field_types: HashMap<String, FieldType>,
    field_types_used: HashSet<String>,
}

impl Compiler {
    /// Reports that the manifest breaks the rule `kind`, at `pos`.
    fn raise(&mut self, pos: Pos, kind: Kind) {
        let (code, message) = (kind.code(), kind.to_string());
        self.findings.push(Finding { pos, code, message });
    }

    fn positive(&mut self, file: FileId, value: &Spanned<u64>) -> Option<u64> {
        if value.value == 0 {
            self.raise(Pos::of(file, value), Kind::ZeroCap);
            None
        } else {
            Some(value.value)
        }
    }

    fn rules(&mut self, file: FileId, defs: &IndexMap<String, Spanned<raw::RuleDef>>) {
        for (name, def) in defs {
            let pos = Pos::of(file, def);
            if self.rules.contains_key(name) {
                let name = name.clone();
                self.raise(pos, Kind::DuplicateRule { name });
                continue;
            }
            match compile_rule(name, &def.value) {
                Ok(rule) => {
                    self.rules.insert(name.clone(), Arc::new(rule));
                }
                Err(why) => {
                    let (name, why) = (name.clone(), why.to_string());
                    self.raise(pos, Kind::BadRule { name, why });
                }
            }
        }
    }

    fn rule(&mut self, file: FileId, name: &Spanned<String>) -> Option<Arc<Rule>> {
        match self.rules.get(&name.value) {
            Some(rule) => Some(rule.clone()),
            None => {
                let hint = did_you_mean(&name.value, self.rules.keys().map(String::as_str));
                let pos = Pos::of(file, name);
                let name = name.value.clone();
                self.raise(pos, Kind::UnknownRule { name, hint });
                None
            }
        }
    }

    fn errors(&mut self, def: &Spanned<raw::ErrorsDef>) -> Option<ErrorTable> {
        let file = FileId::Resources;
        let before = self.findings.len();
        let mut exact = HashMap::new();
        let mut classes = [None; 6];
        for (key, reason_name) in &def.value.status {
            let pos = Pos::of(file, reason_name);
            let Some(reason) = Reason::parse(&reason_name.value) else {
                let hint = did_you_mean(&reason_name.value, Reason::ALL.iter().map(|r| r.as_str()));
                let name = reason_name.value.clone();
                self.raise(pos, Kind::NotAReason { name, hint });
                continue;
            };
            if let Ok(status) = key.parse::<u16>()
                && (100..600).contains(&status)
            {
                exact.insert(status, reason);
            } else if let Some(class) = key
                .strip_suffix("xx")
                .and_then(|d| d.parse::<usize>().ok())
                .filter(|d| (1..6).contains(d))
            {
                classes[class] = Some(reason);
            } else {
                let key = key.clone();
                self.raise(pos, Kind::StatusKey { key });
            }
        }
        let mut codes = HashMap::new();
        for (name, code) in &def.value.codes {
            match Reason::parse(name) {
                Some(reason) => {
                    codes.insert(reason, code.value as i32);
                }
                None => {
                    let (name, hint) = (name.clone(), String::new());
                    self.raise(Pos::of(file, code), Kind::NotAReason { name, hint });
                }
            }
        }
        for reason in Reason::ALL {
            if !codes.contains_key(&reason) {
                let reason = reason.to_string();
                self.raise(Pos::of(file, def), Kind::NoCode { reason });
            }
        }
        let mut hints = HashMap::new();
        for (name, hint) in &def.value.hints {
            match Reason::parse(name) {
                Some(reason) => {
                    let mut cases = Vec::new();
                    let mut default = None;
                    match hint {
                        raw::HintDef::One(text) => default = Some(text.trim().to_owned()),
                        raw::HintDef::BySituation(by) => {
                            for (situation, text) in by {
                                let text = text.trim().to_owned();
                                match (situation.as_str(), Case::parse(situation)) {
                                    ("default", _) => default = Some(text),
                                    (_, Some(case)) => cases.push((case, text)),
                                    (other, None) => {
                                        let kind = Kind::UnknownSituation {
                                            reason: name.clone(),
                                            situation: other.to_owned(),
                                            known: Case::NAMES.join(", "),
                                        };
                                        self.raise(Pos::of(file, def), kind);
                                    }
                                }
                            }
                        }
                    }
                    hints.insert(reason, Hints { default, cases });
                }
                None => {
                    let name = name.clone();
                    self.raise(Pos::of(file, def), Kind::HintForNoReason { name });
                }
            }
        }
        (self.findings.len() == before).then(|| ErrorTable::new(exact, classes, codes, hints))
    }

    fn request(&mut self, file: FileId, line: &Spanned<String>) -> Option<RequestTemplate> {
        match RequestTemplate::parse(&line.value) {
            Ok(t) => Some(t),
            Err(e) => {
                let (line_text, why) = (line.value.clone(), e.to_string());
                let kind = Kind::RequestSyntax {
                    line: line_text,
                    why,
                };
                self.raise(Pos::of(file, line), kind);
                None
            }
        }
    }

    /// Checks that every placeholder of `request` is one of `vars`.
    fn placeholders(
        &mut self,
        file: FileId,
        line: &Spanned<String>,
        request: &RequestTemplate,
        vars: &[&str],
        owner: &str,
    ) {
        for placeholder in request.placeholders() {
            if !vars.contains(&placeholder) {
                let hint = did_you_mean(placeholder, vars.iter().copied());
                let kind = Kind::UnboundPlaceholder {
                    placeholder: placeholder.to_owned(),
                    line: line.value.clone(),
                    owner: owner.to_owned(),
                    hint,
                };
                self.raise(Pos::of(file, line), kind);
            }
        }
    }

    fn projection(
        &mut self,
        file: FileId,
        raw: &raw::Projection,
        sources: &[&str],
        vars: &[&str],
    ) -> Option<Projection> {
        let projection = self.unchecked_projection(file, raw, sources, vars)?;
        self.marks_checked(file, raw, projection, vars)
    }

    /// A projection's fields compiled, their marks not checked yet: for one that joins
    /// another's before the marks can be (an entity's `project` over its tool's).
    fn unchecked_projection(
        &mut self,
        file: FileId,
        raw: &raw::Projection,
        sources: &[&str],
        vars: &[&str],
    ) -> Option<Projection> {
        let before = self.findings.len();
        let fields = self.fields(file, raw, sources, vars, "");
        (self.findings.len() == before).then(|| Projection::new(fields))
    }

    /// `projection`, when each of its marks names an author field it has and a writer
    /// argument in `vars`; findings point into `raw` where it writes the field.
    fn marks_checked(
        &mut self,
        file: FileId,
        raw: &raw::Projection,
        projection: Projection,
        vars: &[&str],
    ) -> Option<Projection> {
        let before = self.findings.len();
        for mark in projection.marks() {
            let top = mark.field.split('.').next().unwrap_or_default();
            let pos = raw.get(top).map_or(Pos::start(file), |v| Pos::of(file, v));
            match &mark.writer {
                Writer::Author(path) => {
                    let found = mark.author_field().filter(|a| projection.has(a));
                    if found.is_none() {
                        let (field, path) = (mark.field.clone(), path.clone());
                        self.raise(pos, Kind::UnknownAuthor { field, path });
                    }
                }
                Writer::WritersAt(arg) if !vars.contains(&arg.as_str()) => {
                    let hint = did_you_mean(arg, vars.iter().copied());
                    let kind = Kind::NotAVariable {
                        what: format!("field `{}`: `untrusted(writers({arg}))`", mark.field),
                        name: arg.clone(),
                        hint,
                    };
                    self.raise(pos, kind);
                }
                _ => {}
            }
        }
        (self.findings.len() == before).then_some(projection)
    }

    fn fields(
        &mut self,
        file: FileId,
        raw: &raw::Projection,
        sources: &[&str],
        vars: &[&str],
        prefix: &str,
    ) -> Vec<(String, Field)> {
        let mut out = Vec::new();
        for (name, value) in raw {
            let path = Projection::path_of(prefix, name);
            if let Some(field) = self.field(file, value, sources, vars, &path) {
                out.push((name.clone(), field));
            }
        }
        out
    }

    fn field(
        &mut self,
        file: FileId,
        value: &Spanned<ProjectValue>,
        sources: &[&str],
        vars: &[&str],
        path: &str,
    ) -> Option<Field> {
        match &value.value {
            ProjectValue::Literal(v) => Some(Field::Literal(v.clone())),
            ProjectValue::Object(inner) => {
                Some(Field::Object(self.fields(file, inner, sources, vars, path)))
            }
            ProjectValue::FirstOf(alternatives) => {
                let compiled: Vec<Field> = alternatives
                    .iter()
                    .filter_map(|a| self.field(file, a, sources, vars, path))
                    .collect();
                (compiled.len() == alternatives.len()).then_some(Field::FirstOf(compiled))
            }
            ProjectValue::Expr(text) => {
                self.expression(Pos::of(file, value), text, sources, vars, path)
            }
        }
    }

    /// Compiles one expression and checks the variables it reads.
    fn expression(
        &mut self,
        pos: Pos,
        text: &str,
        sources: &[&str],
        vars: &[&str],
        what: &str,
    ) -> Option<Field> {
        match Expr::compile(text, sources) {
            Ok(field) => {
                if let Field::Expr(e) = &field {
                    for arg in e.args() {
                        if !vars.contains(&arg) {
                            let hint = did_you_mean(arg, vars.iter().copied());
                            let kind = Kind::ReadsNoVariable {
                                what: what.to_owned(),
                                arg: arg.to_owned(),
                                hint,
                            };
                            self.raise(pos, kind);
                        }
                    }
                }
                Some(field)
            }
            Err(e) => {
                let (what, why) = (what.to_owned(), e.to_string());
                let kind = match e {
                    ExprError::JsonPath { .. } => Kind::ExpressionPath { what, why },
                    _ => Kind::Expression { what, why },
                };
                self.raise(pos, kind);
                None
            }
        }
    }

    fn json_path(&mut self, file: FileId, text: &Spanned<String>) -> Option<JsonPath> {
        match JsonPath::parse(&text.value) {
            Ok(p) => Some(p),
            Err(e) => {
                let (path, why) = (text.value.clone(), e.message().to_owned());
                self.raise(Pos::of(file, text), Kind::JsonPath { path, why });
                None
            }
        }
    }

    fn secrets(&mut self, file: FileId, paths: &[Spanned<String>]) -> Vec<JsonPath> {
        paths
            .iter()
            .filter_map(|p| self.json_path(file, p))
            .collect()
    }

    /// Compiles a `text:` block whose range variables must be among `vars`.
    fn text(
        &mut self,
        file: FileId,
        def: &Spanned<raw::TextDef>,
        sources: &[&str],
        vars: &[&str],
    ) -> Option<TextSpec> {
        let t = &def.value;
        let pos = Pos::of(file, def);
        for var in [&t.start_line, &t.end_line, &t.start_byte, &t.diff_file]
            .into_iter()
            .flatten()
        {
            if !vars.contains(&var.as_str()) {
                let hint = did_you_mean(var, vars.iter().copied());
                let (what, name) = ("`text`".to_owned(), var.clone());
                self.raise(pos, Kind::NotAVariable { what, name, hint });
            }
        }
        let from = match &t.from {
            Some(expr) => Some(self.expression(
                Pos::of(file, expr),
                &expr.value,
                sources,
                vars,
                "text.from",
            )?),
            None => None,
        };
        let untrusted = match &t.untrusted {
            None => None,
            Some(words) => match marks::parse(&words.value, true) {
                Ok(mark) => {
                    let named = [
                        match &mark.shown {
                            Shown::ByExtension(arg) => Some(arg),
                            Shown::As(_) => None,
                        },
                        match &mark.writer {
                            Writer::WritersAt(arg) => Some(arg),
                            _ => None,
                        },
                    ];
                    for arg in named.into_iter().flatten() {
                        if !vars.contains(&arg.as_str()) {
                            let hint = did_you_mean(arg, vars.iter().copied());
                            let (what, name) = ("`text.untrusted`".to_owned(), arg.clone());
                            let kind = Kind::NotAVariable { what, name, hint };
                            self.raise(Pos::of(file, words), kind);
                        }
                    }
                    if matches!(mark.writer, Writer::Author(_)) {
                        self.raise(Pos::of(file, words), Kind::TextAuthor);
                    }
                    Some(mark)
                }
                Err(why) => {
                    let why = why.to_string();
                    self.raise(Pos::of(file, words), Kind::TextMark { why });
                    None
                }
            },
        };
        let max_lines = match &t.max_lines {
            Some(n) => self.positive(file, n)?,
            None => DEFAULT_TEXT_LINES,
        };
        let max_bytes = match &t.max_bytes {
            Some(n) => self.positive(file, n)?,
            None => DEFAULT_TEXT_BYTES,
        };
        Some(TextSpec {
            from,
            start_line: t.start_line.clone(),
            end_line: t.end_line.clone(),
            start_byte: t.start_byte.clone(),
            max_lines,
            max_bytes,
            keep: t.keep,
            diff_file: t.diff_file.clone(),
            untrusted,
        })
    }

    /// The named tool's largest page, or a finding when there is no such tool.
    fn tool_ref(&mut self, file: FileId, name: &Spanned<String>, tools: &ToolRefs) -> Option<u64> {
        match tools.index.get(&name.value) {
            Some(&i) => Some(tools.tools[i].max_limit()),
            None => {
                let hint = did_you_mean(&name.value, tools.index.keys().map(String::as_str));
                let pos = Pos::of(file, name);
                let name = name.value.clone();
                self.raise(pos, Kind::UnknownTool { name, hint });
                None
            }
        }
    }
}

/// Why a rule does not compile: each kind with the words of its finding (FL024).
#[derive(Debug, thiserror::Error)]
enum BadRule {
    #[error("`minimum`/`maximum` apply to integers; set `type: integer`")]
    BoundsOnText,
    #[error("a string rule needs a `pattern`, an `enum` or a `max_length`")]
    Unbounded,
    #[error("`pattern`, `enum` and `max_length` apply to strings")]
    TextOnInteger,
    #[error("minimum {0} is above maximum {1}")]
    Inverted(i64, i64),
    #[error("type `{0}` is not `string` or `integer`")]
    Type(String),
    #[error(transparent)]
    Schema(#[from] crate::engine::schema::SchemaError),
}

fn compile_rule(name: &str, def: &raw::RuleDef) -> Result<Rule, BadRule> {
    let kind = def.kind.as_ref().map_or("string", |k| k.value.as_str());
    let kind = match kind {
        "string" => {
            if def.minimum.is_some() || def.maximum.is_some() {
                return Err(BadRule::BoundsOnText);
            }
            let pattern = match &def.pattern {
                // Rules match the whole value, whether or not the pattern is anchored. Compiled
                // once: the rule's JSON Schema checker reads the same pattern from this cache.
                Some(p) => Some(crate::engine::schema::pattern(&format!(
                    "^(?:{})$",
                    p.value
                ))?),
                None => None,
            };
            if pattern.is_none() && def.values.is_none() && def.max_length.is_none() {
                return Err(BadRule::Unbounded);
            }
            RuleKind::Text {
                pattern,
                max_length: def.max_length,
                values: def.values.clone(),
            }
        }
        "integer" => {
            if def.pattern.is_some() || def.values.is_some() || def.max_length.is_some() {
                return Err(BadRule::TextOnInteger);
            }
            if let (Some(lo), Some(hi)) = (def.minimum, def.maximum)
                && lo > hi
            {
                return Err(BadRule::Inverted(lo, hi));
            }
            RuleKind::Integer {
                minimum: def.minimum,
                maximum: def.maximum,
            }
        }
        other => return Err(BadRule::Type(other.to_owned())),
    };
    Ok(Rule::new(name, def.description.clone(), kind)?)
}
