//! The compiler: raw manifests in, a [`Catalog`] out — or every finding, positioned.
//!
//! This is the only place that raises semantic errors about the manifests. It checks each rule of
//! `manifest::checks` that needs no outside input (the swagger checks live in `lint`), derives
//! what the manifests do not restate (annotations from methods, argument locations from the
//! request line, the bounds sentence of each description), and builds the router.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use indexmap::IndexMap;
use regex::Regex;
use serde_json::{Map, Value, json};
use serde_json_path::JsonPath;
use serde_saphyr::Spanned;

use super::param::{Rule, RuleKind};
use super::project::{Expr, ExprError, Field, Projection};
use super::render::Renderer;
use super::request::RequestTemplate;
use super::resource::{Cache, Embed, EmbedSource, LIMIT, Markdown, PAGE, Param, Resource, Shape};
use super::schema::{Check, Schema};
use super::template::{TemplateError, UriTemplate};
use super::tool::{Annotations, Arg, SUDO, Tool, ToolList};
use super::{Catalog, ErrorTable, Reason};
use crate::forge::{Accept, Method};
use crate::manifest::checks::{self, Code};
use crate::manifest::diagnostic::did_you_mean;
use crate::manifest::raw::{self, AcceptDef, ArgLocation, CacheClass, Keep, ProjectValue};
use crate::manifest::{FileId, Finding, Manifests, Pos};

/// Default cap of lists when the manifest sets none.
pub const DEFAULT_CAP: u64 = 30;
/// Default largest page of a list tool.
pub const DEFAULT_MAX_LIMIT: u64 = 50;
/// Default `ttlMs` of immutable resources: one day.
pub const DEFAULT_IMMUTABLE_TTL_MS: u64 = 86_400_000;
/// Default size cap of a markdown block, in characters.
pub const DEFAULT_MARKDOWN_CHARS: usize = 20_000;
/// Longest tool name MCP clients accept everywhere.
pub const MAX_TOOL_NAME: usize = 64;
/// Pattern of the `sudo` argument: a user name.
const SUDO_PATTERN: &str = "^[A-Za-z0-9_][A-Za-z0-9_.-]*$";

/// Compiles both manifests; on failure, every finding (sorted by position).
pub fn compile(manifests: &Manifests) -> Result<Catalog, Vec<Finding>> {
    let mut c = Compiler::default();
    c.rules(FileId::Resources, &manifests.resources.rules);
    c.rules(FileId::Tools, &manifests.tools.rules);
    let errors = c.errors(&manifests.resources.errors);
    let defaults = Defaults::from(&manifests.resources.defaults, &mut c);
    let toolsets = manifests.tools.toolsets.clone();
    let mut tools = Vec::new();
    let mut tool_index = HashMap::new();
    for def in &manifests.tools.tools {
        if let Some(tool) = c.tool(def, &toolsets, &defaults) {
            if tool_index.contains_key(&tool.name) {
                c.push(
                    Pos::of(FileId::Tools, &def.name),
                    checks::DUPLICATE_TOOL,
                    format!("tool `{}` is declared twice", tool.name),
                );
                continue;
            }
            tool_index.insert(tool.name.clone(), tools.len());
            tools.push(tool);
        }
    }
    let mut renderer = Renderer::default();
    let mut resources: Vec<Resource> = Vec::new();
    let mut router = matchit::Router::new();
    let mut routes: HashMap<String, String> = HashMap::new();
    for def in &manifests.resources.resources {
        let Some(resource) = c.resource(def, &defaults, &tools, &tool_index, &mut renderer) else {
            continue;
        };
        let pos = Pos::of(FileId::Resources, &def.uri);
        if let Some(other) = resources
            .iter()
            .find(|r| r.name == resource.name || r.template.as_str() == resource.template.as_str())
        {
            c.push(
                pos,
                checks::DUPLICATE_TEMPLATE,
                format!(
                    "resource `{}` ({}) repeats the name or template of `{}` ({})",
                    resource.name,
                    resource.template.as_str(),
                    other.name,
                    other.template.as_str()
                ),
            );
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
            c.push(pos, checks::ROUTE_CONFLICT, format!(
                "template {} routes to the same paths as {with}; make one of them differ by a literal segment",
                resource.template.as_str()
            ));
            continue;
        }
        routes.insert(route, resource.template.as_str().to_owned());
        resources.push(resource);
    }
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
    })
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

#[derive(Default)]
struct Compiler {
    findings: Vec<Finding>,
    rules: IndexMap<String, Rule>,
}

impl Compiler {
    fn push(&mut self, pos: Pos, code: Code, message: String) {
        self.findings.push(Finding { pos, code, message });
    }

    fn positive(&mut self, file: FileId, value: &Spanned<u64>) -> Option<u64> {
        if value.value == 0 {
            self.push(
                Pos::of(file, value),
                checks::BAD_CAP,
                "a cap or limit must be at least 1".into(),
            );
            None
        } else {
            Some(value.value)
        }
    }

    fn rules(&mut self, file: FileId, defs: &IndexMap<String, Spanned<raw::RuleDef>>) {
        for (name, def) in defs {
            let pos = Pos::of(file, def);
            if self.rules.contains_key(name) {
                self.push(
                    pos,
                    checks::DUPLICATE_RULE,
                    format!(
                        "rule `{name}` is defined twice; rule names are shared by both manifests"
                    ),
                );
                continue;
            }
            match compile_rule(name, &def.value) {
                Ok(rule) => {
                    self.rules.insert(name.clone(), rule);
                }
                Err(message) => {
                    self.push(pos, checks::BAD_RULE, format!("rule `{name}`: {message}"))
                }
            }
        }
    }

    fn rule(&mut self, file: FileId, name: &Spanned<String>) -> Option<Rule> {
        match self.rules.get(&name.value) {
            Some(rule) => Some(rule.clone()),
            None => {
                let hint = did_you_mean(&name.value, self.rules.keys().map(String::as_str));
                self.push(
                    Pos::of(file, name),
                    checks::UNKNOWN_RULE,
                    format!("no rule named `{}`{hint}", name.value),
                );
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
                self.push(
                    pos,
                    checks::ERROR_TABLE,
                    format!("`{}` is not a reason{hint}", reason_name.value),
                );
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
                self.push(
                    pos,
                    checks::ERROR_TABLE,
                    format!("status key `{key}` is neither a status (`404`) nor a class (`4xx`)"),
                );
            }
        }
        let mut codes = HashMap::new();
        for (name, code) in &def.value.codes {
            match Reason::parse(name) {
                Some(reason) => {
                    codes.insert(reason, code.value as i32);
                }
                None => self.push(
                    Pos::of(file, code),
                    checks::ERROR_TABLE,
                    format!("`{name}` is not a reason"),
                ),
            }
        }
        for reason in Reason::ALL {
            if !codes.contains_key(&reason) {
                self.push(
                    Pos::of(file, def),
                    checks::ERROR_TABLE,
                    format!("`codes` has no entry for reason `{reason}`"),
                );
            }
        }
        let mut hints = HashMap::new();
        for (name, hint) in &def.value.hints {
            match Reason::parse(name) {
                Some(reason) => {
                    hints.insert(reason, hint.trim().to_owned());
                }
                None => self.push(
                    Pos::of(file, def),
                    checks::ERROR_TABLE,
                    format!("hint for `{name}`, which is not a reason"),
                ),
            }
        }
        (self.findings.len() == before).then(|| ErrorTable::new(exact, classes, codes, hints))
    }

    fn request(&mut self, file: FileId, line: &Spanned<String>) -> Option<RequestTemplate> {
        match RequestTemplate::parse(&line.value) {
            Ok(t) => Some(t),
            Err(e) => {
                self.push(
                    Pos::of(file, line),
                    checks::REQUEST_SYNTAX,
                    format!("`{}`: {e}", line.value),
                );
                None
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
        let before = self.findings.len();
        let fields = self.fields(file, raw, sources, vars, "");
        (self.findings.len() == before).then(|| Projection::new(fields))
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
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let pos = Pos::of(file, value);
            let field = match &value.value {
                ProjectValue::Literal(v) => Field::Literal(v.clone()),
                ProjectValue::Object(inner) => {
                    Field::Object(self.fields(file, inner, sources, vars, &path))
                }
                ProjectValue::Expr(text) => match Expr::compile(text, sources) {
                    Ok(field) => {
                        if let Field::Expr(e) = &field {
                            for arg in e.args() {
                                if !vars.contains(&arg) {
                                    let hint = did_you_mean(arg, vars.iter().copied());
                                    self.push(pos, checks::EXPRESSION, format!("field `{path}` reads `{{{arg}}}`, which is not a variable here{hint}"));
                                }
                            }
                        }
                        field
                    }
                    Err(e) => {
                        let code = if matches!(e, ExprError::JsonPath { .. }) {
                            checks::JSONPATH_SYNTAX
                        } else {
                            checks::EXPRESSION
                        };
                        self.push(pos, code, format!("field `{path}`: {e}"));
                        continue;
                    }
                },
            };
            out.push((name.clone(), field));
        }
        out
    }

    fn json_path(&mut self, file: FileId, text: &Spanned<String>) -> Option<JsonPath> {
        match JsonPath::parse(&text.value) {
            Ok(p) => Some(p),
            Err(e) => {
                self.push(
                    Pos::of(file, text),
                    checks::JSONPATH_SYNTAX,
                    format!(
                        "JSONPath `{}` does not compile: {}",
                        text.value,
                        e.message()
                    ),
                );
                None
            }
        }
    }

    fn tool_ref(
        &mut self,
        file: FileId,
        name: &Spanned<String>,
        tools: &[Tool],
        index: &HashMap<String, usize>,
    ) -> Option<u64> {
        match index.get(&name.value) {
            Some(&i) => Some(tools[i].max_limit()),
            None => {
                let hint = did_you_mean(&name.value, index.keys().map(String::as_str));
                self.push(
                    Pos::of(file, name),
                    checks::UNKNOWN_TOOL,
                    format!("no tool named `{}` in the tool manifest{hint}", name.value),
                );
                None
            }
        }
    }

    fn resource(
        &mut self,
        def: &raw::ResourceDef,
        defaults: &Defaults,
        tools: &[Tool],
        tool_index: &HashMap<String, usize>,
        renderer: &mut Renderer,
    ) -> Option<Resource> {
        let file = FileId::Resources;
        let before = self.findings.len();
        let uri_pos = Pos::of(file, &def.uri);
        let template = match UriTemplate::parse(&def.uri.value) {
            Ok(t) => t,
            Err(e) => {
                let code = if matches!(e, TemplateError::Scheme(_)) {
                    checks::TEMPLATE_SCHEME
                } else {
                    checks::TEMPLATE_SYNTAX
                };
                self.push(uri_pos, code, format!("`{}`: {e}", def.uri.value));
                return None;
            }
        };
        let vars: Vec<&str> = template.vars().collect();

        // Parameters: every variable has a rule; every rule entry names a variable.
        let mut params = Vec::new();
        for var in &vars {
            match def.params.get(*var) {
                Some(rule_name) => {
                    if let Some(rule) = self.rule(file, rule_name) {
                        params.push(Param {
                            name: (*var).to_owned(),
                            rule,
                            default: None,
                        });
                    }
                }
                None => self.push(
                    uri_pos,
                    checks::UNRULED_VARIABLE,
                    format!("variable `{var}` has no rule; add `{var}: <rule>` under `params`"),
                ),
            }
        }
        for (name, rule_name) in &def.params {
            if !vars.contains(&name.as_str()) {
                self.push(
                    Pos::of(file, rule_name),
                    checks::UNUSED_VARIABLE,
                    format!(
                        "`params` names `{name}`, which the template {} does not have",
                        template.as_str()
                    ),
                );
            }
        }
        for (name, value) in &def.defaults {
            let pos = Pos::of(file, value);
            let Some(param) = params.iter_mut().find(|p| p.name == *name) else {
                self.push(
                    pos,
                    checks::UNUSED_VARIABLE,
                    format!("`defaults` names `{name}`, which is not a variable of the template"),
                );
                continue;
            };
            if !template.query_vars().iter().any(|q| q == name) {
                self.push(
                    pos,
                    checks::BAD_ARGUMENT,
                    format!("`{name}` is a path variable; only query variables can have a default"),
                );
                continue;
            }
            if let Err(e) = param.rule.check_json(&value.value) {
                self.push(
                    pos,
                    checks::BAD_ARGUMENT,
                    format!("the default of `{name}` must be {e}"),
                );
                continue;
            }
            param.default = Some(value.value.clone());
        }

        // Scope: a numeric id needs a named owner before it (repo and org ids share one space).
        if let Some(first_int) = params
            .iter()
            .position(|p| p.rule.is_integer() && template.path_vars().any(|v| v == p.name))
            && !params[..first_int]
                .iter()
                .any(|p| !p.rule.is_integer() && template.path_vars().any(|v| v == p.name))
        {
            self.push(uri_pos, checks::SCOPELESS_ID, format!(
                "`{}` addresses a numeric id without a scope; put it under `repo/{{owner}}/{{repo}}/…` or `org/{{org}}/…`",
                template.as_str()
            ));
        }

        // Requests.
        let fetch = self.request(file, &def.fetch);
        let with_names: Vec<&str> = def.with.keys().map(String::as_str).collect();
        let mut with = Vec::new();
        for (name, line) in &def.with {
            if let Some(t) = self.request(file, line) {
                with.push((name.clone(), t));
            }
        }
        let mut used: HashSet<String> = HashSet::new();
        let mut requests: Vec<(&Spanned<String>, &RequestTemplate)> = Vec::new();
        if let Some(f) = &fetch {
            requests.push((&def.fetch, f));
        }
        for ((_, line), (_, t)) in def.with.iter().zip(&with) {
            requests.push((line, t));
        }
        for (line, t) in &requests {
            if t.method != Method::Get {
                self.push(
                    Pos::of(file, *line),
                    checks::REQUEST_SYNTAX,
                    format!("`{}`: resources only read; use GET", line.value),
                );
            }
        }

        // Shape: a list page or an entity with embeds.
        let shape = match &def.list {
            Some(list) => self.list_shape(def, list, &template, defaults, tools, tool_index, &vars),
            None => self.entity_shape(
                def,
                defaults,
                tools,
                tool_index,
                &with_names,
                &vars,
                &mut used,
            ),
        };
        let embed_requests: Vec<(&Spanned<String>, RequestTemplate)> = def
            .embed
            .values()
            .filter_map(|e| e.value.fetch.as_ref())
            .filter_map(|line| RequestTemplate::parse(&line.value).ok().map(|t| (line, t)))
            .collect();
        for (line, t) in requests
            .iter()
            .map(|(l, t)| (*l, *t))
            .chain(embed_requests.iter().map(|(l, t)| (*l, t)))
        {
            for placeholder in t.placeholders() {
                if vars.contains(&placeholder) {
                    used.insert(placeholder.to_owned());
                } else {
                    let hint = did_you_mean(placeholder, vars.iter().copied());
                    self.push(
                        Pos::of(file, line),
                        checks::UNBOUND_PLACEHOLDER,
                        format!(
                            "`{{{placeholder}}}` in `{}` is not a variable of {}{hint}",
                            line.value,
                            template.as_str()
                        ),
                    );
                }
            }
        }

        // Markdown.
        let mut markdown = None;
        if let Some(md) = &def.markdown {
            let name = def.name.value.clone();
            let extra = match &md.value.project {
                Some(p) => self.projection(file, p, &with_names, &vars),
                None => None,
            };
            match renderer.add(&name, &md.value.template.value) {
                Err(e) => self.push(
                    Pos::of(file, &md.value.template),
                    checks::MARKDOWN_SYNTAX,
                    format!("markdown template: {e}"),
                ),
                Ok(()) => {
                    let mut fields: HashSet<String> = HashSet::new();
                    if let Some(Shape::Entity { project, embeds }) = &shape {
                        fields.extend(project.field_names().map(str::to_owned));
                        for e in embeds {
                            fields.insert(e.field.clone());
                            fields.insert(format!("{}_truncated", e.field));
                        }
                    }
                    if let Some(Shape::List { .. }) = &shape {
                        fields.extend(
                            [
                                "page",
                                "limit",
                                "total_count",
                                "has_more",
                                "items",
                                "next",
                                "truncated",
                            ]
                            .map(str::to_owned),
                        );
                    }
                    if let Some(extra) = &extra {
                        fields.extend(extra.field_names().map(str::to_owned));
                        used.extend(extra.args().into_iter().map(str::to_owned));
                    }
                    for var in renderer.variables(&name) {
                        if !fields.contains(&var) {
                            let hint = did_you_mean(&var, fields.iter().map(String::as_str));
                            self.push(Pos::of(file, &md.value.template), checks::MARKDOWN_FIELD, format!(
                                "the markdown template reads `{var}`, which the projection does not produce{hint}"
                            ));
                        }
                    }
                }
            }
            markdown = Some(Markdown {
                template: name,
                extra,
                max_chars: md.value.max_chars.unwrap_or(defaults.markdown_max_chars),
            });
        }

        // Variables nothing reads.
        if let Some(Shape::List { .. }) = &shape {
            used.extend([PAGE.to_owned(), LIMIT.to_owned()]);
        }
        for var in &vars {
            if !used.contains(*var) {
                self.push(
                    uri_pos,
                    checks::UNUSED_VARIABLE,
                    format!(
                        "variable `{var}` of {} is used by no request and no projection",
                        template.as_str()
                    ),
                );
            }
        }

        // Caching.
        let cache = match def.cache.value {
            CacheClass::Mutable => Cache::Mutable,
            CacheClass::Immutable => {
                let keyed = params
                    .iter()
                    .any(|p| p.rule.is_full_sha() && template.path_vars().any(|v| v == p.name));
                if !keyed {
                    self.push(Pos::of(file, &def.cache), checks::MUTABLE_KEY, format!(
                        "{} is marked immutable but no path variable is a full 40-hex commit sha", template.as_str()
                    ));
                }
                Cache::Immutable {
                    ttl_ms: defaults.immutable_ttl_ms,
                }
            }
        };

        if self.findings.len() != before {
            return None;
        }
        let shape = shape?;
        let description = describe_resource(&def.description, &shape, cache, markdown.is_some());
        Some(Resource {
            name: def.name.value.clone(),
            title: def.title.clone(),
            description,
            template,
            params,
            fetch: fetch?,
            with,
            shape,
            markdown,
            cache,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn list_shape(
        &mut self,
        def: &raw::ResourceDef,
        list: &Spanned<raw::ListDef>,
        template: &UriTemplate,
        defaults: &Defaults,
        tools: &[Tool],
        tool_index: &HashMap<String, usize>,
        vars: &[&str],
    ) -> Option<Shape> {
        let file = FileId::Resources;
        let query = template.query_vars();
        if !(query.iter().any(|q| q == PAGE) && query.iter().any(|q| q == LIMIT)) {
            self.push(Pos::of(file, &def.uri), checks::TEMPLATE_SYNTAX, format!(
                "{} is a list: its template must end in `{{?{PAGE},{LIMIT}}}` (with any other query variables)",
                template.as_str()
            ));
        }
        if !def.embed.is_empty() {
            self.push(
                Pos::of(file, list),
                checks::WRONG_TYPE,
                "a list resource cannot also embed lists".into(),
            );
        }
        let cap = match &list.value.cap {
            Some(cap) => self.positive(file, cap)?,
            None => defaults.cap,
        };
        let max_limit = self.tool_ref(file, &list.value.tool, tools, tool_index)?;
        if max_limit < cap {
            self.push(Pos::of(file, &list.value.tool), checks::LIMIT_ABOVE_CAP, format!(
                "the cap {cap} is above the largest page of `{}` ({max_limit}): its sentinel's next call could not be made",
                list.value.tool.value
            ));
        }
        let from = match &list.value.from {
            Some(p) => Some(self.json_path(file, p)?),
            None => None,
        };
        let item = match &def.project {
            Some(p) => self.projection(file, p, &[], vars)?,
            None => Projection::identity(),
        };
        Some(Shape::List {
            from,
            item,
            cap,
            tool: list.value.tool.value.clone(),
            window: list.value.window,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn entity_shape(
        &mut self,
        def: &raw::ResourceDef,
        defaults: &Defaults,
        tools: &[Tool],
        tool_index: &HashMap<String, usize>,
        with_names: &[&str],
        vars: &[&str],
        used: &mut HashSet<String>,
    ) -> Option<Shape> {
        let file = FileId::Resources;
        let project = match &def.project {
            Some(p) => self.projection(file, p, with_names, vars),
            None => Some(Projection::identity()),
        };
        if let Some(p) = &project {
            used.extend(p.args().into_iter().map(str::to_owned));
        }
        let mut embeds = Vec::new();
        for (field, embed) in &def.embed {
            let e = &embed.value;
            let pos = Pos::of(file, embed);
            let cap = match &e.cap {
                Some(cap) => self.positive(file, cap),
                None => Some(defaults.cap),
            };
            let tool_max_limit = self.tool_ref(file, &e.tool, tools, tool_index);
            // `from` may start with `$name` to read a `with:` answer instead of the primary one.
            let (source, from) = match (&e.fetch, &e.from) {
                (Some(line), from) => (
                    RequestTemplate::parse(&line.value)
                        .ok()
                        .map(EmbedSource::Fetch),
                    from.clone(),
                ),
                (None, Some(from)) => match split_source(&from.value, with_names) {
                    Ok((source, rest)) => (
                        Some(source),
                        Some(Spanned {
                            value: rest,
                            referenced: from.referenced,
                            defined: from.defined,
                        }),
                    ),
                    Err(name) => {
                        self.push(
                            Pos::of(file, from),
                            checks::EXPRESSION,
                            format!("`${name}` names no `with:` request"),
                        );
                        (None, None)
                    }
                },
                (None, None) => {
                    self.push(
                        pos,
                        checks::WRONG_TYPE,
                        format!("embed `{field}` needs `fetch` or `from`"),
                    );
                    (None, None)
                }
            };
            if let Some(line) = &e.fetch {
                self.request(file, line);
            }
            let from = match &from {
                Some(p) => self.json_path(file, p),
                None => None,
            };
            let item = match &e.project {
                Some(p) => self.projection(file, p, &[], vars),
                None => Some(Projection::identity()),
            };
            if let Some(item) = &item {
                used.extend(item.args().into_iter().map(str::to_owned));
            }
            if let (Some(source), Some(cap), Some(tool_max_limit), Some(item)) =
                (source, cap, tool_max_limit, item)
            {
                embeds.push(Embed {
                    field: field.clone(),
                    source,
                    from,
                    cap,
                    keep: e.keep,
                    window: e.window,
                    tool: e.tool.value.clone(),
                    tool_max_limit,
                    item,
                });
            }
        }
        if embeds.iter().any(|e| {
            e.keep == Keep::Newest
                && e.window == raw::Window::Upstream
                && matches!(e.source, EmbedSource::Fetch(_))
        }) {
            self.push(
                Pos::start(file),
                checks::WRONG_TYPE,
                format!(
                    "resource `{}`: `keep: newest` needs the whole list; add `window: server`",
                    def.name.value
                ),
            );
        }
        Some(Shape::Entity {
            project: project?,
            embeds,
        })
    }

    fn tool(
        &mut self,
        def: &raw::ToolDef,
        toolsets: &IndexMap<String, String>,
        defaults: &Defaults,
    ) -> Option<Tool> {
        let file = FileId::Tools;
        let before = self.findings.len();
        let name = &def.name.value;
        let name_pos = Pos::of(file, &def.name);
        static SNAKE: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new("^[a-z][a-z0-9]*(_[a-z0-9]+)*$").expect("a constant pattern compiles")
        });
        if !SNAKE.is_match(name) || name.len() > MAX_TOOL_NAME {
            self.push(name_pos, checks::TOOL_NAME, format!(
                "tool name `{name}` must be snake_case (a-z, 0-9, single `_`) and at most {MAX_TOOL_NAME} characters"
            ));
        }
        if !toolsets.contains_key(&def.toolset.value) {
            let hint = did_you_mean(&def.toolset.value, toolsets.keys().map(String::as_str));
            self.push(
                Pos::of(file, &def.toolset),
                checks::UNKNOWN_TOOLSET,
                format!(
                    "toolset `{}` is not declared under `toolsets`{hint}",
                    def.toolset.value
                ),
            );
        }
        let call = self.request(file, &def.call);
        let list = match &def.list {
            Some(l) => self.tool_list(l, defaults),
            None => None,
        };
        let reserved: &[&str] = if def.list.is_some() {
            &[SUDO, PAGE, LIMIT]
        } else {
            &[SUDO]
        };
        let mut args = Vec::new();
        for (arg_name, arg) in &def.args {
            let pos = Pos::of(file, arg);
            if reserved.contains(&arg_name.as_str()) {
                self.push(
                    pos,
                    checks::BAD_ARGUMENT,
                    format!(
                        "`{arg_name}` is added to every {} by forgelens; do not declare it",
                        if arg_name == SUDO {
                            "tool"
                        } else {
                            "list tool"
                        }
                    ),
                );
                continue;
            }
            if let Some(call) = &call
                && let Some(a) = self.argument(arg_name, arg, call)
            {
                args.push(a);
            }
        }
        if let Some(call) = &call {
            for placeholder in call.placeholders() {
                if !def.args.contains_key(placeholder) {
                    self.push(Pos::of(file, &def.call), checks::UNBOUND_PLACEHOLDER, format!(
                        "`{{{placeholder}}}` in `{}` is not an argument; declare it under `args`", def.call.value
                    ));
                }
            }
        }
        let arg_names: Vec<&str> = def.args.keys().map(String::as_str).collect();
        let project = match &def.project {
            Some(p) => self.projection(file, p, &[], &arg_names),
            None => Some(Projection::identity()),
        };
        let call = call?;
        let mut annotations = Annotations::for_method(call.method);
        if let Some(a) = &def.annotations {
            annotations.read_only = a.read_only.unwrap_or(annotations.read_only);
            annotations.destructive = a.destructive.unwrap_or(annotations.destructive);
            annotations.idempotent = a.idempotent.unwrap_or(annotations.idempotent);
            annotations.open_world = a.open_world.unwrap_or(annotations.open_world);
        }
        // POST is also how some forges compute without changing anything (rendering markdown).
        if annotations.read_only && !matches!(call.method, Method::Get | Method::Post) {
            self.push(
                name_pos,
                checks::READ_ONLY_WRITE,
                format!(
                    "tool `{name}` calls {} but is marked read-only; only GET and POST tools may be",
                    call.method.as_str()
                ),
            );
        }
        if let Some(message) = body_conflict(&args) {
            self.push(
                name_pos,
                checks::BAD_ARGUMENT,
                format!("tool `{name}`: {message}"),
            );
        }
        if call.method == Method::Delete && !annotations.destructive {
            self.push(
                name_pos,
                checks::DELETE_NOT_DESTRUCTIVE,
                format!("tool `{name}` calls DELETE; it must be destructive"),
            );
        }
        if self.findings.len() != before {
            return None;
        }
        let project = project?;
        let input_schema = input_schema(&args, list.as_ref());
        let output_schema = output_schema(call.method, list.as_ref(), &project);
        Some(Tool {
            name: name.clone(),
            title: def.title.clone(),
            description: describe_tool(&def.description, list.as_ref()),
            toolset: def.toolset.value.clone(),
            call,
            args,
            input_schema,
            output_schema,
            list,
            project,
            annotations,
            accept: match def.accept {
                None | Some(AcceptDef::Json) => Accept::Json,
                Some(AcceptDef::Text) => Accept::Text,
                Some(AcceptDef::Binary) => Accept::Binary,
            },
        })
    }

    fn tool_list(
        &mut self,
        def: &Spanned<raw::ToolListDef>,
        defaults: &Defaults,
    ) -> Option<ToolList> {
        let file = FileId::Tools;
        let max_limit = match &def.value.max_limit {
            Some(m) => self.positive(file, m)?,
            None => DEFAULT_MAX_LIMIT,
        };
        let default_limit = match &def.value.default_limit {
            Some(d) => self.positive(file, d)?,
            None => defaults.cap.min(max_limit),
        };
        if default_limit > max_limit {
            let pos = def
                .value
                .default_limit
                .as_ref()
                .map_or(Pos::of(file, def), |d| Pos::of(file, d));
            self.push(
                pos,
                checks::LIMIT_ABOVE_CAP,
                format!("default_limit {default_limit} is above max_limit {max_limit}"),
            );
            return None;
        }
        let from = match &def.value.from {
            Some(p) => Some(self.json_path(file, p)?),
            None => None,
        };
        Some(ToolList {
            from,
            default_limit,
            max_limit,
            window: def.value.window,
        })
    }

    fn argument(
        &mut self,
        name: &str,
        def: &Spanned<raw::ArgDef>,
        call: &RequestTemplate,
    ) -> Option<Arg> {
        let file = FileId::Tools;
        let pos = Pos::of(file, def);
        let a = &def.value;
        let in_path = call.path_vars().any(|v| v == name);
        let in_query = call.query_vars().any(|(_, v)| v == name);
        let location = match a.location {
            Some(explicit) => {
                let consistent = match explicit {
                    ArgLocation::Path => in_path,
                    ArgLocation::Query => !in_path,
                    ArgLocation::Body
                    | ArgLocation::Payload
                    | ArgLocation::Form
                    | ArgLocation::File => !in_path && !in_query,
                };
                if !consistent {
                    self.push(pos, checks::BAD_ARGUMENT, format!("argument `{name}` is declared `in: {explicit:?}` but `{}` places it elsewhere", call.as_str()));
                    return None;
                }
                explicit
            }
            None if in_path => ArgLocation::Path,
            None if in_query || matches!(call.method, Method::Get | Method::Delete) => {
                ArgLocation::Query
            }
            None => ArgLocation::Body,
        };
        if let Some(schema) = &a.schema {
            return self.schema_argument(name, def, schema, location, in_path);
        }
        let check = match (&a.rule, &a.kind) {
            (Some(rule), None) => Check::Rule(self.rule(file, rule)?),
            (None, Some(_)) => {
                let schema = inline_schema(a);
                match Schema::compile(&schema) {
                    Ok(s) => Check::Schema(s),
                    Err(e) => {
                        self.push(pos, checks::BAD_ARGUMENT, format!("argument `{name}`: {e}"));
                        return None;
                    }
                }
            }
            (Some(_), Some(_)) => {
                self.push(
                    pos,
                    checks::BAD_ARGUMENT,
                    format!("argument `{name}` has both `rule` and `type`; keep one"),
                );
                return None;
            }
            (None, None) => {
                self.push(
                    pos,
                    checks::UNRULED_VARIABLE,
                    format!("argument `{name}` has neither `rule` nor `type`"),
                );
                return None;
            }
        };
        if let Some(default) = &a.default
            && let Err(e) = check.check(default)
        {
            self.push(
                pos,
                checks::BAD_ARGUMENT,
                format!("the default of `{name}` {e}"),
            );
            return None;
        }
        if in_path && a.required == Some(false) {
            self.push(
                pos,
                checks::BAD_ARGUMENT,
                format!("path argument `{name}` cannot be optional"),
            );
            return None;
        }
        Some(Arg {
            name: name.to_owned(),
            check,
            location,
            required: in_path || a.required.unwrap_or(false),
            default: a.default.clone(),
        })
    }
}

// Arguments with a whole JSON Schema, and the request bodies they make (the generated catalog
// needs both; any manifest may use them).
impl Compiler {
    /// An argument declared with `schema:`: the schema alone says what the value may be.
    fn schema_argument(
        &mut self,
        name: &str,
        def: &Spanned<raw::ArgDef>,
        schema: &Spanned<Value>,
        location: ArgLocation,
        in_path: bool,
    ) -> Option<Arg> {
        let pos = Pos::of(FileId::Tools, def);
        let a = &def.value;
        let beside = a.rule.is_some()
            || a.kind.is_some()
            || a.values.is_some()
            || a.items.is_some()
            || a.minimum.is_some()
            || a.maximum.is_some()
            || a.pattern.is_some()
            || a.max_length.is_some();
        let compiled = match &schema.value {
            _ if beside => Err(
                "`schema` replaces `rule`, `type` and their keywords; keep only `schema`".into(),
            ),
            Value::Object(map) => Schema::compile(map),
            _ => Err("`schema` must be a JSON Schema object".into()),
        };
        let check = match compiled {
            Ok(s) => Check::Schema(s),
            Err(e) => {
                self.push(pos, checks::BAD_ARGUMENT, format!("argument `{name}`: {e}"));
                return None;
            }
        };
        if location == ArgLocation::File && check.schema().get("type") != Some(&json!("string")) {
            self.push(
                pos,
                checks::BAD_ARGUMENT,
                format!("file argument `{name}` carries base64 text: give it `type: string`"),
            );
            return None;
        }
        if let Some(default) = &a.default
            && let Err(e) = check.check(default)
        {
            self.push(
                pos,
                checks::BAD_ARGUMENT,
                format!("the default of `{name}` {e}"),
            );
            return None;
        }
        Some(Arg {
            name: name.to_owned(),
            check,
            location,
            required: in_path || a.required.unwrap_or(false),
            default: a.default.clone(),
        })
    }
}

/// Why the arguments cannot make one request body: a JSON body, a whole payload and a multipart
/// form exclude one another, and there is only one payload.
fn body_conflict(args: &[Arg]) -> Option<String> {
    let named = |location: ArgLocation| -> Vec<&str> {
        args.iter()
            .filter(|a| a.location == location)
            .map(|a| a.name.as_str())
            .collect()
    };
    let fields = named(ArgLocation::Body);
    let payloads = named(ArgLocation::Payload);
    let mut form = named(ArgLocation::Form);
    form.extend(named(ArgLocation::File));
    let quote = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if payloads.len() > 1 {
        return Some(format!(
            "only one argument can be the whole body (`in: payload`), not {}",
            quote(&payloads)
        ));
    }
    let kinds = [
        ("JSON body fields", &fields),
        ("a payload", &payloads),
        ("multipart fields", &form),
    ];
    let present: Vec<_> = kinds
        .iter()
        .filter(|(_, names)| !names.is_empty())
        .collect();
    if present.len() > 1 {
        let described: Vec<String> = present
            .iter()
            .map(|(what, names)| format!("{what} ({})", quote(names)))
            .collect();
        return Some(format!(
            "a request has one body; these arguments make {}",
            described.join(" and ")
        ));
    }
    None
}

fn compile_rule(name: &str, def: &raw::RuleDef) -> Result<Rule, String> {
    let kind = def.kind.as_ref().map_or("string", |k| k.value.as_str());
    let kind = match kind {
        "string" => {
            if def.minimum.is_some() || def.maximum.is_some() {
                return Err("`minimum`/`maximum` apply to integers; set `type: integer`".into());
            }
            let pattern = match &def.pattern {
                // Rules match the whole value, whether or not the pattern is anchored.
                Some(p) => Some(
                    Regex::new(&format!("^(?:{})$", p.value))
                        .map_err(|e| format!("pattern does not compile: {e}"))?,
                ),
                None => None,
            };
            if pattern.is_none() && def.values.is_none() && def.max_length.is_none() {
                return Err("a string rule needs a `pattern`, an `enum` or a `max_length`".into());
            }
            RuleKind::Text {
                pattern,
                max_length: def.max_length,
                values: def.values.clone(),
            }
        }
        "integer" => {
            if def.pattern.is_some() || def.values.is_some() || def.max_length.is_some() {
                return Err("`pattern`, `enum` and `max_length` apply to strings".into());
            }
            if let (Some(lo), Some(hi)) = (def.minimum, def.maximum)
                && lo > hi
            {
                return Err(format!("minimum {lo} is above maximum {hi}"));
            }
            RuleKind::Integer {
                minimum: def.minimum,
                maximum: def.maximum,
            }
        }
        other => return Err(format!("type `{other}` is not `string` or `integer`")),
    };
    Ok(Rule {
        name: name.to_owned(),
        description: def.description.clone(),
        kind,
    })
}

/// Splits `$name.rest` into the `with:` source it reads and `$.rest`.
fn split_source(text: &str, with_names: &[&str]) -> Result<(EmbedSource, String), String> {
    let rest = text.strip_prefix('$').unwrap_or(text);
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, path) = rest.split_at(len);
    if name.is_empty() {
        return Ok((EmbedSource::Primary, text.to_owned()));
    }
    match with_names.iter().position(|n| *n == name) {
        Some(i) => Ok((EmbedSource::With(i), format!("${path}"))),
        None => Err(name.to_owned()),
    }
}

fn inline_schema(a: &raw::ArgDef) -> Map<String, Value> {
    let mut s = Map::new();
    if let Some(k) = &a.kind {
        s.insert("type".into(), json!(k.value));
    }
    if let Some(v) = &a.values {
        s.insert("enum".into(), json!(v));
    }
    if let Some(p) = &a.pattern {
        s.insert("pattern".into(), json!(p.value));
    }
    if let Some(m) = a.minimum {
        s.insert("minimum".into(), json!(m));
    }
    if let Some(m) = a.maximum {
        s.insert("maximum".into(), json!(m));
    }
    if let Some(m) = a.max_length {
        s.insert("maxLength".into(), json!(m));
    }
    if let Some(items) = &a.items {
        s.insert("items".into(), items.clone());
    }
    s
}

fn input_schema(args: &[Arg], list: Option<&ToolList>) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for arg in args {
        let mut schema = arg.check.schema();
        if let Some(d) = &arg.default {
            schema.insert("default".into(), d.clone());
        }
        properties.insert(arg.name.clone(), Value::Object(schema));
        if arg.required {
            required.push(json!(arg.name));
        }
    }
    if let Some(list) = list {
        properties.insert(
            PAGE.into(),
            json!({"type": "integer", "minimum": 1, "default": 1,
            "description": "Page number, from 1."}),
        );
        properties.insert(LIMIT.into(), json!({"type": "integer", "minimum": 1, "maximum": list.max_limit,
            "default": list.default_limit, "description": format!("Items per page, 1 to {}.", list.max_limit)}));
    }
    properties.insert(SUDO.into(), json!({"type": "string", "pattern": SUDO_PATTERN,
        "description": "Act as this user (sent as the Sudo header). Needs an admin token; leave out otherwise."}));
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

fn output_schema(
    method: Method,
    list: Option<&ToolList>,
    project: &Projection,
) -> Option<Map<String, Value>> {
    let object = |p: &Projection| {
        let mut s = json!({"type": "object"});
        if !p.is_identity() {
            let props: Map<String, Value> =
                p.field_names().map(|f| (f.to_owned(), json!({}))).collect();
            s["properties"] = Value::Object(props);
        }
        s
    };
    let schema = match (list, method) {
        (Some(_), _) => json!({
            "type": "object",
            "properties": {
                "page": {"type": "integer"},
                "limit": {"type": "integer"},
                "total_count": {"type": "integer", "description": "Only when the forge reports it."},
                "has_more": {"type": "boolean"},
                "next_page": {"type": "integer"},
                "items": {"type": "array", "items": object(project)},
            },
            "required": ["page", "limit", "has_more", "items"],
        }),
        (None, Method::Get) => object(project),
        (None, _) => return None,
    };
    match schema {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// The description clients show: the manifest's words, then the bounds the engine enforces.
fn describe_resource(base: &str, shape: &Shape, cache: Cache, markdown: bool) -> String {
    let mut d = base.trim().to_owned();
    match shape {
        Shape::List { cap, tool, .. } => d.push_str(&format!(
            " Bounds: `page` from 1, `limit` clamped to {cap} (the default); the answer has `total_count` when \
             the forge reports it, `has_more`, and when more remain `next` and a sentinel naming the `{tool}` tool."
        )),
        Shape::Entity { embeds, .. } => {
            for e in embeds {
                let which = match e.keep {
                    Keep::Newest => "the newest",
                    Keep::Oldest => "the first",
                };
                d.push_str(&format!(
                    " Embeds `{}`: {which} {} items at most; when capped, a sentinel names the `{}` tool for the rest.",
                    e.field, e.cap, e.tool
                ));
            }
        }
    }
    if markdown {
        d.push_str(" Returns a JSON block and a text/markdown block.");
    }
    if let Cache::Immutable { ttl_ms } = cache {
        d.push_str(&format!(
            " Immutable: the answer never changes; clients may cache it ({ttl_ms} ms)."
        ));
    }
    d
}

fn describe_tool(base: &str, list: Option<&ToolList>) -> String {
    let mut d = base.trim().to_owned();
    if let Some(l) = list {
        d.push_str(&format!(
            " Paged: `page` from 1, `limit` 1 to {} (default {}); the result has `items`, `has_more`, `next_page` \
             when more remain, and `total_count` when the forge reports it.",
            l.max_limit, l.default_limit
        ));
    }
    d
}
