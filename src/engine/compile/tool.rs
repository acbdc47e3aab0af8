//! Compiling tools: arguments and where they go, paging, text answers and annotations. The
//! schemas announced in `tools/list` are derived from the result (see `engine::tool`).

use std::collections::HashMap;

use indexmap::IndexMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value, json};
use serde_saphyr::Spanned;

use super::finding::Kind;
use super::{Compiler, DEFAULT_MAX_LIMIT, Defaults, MAX_SUMMARY, MAX_TOOL_NAME};
use crate::engine::bound::{LIMIT, PAGE};
use crate::engine::endpoint::Endpoint;
use crate::engine::policy::marks::Marked;
use crate::engine::project::{FieldType, Projection};
use crate::engine::request::RequestTemplate;
use crate::engine::schema::{Check, Schema};
use crate::engine::tool::{Annotations, Arg, Confirm, SUDO, Scope, Tool, ToolList, summary_of};
use crate::forge::{Accept, Method};
use crate::manifest::raw::{self, AcceptDef, ArgLocation};
use crate::manifest::{FileId, Pos};

impl Compiler {
    pub(super) fn tool(
        &mut self,
        def: &raw::ToolDef,
        toolset: &str,
        defaults: &Defaults,
        shared: &IndexMap<String, Spanned<raw::ArgDef>>,
    ) -> Option<Tool> {
        let file = FileId::Tools;
        let before = self.findings.len();
        let name = &def.name.value;
        let name_pos = Pos::of(file, &def.name);
        let summary = self.tool_name_and_summary(def);
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
        let declared = declared_args(def, call.as_ref(), shared);
        let mut args = self.tool_args(def, &declared, call.as_ref(), reserved);
        let arg_names: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
        let project = match &def.project {
            Some(p) => self.projection(file, p, &[], &arg_names),
            None => Some(Projection::identity()),
        };
        let text = match &def.text {
            Some(t) => self.text(file, t, &[], &arg_names),
            None => None,
        };
        if def.text.is_some() && def.list.is_some() {
            let tool = name.clone();
            self.raise(name_pos, Kind::ListAndText { tool });
        }
        // What the text block reads is forgelens's to use, not the forge's.
        if let Some(text) = &text {
            let local = [
                &text.start_line,
                &text.end_line,
                &text.start_byte,
                &text.diff_file,
            ];
            for arg in &mut args {
                arg.local = local
                    .iter()
                    .any(|l| l.as_deref() == Some(arg.name.as_str()));
            }
        }
        let local_types = self.field_type_table(&def.field_types);
        let item_schema = project
            .as_ref()
            .and_then(|p| self.item_schema(def, def.project.as_ref(), p, &local_types));
        // Fields of the whole answer beside a list's items, typed like the items' fields.
        let beside_def = def.list.as_ref().and_then(|l| l.value.beside.as_ref());
        let beside = beside_def.and_then(|raw| {
            let projection = self.projection(file, raw, &[], &arg_names)?;
            let schema = self.item_schema(def, Some(raw), &projection, &local_types)?;
            Some((projection, schema.into_boxed_str()))
        });
        if beside_def.is_some() && beside.is_none() {
            return None;
        }
        let list = list.map(|l| ToolList { beside, ..l });
        let secrets = self.secrets(file, &def.secrets);
        let scope = self.tool_scope(def);
        let confirm = match &def.confirm {
            Some(c) => self.confirm(def, c, &args, &arg_names),
            None => None,
        };
        let call = call?;
        let annotations = self.annotations(def, &call, &args);
        if self.findings.len() != before {
            return None;
        }
        let project = project?;
        let item_schema = item_schema?.into_boxed_str();
        // The escape hatch's caller picks the method: its answers are unshaped.
        let marked = match call.method.fixed() {
            None => Marked::every_field(),
            Some(_) => {
                let at = if list.is_some() { "items[]." } else { "" };
                let text_mark = text.as_ref().and_then(|t| t.untrusted.as_ref());
                let beside = list.as_ref().and_then(|l| l.beside.as_ref());
                let parts = std::iter::once((at.to_owned(), project.marks()))
                    .chain(beside.map(|(b, _)| (String::new(), b.marks())))
                    .collect();
                Marked::new(parts, text_mark)
            }
        };
        Some(Tool {
            name: name.clone(),
            pos: Pos::of(file, &def.call),
            title: def.title.clone(),
            description: def.description.trim().to_owned(),
            summary: summary.to_owned(),
            keywords: def.keywords.clone(),
            toolset: toolset.to_owned(),
            endpoint: Endpoint {
                request: call,
                secrets,
                marked,
            },
            args,
            list,
            text,
            project,
            item_schema,
            scope,
            annotations,
            accept: match def.accept {
                None | Some(AcceptDef::Json) => Accept::Json,
                Some(AcceptDef::Text) => Accept::Text,
                Some(AcceptDef::Binary) => Accept::Binary,
                Some(AcceptDef::Any) => Accept::Any,
            },
            confirm,
            needs: def.needs.clone(),
            via: None,
            generated: false,
            reads: Default::default(),
        })
    }

    /// A tool's `confirm`: an argument of text values, a path to them in the answer, and a GET
    /// over the tool's arguments that reads the values there are.
    fn confirm(
        &mut self,
        def: &raw::ToolDef,
        c: &Spanned<raw::ConfirmDef>,
        args: &[Arg],
        arg_names: &[&str],
    ) -> Option<Confirm> {
        let file = FileId::Tools;
        let arg = &c.value.arg;
        let texts = args.iter().find(|a| a.name == arg.value).is_some_and(|a| {
            let schema = a.check.schema();
            let text = |s: &Map<String, Value>| s.get("type") == Some(&json!("string"));
            text(&schema)
                || schema
                    .get("items")
                    .and_then(Value::as_object)
                    .is_some_and(text)
        });
        if !texts {
            let kind = Kind::ConfirmArgument {
                tool: def.name.value.clone(),
                arg: arg.value.clone(),
            };
            self.raise(Pos::of(file, arg), kind);
            return None;
        }
        let found = self.json_path(file, &c.value.found)?;
        let mut known = Vec::new();
        for k in &c.value.known {
            let line = self.request(file, &k.fetch)?;
            self.placeholders(file, &k.fetch, &line, arg_names, &def.name.value);
            if !line.method.is_get() {
                let kind = Kind::ConfirmNotGet {
                    tool: def.name.value.clone(),
                };
                self.raise(Pos::of(file, &k.fetch), kind);
                return None;
            }
            known.push((line, self.json_path(file, &k.value)?));
        }
        Some(Confirm {
            arg: arg.value.clone(),
            found,
            what: c.value.what.clone(),
            known,
        })
    }

    /// The compiled arguments of a tool from its `declared` ones: none of the `reserved` names
    /// forgelens adds itself, and every placeholder of the request line declared.
    fn tool_args(
        &mut self,
        def: &raw::ToolDef,
        declared: &[(&String, &Spanned<raw::ArgDef>)],
        call: Option<&RequestTemplate>,
        reserved: &[&str],
    ) -> Vec<Arg> {
        let file = FileId::Tools;
        let mut args = Vec::new();
        for &(arg_name, arg) in declared {
            let pos = Pos::of(file, arg);
            if reserved.contains(&arg_name.as_str()) {
                let to = if arg_name == SUDO {
                    "tool"
                } else {
                    "list tool"
                };
                let name = arg_name.clone();
                self.raise(pos, Kind::Reserved { name, to });
                continue;
            }
            if let Some(call) = call
                && let Some(a) = self.argument(arg_name, arg, call)
            {
                args.push(a);
            }
        }
        // A call names each argument once, by its name or one of its aliases.
        for (arg_name, arg) in declared {
            for alias in &arg.value.aliases {
                let taken = reserved.contains(&alias.as_str())
                    || declared.iter().any(|(other, def)| {
                        *other == alias || (other != arg_name && def.value.aliases.contains(alias))
                    });
                if taken {
                    let kind = Kind::AliasTaken {
                        name: (*arg_name).clone(),
                        alias: alias.clone(),
                    };
                    self.raise(Pos::of(file, *arg), kind);
                }
            }
        }
        if let Some(call) = call {
            for placeholder in call.placeholders() {
                if !declared.iter().any(|(n, _)| *n == placeholder) {
                    let kind = Kind::UndeclaredArgument {
                        placeholder: placeholder.to_owned(),
                        line: def.call.value.clone(),
                    };
                    self.raise(Pos::of(file, &def.call), kind);
                }
            }
        }
        args
    }

    /// The tool's annotations: its method's, as the manifest overrides them, checked against
    /// the method and the arguments.
    fn annotations(
        &mut self,
        def: &raw::ToolDef,
        call: &RequestTemplate,
        args: &[Arg],
    ) -> Annotations {
        let name = &def.name.value;
        let name_pos = Pos::of(FileId::Tools, &def.name);
        let mut annotations = Annotations::for_method(call.method.fixed());
        if let Some(a) = &def.annotations {
            annotations.read_only = a.read_only.unwrap_or(annotations.read_only);
            annotations.destructive = a.destructive.unwrap_or(annotations.destructive);
            annotations.idempotent = a.idempotent.unwrap_or(annotations.idempotent);
            annotations.open_world = a.open_world.unwrap_or(annotations.open_world);
        }
        // POST is also how some forges compute without changing anything (rendering markdown).
        if annotations.read_only && !matches!(call.method.fixed(), Some(Method::Get | Method::Post))
        {
            let kind = Kind::ReadOnlyWrite {
                tool: name.clone(),
                method: call
                    .method
                    .fixed()
                    .map_or("a method of the caller's choosing", |m| m.as_str())
                    .to_owned(),
            };
            self.raise(name_pos, kind);
        }
        if let Some(why) = body_conflict(args) {
            let tool = name.clone();
            self.raise(name_pos, Kind::BodyConflict { tool, why });
        }
        if call.method.fixed() == Some(Method::Delete) && !annotations.destructive {
            let tool = name.clone();
            self.raise(name_pos, Kind::DeleteNotDestructive { tool });
        }
        annotations
    }

    /// A tool's name is snake_case and short; the first sentence of its description (what
    /// `tools/list` shows, returned) is short too.
    fn tool_name_and_summary<'d>(&mut self, def: &'d raw::ToolDef) -> &'d str {
        let name = &def.name.value;
        let name_pos = Pos::of(FileId::Tools, &def.name);
        static SNAKE: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new("^[a-z][a-z0-9]*(_[a-z0-9]+)*$").expect("a constant pattern compiles")
        });
        if !SNAKE.is_match(name) || name.len() > MAX_TOOL_NAME {
            let (name, max) = (name.clone(), MAX_TOOL_NAME);
            self.raise(name_pos, Kind::ToolName { name, max });
        }
        let summary = summary_of(&def.description);
        if summary.chars().count() > MAX_SUMMARY {
            let kind = Kind::LongSummary {
                tool: name.clone(),
                length: summary.chars().count(),
                max: MAX_SUMMARY,
            };
            self.raise(name_pos, kind);
        }
        summary
    }

    /// What `--allow-repos` holds the tool's answers to: `repository_of`.
    fn tool_scope(&mut self, def: &raw::ToolDef) -> Scope {
        let file = FileId::Tools;
        let repository_of = match def.repository_of.as_ref().map(|r| (r, &r.value)) {
            None => Vec::new(),
            Some((at, raw::OneOrTwo::One(path))) => self
                .json_path(
                    file,
                    &Spanned {
                        value: path.clone(),
                        referenced: at.referenced,
                        defined: at.defined,
                    },
                )
                .into_iter()
                .collect(),
            Some((at, raw::OneOrTwo::Two(paths))) if paths.len() == 2 => paths
                .iter()
                .filter_map(|p| {
                    self.json_path(
                        file,
                        &Spanned {
                            value: p.clone(),
                            referenced: at.referenced,
                            defined: at.defined,
                        },
                    )
                })
                .collect(),
            Some((at, raw::OneOrTwo::Two(_))) => {
                self.raise(Pos::of(file, at), Kind::RepositoryOfPaths);
                Vec::new()
            }
        };
        Scope { repository_of }
    }

    /// Parses a `field_types` map; a bad type name is a finding.
    pub(super) fn field_type_table(
        &mut self,
        defs: &IndexMap<String, Vec<Spanned<String>>>,
    ) -> HashMap<String, FieldType> {
        let mut table = HashMap::new();
        for (type_text, names) in defs {
            let ty: FieldType = match type_text.parse() {
                Ok(ty) => ty,
                Err(why) => {
                    let pos = names
                        .first()
                        .map_or(Pos::start(FileId::Tools), |n| Pos::of(FileId::Tools, n));
                    self.raise(pos, Kind::FieldTypeWord(why));
                    continue;
                }
            };
            for name in names {
                if let Some(earlier) = table.insert(name.value.clone(), ty.clone()) {
                    let kind = Kind::TypedTwice {
                        name: name.value.clone(),
                        earlier: earlier.to_string(),
                        ty: ty.to_string(),
                    };
                    self.raise(Pos::of(FileId::Tools, name), kind);
                }
            }
        }
        table
    }

    /// The schema of one result (or list item) of tool `name`: `local` types first, then the
    /// manifest's.
    /// The JSON Schema text of what `project` (written as `raw`) makes of one answer or item.
    fn item_schema(
        &mut self,
        def: &raw::ToolDef,
        raw: Option<&raw::Projection>,
        project: &Projection,
        local: &HashMap<String, FieldType>,
    ) -> Option<String> {
        let name = &def.name.value;
        let (global, used) = (&self.field_types, &mut self.field_types_used);
        let mut types = |field: &str| match local.get(field) {
            Some(ty) => Some(ty.clone()),
            None => {
                let ty = global.get(field).cloned();
                if ty.is_some() {
                    used.insert(field.to_owned());
                }
                ty
            }
        };
        match project.schema(&mut types) {
            Ok(schema) => Some(schema),
            Err(errors) => {
                for e in errors {
                    // At the top-level field the error is about (nested fields are inside it).
                    let top = e.field.split('.').next().unwrap_or_default();
                    let pos = match raw.and_then(|p| p.get(top)) {
                        Some(field) => Pos::of(FileId::Tools, field),
                        None => Pos::of(FileId::Tools, &def.name),
                    };
                    let kind = Kind::FieldUntyped {
                        tool: name.clone(),
                        field: e.field.clone(),
                        why: e.why.to_string(),
                    };
                    self.raise(pos, kind);
                }
                None
            }
        }
    }

    /// A declared field type no tool's projection uses is a leftover or a misspelling.
    pub(super) fn unused_field_types(&mut self, defs: &IndexMap<String, Vec<Spanned<String>>>) {
        for name in defs.values().flatten() {
            if !self.field_types_used.contains(&name.value)
                && self.field_types.contains_key(&name.value)
            {
                let kind = Kind::UnusedFieldType {
                    name: name.value.clone(),
                };
                self.raise(Pos::of(FileId::Tools, name), kind);
            }
        }
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
            let kind = Kind::DefaultAboveMax {
                default_limit,
                max_limit,
            };
            self.raise(pos, kind);
            return None;
        }
        let from = match &def.value.from {
            Some(p) => Some(self.json_path(file, p)?),
            None => None,
        };
        if def.value.page_only && default_limit != max_limit {
            let kind = Kind::PageOnlySizes {
                default_limit,
                max_limit,
            };
            self.raise(Pos::of(file, def), kind);
            return None;
        }
        Some(ToolList {
            from,
            default_limit,
            max_limit,
            window: def.value.window,
            page_only: def.value.page_only,
            not_a_list: def.value.not_a_list.as_ref().map(|m| m.value.clone()),
            beside: None,
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
        // The request line consumes path placeholders and a `{method}` placeholder.
        let in_path = call.path_vars().any(|v| v == name)
            || matches!(&call.method, crate::engine::request::MethodSpec::Var(m) if m == name);
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
                    let misplaced = Kind::MisplacedArgument {
                        name: name.to_owned(),
                        declared: format!("{explicit:?}"),
                        call: call.as_str().to_owned(),
                    };
                    self.raise(pos, misplaced);
                    return None;
                }
                explicit
            }
            None if in_path => ArgLocation::Path,
            None if in_query
                || matches!(call.method.fixed(), Some(Method::Get | Method::Delete)) =>
            {
                ArgLocation::Query
            }
            None => ArgLocation::Body,
        };
        if a.field.is_some() && matches!(location, ArgLocation::Path | ArgLocation::Payload) {
            let name = name.to_owned();
            self.raise(pos, Kind::FieldWithoutName { name });
            return None;
        }
        if a.rule.is_none() && a.description.trim().is_empty() {
            let name = name.to_owned();
            self.raise(pos, Kind::NoDescription { name });
            return None;
        }
        if let Some(schema) = &a.schema {
            return self.schema_argument(name, def, schema, location, in_path);
        }
        let check = match (&a.rule, &a.kind) {
            (Some(rule), None) => Check::Rule(self.rule(file, rule)?),
            (None, Some(_)) => {
                let schema = inline_schema(a);
                match Schema::compile(&schema) {
                    Ok(s) => Check::Schema(Box::new(s)),
                    Err(e) => {
                        let (name, why) = (name.to_owned(), e.to_string());
                        self.raise(pos, Kind::BadSchema { name, why });
                        return None;
                    }
                }
            }
            (Some(_), Some(_)) => {
                let name = name.to_owned();
                self.raise(pos, Kind::RuleAndType { name });
                return None;
            }
            (None, None) => {
                let name = name.to_owned();
                self.raise(pos, Kind::UntypedArgument { name });
                return None;
            }
        };
        if !self.default_fits(pos, name, &check, a.default.as_ref()) {
            return None;
        }
        if in_path && a.required == Some(false) {
            let name = name.to_owned();
            self.raise(pos, Kind::OptionalPathArgument { name });
            return None;
        }
        Some(Arg {
            name: name.to_owned(),
            local: false,
            field: a.field.clone().unwrap_or_else(|| name.to_owned()),
            aliases: a.aliases.clone(),
            description: a.description.trim().to_owned(),
            check,
            location,
            // A placeholder with a default (a `{method}`) may be left out.
            required: (in_path && a.default.is_none()) || a.required.unwrap_or(false),
            default: a.default.clone(),
        })
    }
}

impl Compiler {
    /// Whether an argument's default passes the argument's own check; a finding when not.
    fn default_fits(
        &mut self,
        pos: Pos,
        name: &str,
        check: &Check,
        default: Option<&Value>,
    ) -> bool {
        match default.map(|d| check.check(d)) {
            Some(Err(e)) => {
                let (name, why) = (name.to_owned(), e.to_string());
                self.raise(pos, Kind::DefaultRefused { name, why });
                false
            }
            _ => true,
        }
    }
}

/// The arguments a tool declares, with those it leaves to the shared declarations
/// (`arguments:`) in their place: a placeholder taken from there goes before the first own
/// argument that the request line places after it (arguments it does not place come last).
fn declared_args<'d>(
    def: &'d raw::ToolDef,
    call: Option<&RequestTemplate>,
    shared: &'d IndexMap<String, Spanned<raw::ArgDef>>,
) -> Vec<(&'d String, &'d Spanned<raw::ArgDef>)> {
    let placeholders: Vec<&str> = call.iter().flat_map(|c| c.placeholders()).collect();
    let at = |name: &str| placeholders.iter().position(|p| *p == name);
    let mut declared: Vec<(&String, &Spanned<raw::ArgDef>)> = def.args.iter().collect();
    for name in &placeholders {
        if declared.iter().any(|(own, _)| own == name) {
            continue;
        }
        let Some(inherited) = shared.get_key_value(*name) else {
            continue;
        };
        let here = at(name);
        let before = declared
            .iter()
            .position(|(own, _)| at(own).is_none_or(|p| Some(p) > here))
            .unwrap_or(declared.len());
        declared.insert(before, inherited);
    }
    declared
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
        let mut i = Map::new();
        i.insert("type".into(), json!(items.kind));
        if let Some(f) = &items.format {
            i.insert("format".into(), json!(f));
        }
        if let Some(v) = &items.values {
            i.insert("enum".into(), json!(v));
        }
        if let Some(p) = &items.pattern {
            i.insert("pattern".into(), json!(p));
        }
        if let Some(m) = items.minimum {
            i.insert("minimum".into(), json!(m));
        }
        if let Some(m) = items.maximum {
            i.insert("maximum".into(), json!(m));
        }
        if let Some(m) = items.max_length {
            i.insert("maxLength".into(), json!(m));
        }
        s.insert("items".into(), Value::Object(i));
    }
    s
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
                "`schema` replaces `rule`, `type` and their keywords; keep only `schema`"
                    .to_owned(),
            ),
            Value::Object(map) => Schema::compile(map).map_err(|e| e.to_string()),
            _ => Err("`schema` must be a JSON Schema object".to_owned()),
        };
        let check = match compiled {
            Ok(s) => Check::Schema(Box::new(s)),
            Err(e) => {
                let (name, why) = (name.to_owned(), e.to_string());
                self.raise(pos, Kind::BadSchema { name, why });
                return None;
            }
        };
        if location == ArgLocation::File && check.schema().get("type") != Some(&json!("string")) {
            let name = name.to_owned();
            self.raise(pos, Kind::FileNotString { name });
            return None;
        }
        if !self.default_fits(pos, name, &check, a.default.as_ref()) {
            return None;
        }
        Some(Arg {
            name: name.to_owned(),
            local: false,
            field: a.field.clone().unwrap_or_else(|| name.to_owned()),
            aliases: a.aliases.clone(),
            description: a.description.trim().to_owned(),
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
            .filter(|a| a.location == location && !a.local)
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
