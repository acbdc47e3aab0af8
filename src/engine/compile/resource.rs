//! Compiling resources, `resources/list` sources and completions.

use std::collections::HashSet;

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use super::finding::Kind;
use super::{Compiler, Defaults, ToolRefs};
use crate::engine::bound::{LIMIT, PAGE};
use crate::engine::complete::{Completion, Source};
use crate::engine::endpoint::Endpoint;
use crate::engine::listing::Listing;
use crate::engine::project::Projection;
use crate::engine::render::Renderer;
use crate::engine::request::RequestTemplate;
use crate::engine::resource::{
    Cache, Check, Embed, EmbedSource, Expect, Markdown, Param, Provisional, Resource, Shape,
};
use crate::engine::resource::{Carried, marked_of};
use crate::engine::template::{TemplateError, UriTemplate};
use crate::engine::text::TextSpec;
use crate::engine::tool::Tool;
use crate::manifest::diagnostic::did_you_mean;
use crate::manifest::raw::{self, CacheClass, Keep};
use crate::manifest::{FileId, Pos};

const FILE: FileId = FileId::Resources;

/// Fields a list page always has, for markdown checks.
const ENVELOPE: [&str; 7] = [
    "page",
    "limit",
    "total_count",
    "has_more",
    "items",
    "next",
    "truncated",
];
/// Fields a text answer adds.
const TEXT_FIELDS: [&str; 8] = [
    "start_line",
    "end_line",
    "total_lines",
    "start_byte",
    "end_byte",
    "line_bytes",
    "truncated",
    "note",
];

impl Compiler {
    pub(super) fn resource(
        &mut self,
        def: &raw::ResourceDef,
        defaults: &Defaults,
        tools: &ToolRefs,
        renderer: &mut Renderer,
    ) -> Option<Resource> {
        let before = self.findings.len();
        let uri_pos = Pos::of(FILE, &def.uri);
        let template = self.template(def)?;
        let vars: Vec<&str> = template.vars().collect();
        let params = self.params(def, &template, &vars);
        // Judged only when every variable has a rule, so one mistake gives one finding.
        if params.len() == vars.len() {
            self.scope(uri_pos, &template, &params);
        }

        let form = match form_of(def) {
            Ok(form) => form,
            Err(broken) => {
                let (pos, kind) = *broken;
                self.raise(pos, kind);
                return None;
            }
        };
        let (primary, inherited) = self.primary_line(def, &form, tools, &vars)?;
        let mut used: HashSet<String> = HashSet::new();
        let Requests {
            fetch,
            fallbacks,
            with,
        } = self.requests(def, &primary, inherited, &template, &vars, &mut used);
        let with_names: Vec<&str> = def.with.keys().map(String::as_str).collect();
        if !def.fallback.is_empty() && def.answered_as.is_none() {
            self.raise(Pos::of(FILE, &primary), Kind::FallbackWithoutAnsweredAs);
        }

        let mut secrets = self.secrets(FILE, &def.secrets);
        if let Some(tool) = form.tool().and_then(|name| tools.get(&name.value)) {
            secrets.extend(tool.endpoint.secrets.iter().cloned());
        }
        let checks = self.checks(def, &with_names, &vars, &params, &mut used);

        let shape = match form {
            Form::List(list) => self.list_shape(def, list, &template, defaults, tools, &vars),
            Form::Fetched(_) | Form::ToolEntity(_) => {
                self.entity_shape(def, defaults, tools, &with_names, &vars, &mut used)
            }
        };
        let text = self.resource_text(def, &with_names, &vars, &mut used);
        let markdown = self.markdown(
            def,
            defaults,
            renderer,
            &shape,
            text.is_some(),
            &with_names,
            &vars,
            &mut used,
        );

        // Paging consumes `page` and `limit`. Judged by the declaration, not the compiled shape,
        // so a list that fails to compile (an unknown `tool:`) is not also reported for them.
        if matches!(form, Form::List(_)) {
            used.extend([PAGE.to_owned(), LIMIT.to_owned()]);
        }
        for var in &vars {
            if !used.contains(*var) {
                let (var, template) = ((*var).to_owned(), template.as_str().to_owned());
                self.raise(uri_pos, Kind::UnusedVariable { var, template });
            }
        }
        let cache = self.cache(def, &template, &params, defaults);
        let provisional = self.provisional(def, cache, shape.as_ref());
        if self.findings.len() != before {
            return None;
        }
        let shape = shape?;
        let description = describe(
            &def.description,
            &shape,
            cache,
            provisional.as_ref(),
            markdown.is_some(),
            text.is_some(),
        );
        let marked = marked_of(&shape);
        Some(Resource {
            name: def.name.value.clone(),
            pos: Pos::of(FILE, &primary),
            title: def.title.clone(),
            description,
            template,
            params,
            endpoint: Endpoint {
                request: fetch?,
                secrets,
                marked,
            },
            answered_as: def.answered_as.clone(),
            fallbacks,
            with,
            checks,
            shape,
            text,
            markdown,
            cache,
            provisional,
            tool: def.tool.as_ref().map(|t| t.value.clone()),
            withheld: None,
            reads: Default::default(),
        })
    }

    fn template(&mut self, def: &raw::ResourceDef) -> Option<UriTemplate> {
        match UriTemplate::parse(&def.uri.value) {
            Ok(t) => Some(t),
            Err(e) => {
                let (uri, why) = (def.uri.value.clone(), e.to_string());
                let kind = match e {
                    TemplateError::Scheme(_) => Kind::TemplateScheme { uri, why },
                    _ => Kind::TemplateSyntax { uri, why },
                };
                self.raise(Pos::of(FILE, &def.uri), kind);
                None
            }
        }
    }

    /// The resource's requests — the primary one (`primary`, or its tool's compiled request,
    /// `inherited`), its fallbacks, the concurrent `with:` ones — and the embeds' fetches
    /// checked; the variables they read are added to `used`.
    fn requests(
        &mut self,
        def: &raw::ResourceDef,
        primary: &Spanned<String>,
        inherited: Option<RequestTemplate>,
        template: &UriTemplate,
        vars: &[&str],
        used: &mut HashSet<String>,
    ) -> Requests {
        let mut lines: Vec<&Spanned<String>> = vec![primary];
        lines.extend(def.fallback.iter().map(|f| &f.value.fetch));
        lines.extend(def.with.values());
        lines.extend(def.embed.values().filter_map(|e| e.value.fetch.as_ref()));
        let mut inherited = Some(inherited);
        let mut compiled = Vec::new();
        for line in &lines {
            // The primary request of a resource read through its tool is that tool's, renamed.
            let request = match inherited.take().flatten() {
                Some(t) => Some(t),
                None => self.request(FILE, line),
            };
            if let Some(t) = request {
                if !t.method.is_get() {
                    let line_text = line.value.clone();
                    self.raise(
                        Pos::of(FILE, *line),
                        Kind::ResourceWrites { line: line_text },
                    );
                }
                self.placeholders(FILE, line, &t, vars, template.as_str());
                used.extend(t.placeholders().map(str::to_owned));
                compiled.push(Some(t));
            } else {
                compiled.push(None);
            }
        }
        let mut compiled = compiled.into_iter();
        let fetch = compiled.next().flatten();
        let fallbacks = def
            .fallback
            .iter()
            .zip(compiled.by_ref())
            .filter_map(|(f, t)| t.map(|t| (t, f.value.answered_as.clone())))
            .collect();
        let with = def
            .with
            .keys()
            .zip(compiled.by_ref())
            .filter_map(|(name, t)| t.map(|t| (name.clone(), t)))
            .collect();
        Requests {
            fetch,
            fallbacks,
            with,
        }
    }

    /// The resource's `text:` block, and the variables it uses.
    fn resource_text(
        &mut self,
        def: &raw::ResourceDef,
        with_names: &[&str],
        vars: &[&str],
        used: &mut HashSet<String>,
    ) -> Option<TextSpec> {
        match &def.text {
            Some(t) => {
                let spec = self.text(FILE, t, with_names, vars);
                if let Some(spec) = &spec {
                    used.extend(
                        [
                            &spec.start_line,
                            &spec.end_line,
                            &spec.start_byte,
                            &spec.diff_file,
                        ]
                        .into_iter()
                        .flatten()
                        .cloned(),
                    );
                    if let Some(from) = &spec.from {
                        let mut read = Vec::new();
                        field_args(from, &mut read);
                        used.extend(read);
                    }
                }
                spec
            }
            None => None,
        }
    }

    /// The primary request line: an entity's `fetch`, or its tool's endpoint as the URI can
    /// fill it, with that request already compiled (the tool's, renamed). A resource and its
    /// tool are one endpoint, declared in the tool, so they cannot drift apart.
    fn primary_line(
        &mut self,
        def: &raw::ResourceDef,
        form: &Form,
        tools: &ToolRefs,
        vars: &[&str],
    ) -> Option<(Spanned<String>, Option<RequestTemplate>)> {
        let inherit = |c: &mut Compiler, name: &Spanned<String>| {
            c.tool_ref(FILE, name, tools)?;
            let tool = tools.get(&name.value)?;
            let mut renamed = true;
            for (arg, var) in &def.args {
                let problem = match (tool.takes_array(arg), vars.contains(&var.value.as_str())) {
                    (None, _) => Kind::NoSuchArgument {
                        tool: tool.name.clone(),
                        arg: arg.clone(),
                    },
                    (_, false) => Kind::RenamedNothing {
                        var: var.value.clone(),
                        uri: def.uri.value.clone(),
                    },
                    _ => continue,
                };
                c.raise(Pos::of(FILE, var), problem);
                renamed = false;
            }
            let request = inherited_fetch(&tool.endpoint.request, &def.args, vars);
            renamed.then(|| {
                let line = Spanned::new(request.as_str().to_owned(), name.referenced, name.defined);
                (line, Some(request))
            })
        };
        match form {
            Form::ToolEntity(tool) => inherit(self, tool),
            Form::List(list) => inherit(self, &list.value.tool),
            Form::Fetched(fetch) => {
                if let Some((_, var)) = def.args.first() {
                    self.raise(Pos::of(FILE, var), Kind::ArgsWithoutTool);
                }
                Some(((*fetch).clone(), None))
            }
        }
    }

    /// Every variable has a rule; every rule entry and default names a variable.
    fn params(
        &mut self,
        def: &raw::ResourceDef,
        template: &UriTemplate,
        vars: &[&str],
    ) -> Vec<Param> {
        let uri_pos = Pos::of(FILE, &def.uri);
        let mut params = Vec::new();
        for var in vars {
            let declared = def
                .params
                .get(*var)
                .or_else(|| self.variables.get(*var))
                .cloned();
            match declared {
                Some(rule_name) => {
                    if let Some(rule) = self.rule(FILE, &rule_name) {
                        params.push(Param {
                            name: (*var).to_owned(),
                            rule,
                            default: None,
                        });
                    }
                }
                None => {
                    let var = (*var).to_owned();
                    self.raise(uri_pos, Kind::UnruledVariable { var });
                }
            }
        }
        for (name, rule_name) in &def.params {
            if !vars.contains(&name.as_str()) {
                let (name, template) = (name.clone(), template.as_str().to_owned());
                self.raise(
                    Pos::of(FILE, rule_name),
                    Kind::ParamNotInTemplate { name, template },
                );
            }
        }
        for (name, value) in &def.defaults {
            let pos = Pos::of(FILE, value);
            let Some(param) = params.iter_mut().find(|p| p.name == *name) else {
                let name = name.clone();
                self.raise(pos, Kind::DefaultNotAVariable { name });
                continue;
            };
            if !template.query_vars().contains(name) {
                let name = name.clone();
                self.raise(pos, Kind::PathDefault { name });
                continue;
            }
            if let Err(e) = param.rule.check_json(&value.value) {
                let (name, why) = (name.clone(), e.to_string());
                self.raise(pos, Kind::DefaultRefused { name, why });
                continue;
            }
            param.default = Some(value.value.clone());
        }
        params
    }

    /// A numeric id needs a named scope before it: repository and organization ids share one
    /// integer space.
    fn scope(&mut self, pos: Pos, template: &UriTemplate, params: &[Param]) {
        let in_path = |p: &Param| template.path_vars().any(|v| v == p.name);
        if let Some(first_int) = params
            .iter()
            .position(|p| p.rule.is_integer() && in_path(p))
            && !params[..first_int]
                .iter()
                .any(|p| !p.rule.is_integer() && in_path(p))
        {
            let template = template.as_str().to_owned();
            self.raise(pos, Kind::ScopelessId { template });
        }
    }

    fn checks(
        &mut self,
        def: &raw::ResourceDef,
        with_names: &[&str],
        vars: &[&str],
        params: &[Param],
        used: &mut HashSet<String>,
    ) -> Vec<Check> {
        let mut out = Vec::new();
        for check in &def.checks {
            let c = &check.value;
            let pos = Pos::of(FILE, check);
            let expect = match (&c.equals, &c.ends_with) {
                (Some(t), None) => Expect::Equals(t.clone()),
                (None, Some(t)) => Expect::EndsWith(t.clone()),
                _ => {
                    self.raise(pos, Kind::CheckExpectation);
                    continue;
                }
            };
            let text = match &expect {
                Expect::Equals(t) | Expect::EndsWith(t) => t,
            };
            for var in vars {
                if text.contains(&format!("{{{var}}}")) {
                    used.insert((*var).to_owned());
                }
            }
            let mut when = Vec::new();
            for (var, value) in &c.when {
                match params.iter().find(|p| p.name == *var) {
                    Some(p) if p.rule.check_text(value).is_ok() => {
                        used.insert(var.clone());
                        when.push((var.clone(), value.clone()));
                    }
                    Some(p) => self.raise(
                        pos,
                        Kind::WhenNeverHolds {
                            var: var.clone(),
                            value: value.clone(),
                            expected: p.rule.expected(),
                        },
                    ),
                    None => {
                        let var = var.clone();
                        self.raise(pos, Kind::WhenNotAVariable { var });
                    }
                }
            }
            if let Some(value) = self.expression(
                Pos::of(FILE, &c.value),
                &c.value.value,
                with_names,
                vars,
                "check",
            ) {
                out.push(Check {
                    source: c.value.value.clone(),
                    value,
                    expect,
                    when,
                });
            }
        }
        out
    }

    fn list_shape(
        &mut self,
        def: &raw::ResourceDef,
        list: &Spanned<raw::ListDef>,
        template: &UriTemplate,
        defaults: &Defaults,
        tools: &ToolRefs,
        vars: &[&str],
    ) -> Option<Shape> {
        let query = template.query_vars();
        if !(query.iter().any(|q| q == PAGE) && query.iter().any(|q| q == LIMIT)) {
            let template = template.as_str().to_owned();
            self.raise(Pos::of(FILE, &def.uri), Kind::ListTemplate { template });
        }
        if !def.embed.is_empty() {
            self.raise(Pos::of(FILE, list), Kind::ListWithEmbeds);
        }
        let cap = match &list.value.cap {
            Some(cap) => self.positive(FILE, cap)?,
            None => defaults.cap,
        };
        let max_limit = self.tool_ref(FILE, &list.value.tool, tools)?;
        if max_limit < cap {
            let tool = list.value.tool.value.clone();
            let kind = Kind::CapAbovePage {
                cap,
                tool,
                max_limit,
            };
            self.raise(Pos::of(FILE, &list.value.tool), kind);
        }
        let tool = tools.get(&list.value.tool.value);
        if def.project.is_some() {
            let tool = list.value.tool.value.clone();
            self.raise(Pos::of(FILE, list), Kind::ListWithProjection { tool });
        }
        let item = self.picked_items(tool?, &list.value.fields, vars)?;
        // The read's filters the tool takes too: its sentinel names them with their values.
        let mut carried: Vec<Carried> = template
            .query_vars()
            .iter()
            .filter(|v| *v != PAGE && *v != LIMIT)
            .filter_map(|v| {
                Some(Carried {
                    arg: v.clone(),
                    var: v.clone(),
                    array: tool?.takes_array(v)?,
                })
            })
            .collect();
        // The renames were checked with the request line (`primary_line`).
        for (arg, var) in &def.args {
            if let Some(array) = tool.and_then(|t| t.takes_array(arg)) {
                carried.push(Carried {
                    arg: arg.clone(),
                    var: var.value.clone(),
                    array,
                });
            }
        }
        // Where the answer holds the array and how the endpoint pages are the endpoint's,
        // declared once in its tool.
        let answer = tool.and_then(|t| t.list.as_ref());
        Some(Shape::List {
            from: answer.and_then(|l| l.from.clone()),
            not_a_list: answer.and_then(|l| l.not_a_list.clone()),
            item,
            cap,
            tool: list.value.tool.value.clone(),
            window: answer.map(|l| l.window).unwrap_or_default(),
            only_arrays: list.value.only_arrays,
            carried,
        })
    }

    /// One `embed:` entry of an entity: a list inside it, read from the primary answer, a
    /// `with:` answer or its own fetch, its items its tool's unless it projects its own.
    #[allow(clippy::too_many_arguments)]
    fn embed(
        &mut self,
        field: &str,
        embed: &Spanned<raw::EmbedDef>,
        defaults: &Defaults,
        tools: &ToolRefs,
        with_names: &[&str],
        vars: &[&str],
        used: &mut HashSet<String>,
    ) -> Option<Embed> {
        let e = &embed.value;
        let pos = Pos::of(FILE, embed);
        let cap = match &e.cap {
            Some(cap) => self.positive(FILE, cap),
            None => Some(defaults.cap),
        };
        let tool_max_limit = self.tool_ref(FILE, &e.tool, tools);
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
                    self.raise(Pos::of(FILE, from), Kind::UnknownSource { name });
                    (None, None)
                }
            },
            (None, None) => {
                let field = field.to_owned();
                self.raise(pos, Kind::EmbedWithoutSource { field });
                (None, None)
            }
        };
        if e.keep == Keep::Newest && e.fetch.is_none() {
            let field = field.to_owned();
            self.raise(pos, Kind::NewestWithoutFetch { field });
        }
        let from = match &from {
            Some(p) => self.json_path(FILE, p),
            None => None,
        };
        let total = match &e.total {
            Some(p) => self.json_path(FILE, p),
            None => None,
        };
        // Like a list's, an embed's items are its tool's unless it projects its own.
        let item = match (&e.project, e.fields.first()) {
            (Some(_), Some(picked)) => {
                let field = field.to_owned();
                self.raise(
                    Pos::of(FILE, picked),
                    Kind::EmbedFieldsAndProjection { field },
                );
                None
            }
            (Some(p), None) => self.projection(FILE, p, &[], vars),
            (None, _) => tools
                .get(&e.tool.value)
                .and_then(|tool| self.picked_items(tool, &e.fields, vars)),
        };
        if let Some(item) = &item {
            used.extend(item.args().into_iter().map(str::to_owned));
        }
        Some(Embed {
            field: field.to_owned(),
            source: source?,
            from,
            total,
            cap: cap?,
            keep: e.keep,
            window: e.window,
            tool: e.tool.value.clone(),
            tool_max_limit: tool_max_limit?,
            item: item?,
        })
    }

    /// The item projection a list resource takes from its tool: the fields `fields` names, or
    /// all of them.
    fn picked_items(
        &mut self,
        tool: &Tool,
        fields: &[Spanned<String>],
        vars: &[&str],
    ) -> Option<Projection> {
        let names: Vec<&str> = fields.iter().map(|f| f.value.as_str()).collect();
        let picked = match tool.project.pick(&names) {
            Ok(picked) => picked,
            Err(missing) => {
                let pos = fields
                    .iter()
                    .find(|f| f.value == missing)
                    .map(|f| Pos::of(FILE, f));
                let known: Vec<&str> = tool.project.field_names().collect();
                let has = match known.is_empty() {
                    true => {
                        "it serves the forge's whole answer: give the resource (or the embed) its own `project`"
                            .to_owned()
                    }
                    false => format!("it has {}", known.join(", ")),
                };
                let kind = Kind::NoSuchField {
                    tool: tool.name.clone(),
                    field: missing.to_owned(),
                    has,
                };
                self.raise(pos.unwrap_or(tool.pos), kind);
                return None;
            }
        };
        let unbound: Vec<&str> = picked
            .args()
            .into_iter()
            .filter(|a| !vars.contains(a))
            .collect();
        if let Some(arg) = unbound.first() {
            let (tool_name, arg) = (tool.name.clone(), (*arg).to_owned());
            let kind = Kind::ToolReadsMissing {
                tool: tool_name,
                arg,
            };
            self.raise(tool.pos, kind);
            return None;
        }
        Some(picked)
    }

    fn entity_shape(
        &mut self,
        def: &raw::ResourceDef,
        defaults: &Defaults,
        tools: &ToolRefs,
        with_names: &[&str],
        vars: &[&str],
        used: &mut HashSet<String>,
    ) -> Option<Shape> {
        // Over a tool's fields, the marks are checked once they join: a mark may name an
        // author field the tool projects.
        let own = match (&def.project, &def.tool) {
            (Some(p), Some(_)) => self.unchecked_projection(FILE, p, with_names, vars),
            (Some(p), None) => self.projection(FILE, p, with_names, vars),
            (None, _) => Some(Projection::identity()),
        };
        let project = match (&def.tool, own) {
            (Some(name), Some(own)) => {
                let picked = self.picked_items(tools.get(&name.value)?, &def.fields, vars)?;
                let joined = picked.overridden_by(own);
                match &def.project {
                    Some(raw) => self.marks_checked(FILE, raw, joined, vars),
                    None => Some(joined),
                }
            }
            (None, own) => {
                if let Some(field) = def.fields.first() {
                    self.raise(Pos::of(FILE, field), Kind::FieldsWithoutTool);
                }
                own
            }
            (Some(_), None) => None,
        };
        if let Some(p) = &project {
            used.extend(p.args().into_iter().map(str::to_owned));
        }
        let embeds = def
            .embed
            .iter()
            .filter_map(|(field, embed)| {
                self.embed(field, embed, defaults, tools, with_names, vars, used)
            })
            .collect();
        Some(Shape::Entity {
            project: project?,
            embeds,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn markdown(
        &mut self,
        def: &raw::ResourceDef,
        defaults: &Defaults,
        renderer: &mut Renderer,
        shape: &Option<Shape>,
        text: bool,
        with_names: &[&str],
        vars: &[&str],
        used: &mut HashSet<String>,
    ) -> Option<Markdown> {
        let md = def.markdown.as_ref()?;
        let name = def.name.value.clone();
        let extra = match &md.value.project {
            Some(p) => self.projection(FILE, p, with_names, vars),
            None => None,
        };
        let pos = Pos::of(FILE, &md.value.template);
        if let Err(e) = renderer.add(&name, &md.value.template.value) {
            let why = e.to_string();
            self.raise(pos, Kind::MarkdownSyntax { why });
            return None;
        }
        let mut fields: HashSet<String> = HashSet::new();
        match shape {
            Some(Shape::Entity { project, embeds }) => {
                fields.extend(project.field_names().map(str::to_owned));
                for e in embeds {
                    fields.insert(e.field.clone());
                    fields.insert(format!("{}_truncated", e.field));
                }
            }
            Some(Shape::List { item, .. }) => {
                fields.extend(ENVELOPE.map(str::to_owned));
                fields.extend(item.field_names().map(str::to_owned));
            }
            None => {}
        }
        if text {
            fields.extend(TEXT_FIELDS.map(str::to_owned));
        }
        if let Some(extra) = &extra {
            fields.extend(extra.field_names().map(str::to_owned));
            used.extend(extra.args().into_iter().map(str::to_owned));
        }
        let reads = renderer.variables(&name);
        for var in &reads {
            if !fields.contains(var) {
                let hint = did_you_mean(var, fields.iter().map(String::as_str));
                let var = var.clone();
                self.raise(pos, Kind::MarkdownField { var, hint });
            }
        }
        // The top-level marks of the answer and of `extra` that the template shows: the block
        // is user-written text when there is one.
        let top = match shape {
            Some(Shape::Entity { project, .. }) => project.marks(),
            Some(Shape::List { .. }) | None => Vec::new(),
        };
        let shown = top
            .into_iter()
            .chain(extra.iter().flat_map(Projection::marks))
            .filter(|m| reads.contains(&m.field))
            .collect();
        Some(Markdown {
            extra,
            reads,
            shown,
            max_chars: md.value.max_chars.unwrap_or(defaults.markdown_max_chars),
        })
    }

    fn cache(
        &mut self,
        def: &raw::ResourceDef,
        template: &UriTemplate,
        params: &[Param],
        defaults: &Defaults,
    ) -> Cache {
        let Some(class) = &def.cache else {
            return Cache::Mutable;
        };
        match class.value {
            CacheClass::Mutable => Cache::Mutable,
            CacheClass::Immutable => {
                let keyed = params
                    .iter()
                    .any(|p| p.rule.is_full_sha() && template.path_vars().any(|v| v == p.name));
                if !keyed {
                    let template = template.as_str().to_owned();
                    self.raise(Pos::of(FILE, class), Kind::MutableKey { template });
                }
                Cache::Immutable {
                    ttl_ms: defaults.immutable_ttl_ms,
                }
            }
        }
    }

    /// The `provisional` rule: only on an immutable entity, on a field its projection produces.
    fn provisional(
        &mut self,
        def: &raw::ResourceDef,
        cache: Cache,
        shape: Option<&Shape>,
    ) -> Option<Provisional> {
        let rule = def.provisional.as_ref()?;
        let pos = Pos::of(FILE, rule);
        let problem = match (cache, shape) {
            (Cache::Mutable, _) => Some(Kind::ProvisionalOnMutable),
            (_, Some(Shape::Entity { project, .. }))
                if !project.field_names().any(|f| f == rule.value.field) =>
            {
                let field = rule.value.field.clone();
                Some(Kind::ProvisionalField { field })
            }
            (_, Some(Shape::List { .. })) => Some(Kind::ProvisionalOnList),
            _ if rule.value.ttl_ms == 0 => Some(Kind::ProvisionalTtl),
            _ => None,
        };
        if let Some(kind) = problem {
            self.raise(pos, kind);
            return None;
        }
        Some(Provisional {
            field: rule.value.field.clone(),
            values: rule.value.values.clone(),
            ttl_ms: rule.value.ttl_ms,
        })
    }

    pub(super) fn listing(
        &mut self,
        def: &Spanned<raw::ListingDef>,
        resources: &[Resource],
    ) -> Option<Listing> {
        let l = &def.value;
        let before = self.findings.len();
        let fetch = self.request(FILE, &l.fetch);
        if let Some(f) = &fetch {
            self.placeholders(
                FILE,
                &l.fetch,
                f,
                &[],
                "a listing (listings take no variables)",
            );
        }
        let Some(resource) = resources
            .iter()
            .find(|r| r.template.as_str() == l.uri.value)
        else {
            let hint = did_you_mean(&l.uri.value, resources.iter().map(|r| r.template.as_str()));
            let uri = l.uri.value.clone();
            self.raise(Pos::of(FILE, &l.uri), Kind::UnknownTemplate { uri, hint });
            return None;
        };
        let mut args = Vec::new();
        for var in resource.template.vars() {
            if let Some(expr) = l.args.get(var) {
                if let Some(field) =
                    self.expression(Pos::of(FILE, expr), &expr.value, &[], &[], var)
                {
                    args.push((var.to_owned(), field));
                }
            } else if resource.template.path_vars().any(|v| v == var) {
                let (var, uri) = (var.to_owned(), l.uri.value.clone());
                self.raise(
                    Pos::of(FILE, &l.uri),
                    Kind::ListingWithoutValue { var, uri },
                );
            }
        }
        let name = self.expression(Pos::of(FILE, &l.name), &l.name.value, &[], &[], "name");
        let description = match &l.description {
            Some(d) => self.expression(Pos::of(FILE, d), &d.value, &[], &[], "description"),
            None => None,
        };
        if self.findings.len() != before {
            return None;
        }
        Some(Listing {
            fetch: fetch?,
            needs_token: l.needs_token,
            template: resource.template.clone(),
            args,
            name: name?,
            description,
            repository: resource.repository_vars(),
        })
    }

    pub(super) fn completion(
        &mut self,
        var: &str,
        def: &Spanned<raw::CompletionDef>,
        resources: &[Resource],
    ) -> Option<Completion> {
        let before = self.findings.len();
        let templates: Vec<&Resource> = resources
            .iter()
            .filter(|r| r.template.vars().any(|v| v == var))
            .collect();
        if templates.is_empty() {
            let var = var.to_owned();
            self.raise(Pos::of(FILE, def), Kind::CompletionNotAVariable { var });
            return None;
        }
        // A source may use what was typed (`{value}`) and any variable of a template having `var`.
        let mut vars: Vec<&str> = vec!["value"];
        for r in &templates {
            vars.extend(r.template.vars());
        }
        let mut sources = Vec::new();
        for source in &def.value.sources {
            let s = &source.value;
            let Some(fetch) = self.request(FILE, &s.fetch) else {
                continue;
            };
            self.placeholders(FILE, &s.fetch, &fetch, &vars, "a completion source");
            let from = match &s.from {
                Some(p) => self.json_path(FILE, p),
                None => None,
            };
            let value =
                self.expression(Pos::of(FILE, &s.value), &s.value.value, &[], &vars, "value");
            let mut filter = Vec::new();
            for (expr, wanted) in &s.filter {
                if let Some(field) =
                    self.expression(Pos::of(FILE, source), expr, &[], &vars, "where")
                {
                    filter.push((field, wanted.clone()));
                }
            }
            if let Some(value) = value {
                sources.push(Source {
                    fetch,
                    from,
                    value,
                    filter,
                });
            }
        }
        (self.findings.len() == before).then_some(Completion { sources })
    }
}

/// The variables an expression field reads.
fn field_args(field: &crate::engine::project::Field, out: &mut Vec<String>) {
    let projection = Projection::new(vec![(String::new(), field.clone())]);
    out.extend(projection.args().into_iter().map(str::to_owned));
}

/// The form of a resource, decided once from which of `fetch`, `list` and `tool` it declares:
/// the compiler matches on it, so no other combination reaches the rest.
#[derive(Clone, Copy)]
enum Form<'a> {
    /// An entity answered by a request of its own.
    Fetched(&'a Spanned<String>),
    /// An entity that is a tool's endpoint.
    ToolEntity(&'a Spanned<String>),
    /// A list that is its tool's endpoint.
    List(&'a Spanned<raw::ListDef>),
}

impl Form<'_> {
    /// The tool whose endpoint the resource is.
    fn tool(&self) -> Option<&Spanned<String>> {
        match self {
            Form::Fetched(_) => None,
            Form::ToolEntity(tool) => Some(tool),
            Form::List(list) => Some(&list.value.tool),
        }
    }
}

/// A resource's compiled requests: the primary one (absent when its line does not compile),
/// its fallbacks with what each answers as, and the `with:` ones by name.
struct Requests {
    fetch: Option<RequestTemplate>,
    fallbacks: Vec<(RequestTemplate, String)>,
    with: Vec<(String, RequestTemplate)>,
}

/// The resource's form, or the rule its keys break and where.
fn form_of(def: &raw::ResourceDef) -> Result<Form<'_>, Box<(Pos, Kind)>> {
    match (&def.fetch, &def.list, &def.tool) {
        (None, None, Some(tool)) => Ok(Form::ToolEntity(tool)),
        (None, Some(list), None) => Ok(Form::List(list)),
        (Some(fetch), None, None) => Ok(Form::Fetched(fetch)),
        (_, Some(_), Some(tool)) => Err(Box::new((Pos::of(FILE, tool), Kind::ToolBesideList))),
        (Some(fetch), None, Some(tool)) => {
            let tool = tool.value.clone();
            Err(Box::new((
                Pos::of(FILE, fetch),
                Kind::FetchBesideTool { tool },
            )))
        }
        (Some(fetch), Some(list), None) => {
            let tool = list.value.tool.value.clone();
            Err(Box::new((
                Pos::of(FILE, fetch),
                Kind::FetchBesideList { tool },
            )))
        }
        (None, None, None) => {
            let resource = def.name.value.clone();
            Err(Box::new((
                Pos::of(FILE, &def.uri),
                Kind::NoRequest { resource },
            )))
        }
    }
}

/// A tool's request as a resource reads it: placeholders renamed to the URI's variables
/// (`renames`, tool argument → variable), and of the query only the fixed pairs and those the
/// URI can fill. The tool's other filters stay the tool's.
fn inherited_fetch(
    call: &RequestTemplate,
    renames: &IndexMap<String, Spanned<String>>,
    vars: &[&str],
) -> RequestTemplate {
    call.renamed(
        |arg| renames.get(arg).map_or(arg.to_owned(), |v| v.value.clone()),
        |var| vars.contains(&var),
    )
}

/// Splits `$name.rest` into the `with:` source it reads and `$.rest`; the error is a `name`
/// that names no `with:` request of the resource.
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

/// The description clients show: the manifest's words, then the bounds the engine enforces.
fn describe(
    base: &str,
    shape: &Shape,
    cache: Cache,
    provisional: Option<&Provisional>,
    markdown: bool,
    text: bool,
) -> String {
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
    if text {
        d.push_str(" Text is served as a range of lines (`start_line`, `end_line`); the answer says which lines of how many.");
    }
    if markdown {
        d.push_str(" Returns a JSON block and a text/markdown block.");
    }
    if let Cache::Immutable { ttl_ms } = cache {
        match provisional {
            None => d.push_str(&format!(
                " Immutable: the answer never changes; clients may cache it ({ttl_ms} ms)."
            )),
            Some(p) => d.push_str(&format!(
                " Final once `{}` is no longer {}: clients may then cache it ({ttl_ms} ms); before, for {} ms (`ttlMs` says which).",
                p.field,
                p.values.join(" or "),
                p.ttl_ms
            )),
        }
    }
    d
}
