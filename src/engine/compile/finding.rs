//! What the compiler finds wrong in the shape of a resource or a tool: one kind per rule, each
//! with its code and its message, the way `just` keeps its compile error kinds. A rule is
//! raised by naming its kind ([`super::Compiler::raise`]); the words live here, once.
//!
//! Every finding of the compiler is one of these kinds; the manifest's parser and the swagger
//! checks report their own (what serde says, what the spec lacks).

use thiserror::Error;

use crate::engine::project::Untyped;
use crate::manifest::checks::{self, Code};

/// One rule a manifest breaks.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum Kind {
    // A resource's form (FL003).
    #[error(
        "a resource with `fallback` needs `answered_as`, naming what the primary request returns"
    )]
    FallbackWithoutAnsweredAs,
    #[error("a list names its tool under `list`")]
    ToolBesideList,
    #[error(
        "the resource reads the endpoint of its tool `{tool}`: change the tool's `call` instead of giving the resource a `fetch`"
    )]
    FetchBesideTool { tool: String },
    #[error("`args` renames the arguments of the resource's tool: name it with `tool`")]
    ArgsWithoutTool,
    #[error(
        "a list reads the endpoint of its tool `{tool}`: change the tool's `call` instead of giving the resource a `fetch`"
    )]
    FetchBesideList { tool: String },
    #[error(
        "resource `{resource}` needs `fetch`, the request that answers it (or `tool`, the tool whose endpoint it is)"
    )]
    NoRequest { resource: String },
    #[error("a check needs exactly one of `equals` and `ends_with`")]
    CheckExpectation,
    #[error("a list resource cannot also embed lists")]
    ListWithEmbeds,
    #[error(
        "a list shows the items of its tool `{tool}`: pick them with `fields`, or change the tool's `project`"
    )]
    ListWithProjection { tool: String },
    #[error("`fields` picks from a tool's projection: name the tool with `tool`")]
    FieldsWithoutTool,
    #[error("embed `{field}` needs `fetch` or `from`")]
    EmbedWithoutSource { field: String },
    #[error("embed `{field}`: `keep: newest` needs its own `fetch` (to reach the last pages)")]
    NewestWithoutFetch { field: String },
    #[error(
        "embed `{field}`: `fields` picks from the tool's items; with a `project` of its own, drop `fields`"
    )]
    EmbedFieldsAndProjection { field: String },
    // A tool's form (FL003).
    #[error("tool `{tool}` cannot be both a list and a text answer")]
    ListAndText { tool: String },
    #[error("`repository_of` is one JSONPath (to a full name) or two (to the owner and the name)")]
    RepositoryOfPaths,
    // Arguments and variables (FL090).
    #[error("`{name}` is a path variable; only query variables can have a default")]
    PathDefault { name: String },
    #[error("the default of `{name}` {why}")]
    DefaultRefused { name: String, why: String },
    #[error("`when: {var}: {value}` can never hold: `{var}` must be {expected}")]
    WhenNeverHolds {
        var: String,
        value: String,
        expected: String,
    },
    #[error("`{name}` is added to every {to} by forgelens; do not declare it")]
    Reserved { name: String, to: &'static str },
    #[error("tool `{tool}`: {why}")]
    BodyConflict { tool: String, why: String },
    #[error("argument `{name}` is declared `in: {declared}` but `{call}` places it elsewhere")]
    MisplacedArgument {
        name: String,
        declared: String,
        call: String,
    },
    #[error("argument `{name}` has no upstream name to rename: drop `field`")]
    FieldWithoutName { name: String },
    #[error(
        "argument `{name}` needs a `description`; only an argument with a `rule` may leave it out"
    )]
    NoDescription { name: String },
    #[error("argument `{name}`: {why}")]
    BadSchema { name: String, why: String },
    #[error("argument `{name}` has both `rule` and `type`; keep one")]
    RuleAndType { name: String },
    #[error("path argument `{name}` cannot be optional")]
    OptionalPathArgument { name: String },
    #[error("file argument `{name}` carries base64 text: give it `type: string`")]
    FileNotString { name: String },
    #[error("argument `{name}` has neither `rule` nor `type`")]
    UntypedArgument { name: String },
    #[error("tool `{tool}`: `confirm` names `{arg}`, which is not an argument of text values")]
    ConfirmArgument { tool: String, arg: String },
    #[error("tool `{tool}`: `confirm.known` reads the values there are, with a GET")]
    ConfirmNotGet { tool: String },
    #[error(
        "alias `{alias}` of argument `{name}` is taken: another argument (or its alias) has it, or forgelens adds it (`page`, `limit`, `sudo`)"
    )]
    AliasTaken { name: String, alias: String },
    // Names declared twice, and names that name nothing.
    #[error("tool `{tool}` is declared twice")]
    DuplicateTool { tool: String },
    #[error(
        "resource `{resource}` ({template}) repeats the name or template of `{other}` ({other_template})"
    )]
    DuplicateTemplate {
        resource: String,
        template: String,
        other: String,
        other_template: String,
    },
    #[error(
        "template {template} routes to the same paths as {with}; make one of them differ by a literal segment"
    )]
    RouteConflict { template: String, with: String },
    #[error("the core list names `{name}`, which is not a declared tool{hint}")]
    CoreNotATool { name: String, hint: String },
    #[error("the core list names `{name}` twice")]
    CoreTwice { name: String },
    #[error("the synonym `{word}` needs a word and at least one word it stands for")]
    EmptySynonym { word: String },
    #[error("rule `{name}` is defined twice; rule names are shared by both manifests")]
    DuplicateRule { name: String },
    #[error("rule `{name}`: {why}")]
    BadRule { name: String, why: String },
    #[error("no rule named `{name}`{hint}")]
    UnknownRule { name: String, hint: String },
    #[error("no tool named `{name}` in the tool manifest{hint}")]
    UnknownTool { name: String, hint: String },
    #[error("`{uri}` is not the template of a resource here{hint}")]
    UnknownTemplate { uri: String, hint: String },
    // The error table.
    #[error("`{name}` is not a reason{hint}")]
    NotAReason { name: String, hint: String },
    #[error("status key `{key}` is neither a status (`404`) nor a class (`4xx`)")]
    StatusKey { key: String },
    #[error("`codes` has no entry for reason `{reason}`")]
    NoCode { reason: String },
    #[error("hint for `{reason}` names situation `{situation}`; known: default, {known}")]
    UnknownSituation {
        reason: String,
        situation: String,
        known: String,
    },
    #[error("hint for `{name}`, which is not a reason")]
    HintForNoReason { name: String },
    // Templates and request lines.
    #[error("`{uri}`: {why}")]
    TemplateScheme { uri: String, why: String },
    #[error("`{uri}`: {why}")]
    TemplateSyntax { uri: String, why: String },
    #[error(
        "{template} is a list: its template must end in `{{?page,limit}}` (with any other query variables)"
    )]
    ListTemplate { template: String },
    #[error("`{line}`: {why}")]
    RequestSyntax { line: String, why: String },
    #[error("`{line}`: resources only read; use GET")]
    ResourceWrites { line: String },
    #[error(
        "`{template}` addresses a numeric id without a scope; put it under `repo/{{owner}}/{{repo}}/…` or `org/{{org}}/…`"
    )]
    ScopelessId { template: String },
    #[error("{template} is marked immutable but no path variable is a full 40-hex commit sha")]
    MutableKey { template: String },
    // Variables: each read is given, each given is read, each has a rule.
    #[error("`{{{placeholder}}}` in `{line}` is not a variable of {owner}{hint}")]
    UnboundPlaceholder {
        placeholder: String,
        line: String,
        owner: String,
        hint: String,
    },
    #[error(
        "`{{{placeholder}}}` in `{line}` is not an argument; declare it under `args` (or once for every tool, under `arguments`)"
    )]
    UndeclaredArgument { placeholder: String, line: String },
    #[error("{what} names `{name}`, which is not a variable or argument here{hint}")]
    NotAVariable {
        what: String,
        name: String,
        hint: String,
    },
    #[error("`{tool}` takes no argument `{arg}`")]
    NoSuchArgument { tool: String, arg: String },
    #[error("`{var}` is not a variable of {uri}")]
    RenamedNothing { var: String, uri: String },
    #[error("`when` names `{var}`, which is not a variable of the template")]
    WhenNotAVariable { var: String },
    #[error(
        "the projection of `{tool}` reads `{{{arg}}}`, which the resource's URI does not give; declare the resource's own `project`"
    )]
    ToolReadsMissing { tool: String, arg: String },
    #[error("the listing gives no value for `{var}` of {uri}")]
    ListingWithoutValue { var: String, uri: String },
    #[error(
        "variable `{var}` of {template} is used by no request, check, text range or projection"
    )]
    UnusedVariable { var: String, template: String },
    #[error("`params` names `{name}`, which the template {template} does not have")]
    ParamNotInTemplate { name: String, template: String },
    #[error("`defaults` names `{name}`, which is not a variable of the template")]
    DefaultNotAVariable { name: String },
    #[error("`completions` names `{var}`, which no template has")]
    CompletionNotAVariable { var: String },
    #[error(
        "variable `{var}` has no rule; add `{var}: <rule>` under `params` (or once for every resource, under `variables`)"
    )]
    UnruledVariable { var: String },
    // Expressions, paths and marks.
    #[error("`{what}`: {why}")]
    Expression { what: String, why: String },
    #[error("`{what}`: {why}")]
    ExpressionPath { what: String, why: String },
    #[error("JSONPath `{path}` does not compile: {why}")]
    JsonPath { path: String, why: String },
    #[error("`{what}` reads `{{{arg}}}`, which is not a variable here{hint}")]
    ReadsNoVariable {
        what: String,
        arg: String,
        hint: String,
    },
    #[error("`${name}` names no `with:` request")]
    UnknownSource { name: String },
    #[error(
        "field `{field}`: `untrusted({path})` names `{path}`, which is not a field beside it (or, with `../`, of an enclosing object); name the field that holds who wrote the text"
    )]
    UnknownAuthor { field: String, path: String },
    #[error(
        "`text.untrusted` names an author field, but a text has no fields beside it; say `writers`, `writers(ARG)`, or nothing (anyone may have written it)"
    )]
    TextAuthor,
    #[error("`text.untrusted`: {why}")]
    TextMark { why: String },
    #[error("markdown template: {why}")]
    MarkdownSyntax { why: String },
    #[error("the markdown template reads `{var}`, which the projection does not produce{hint}")]
    MarkdownField { var: String, hint: String },
    #[error("`{tool}` projects no field `{field}`; {has}")]
    NoSuchField {
        tool: String,
        field: String,
        has: String,
    },
    // Caching.
    #[error("`provisional` applies to immutable resources; a mutable one is never reused")]
    ProvisionalOnMutable,
    #[error("`provisional` reads `{field}`, which the projection does not produce")]
    ProvisionalField { field: String },
    #[error("`provisional` applies to an entity, not to a list")]
    ProvisionalOnList,
    #[error("`provisional.ttl_ms` must be positive")]
    ProvisionalTtl,
    // Pages.
    #[error("a cap or limit must be at least 1")]
    ZeroCap,
    #[error(
        "the cap {cap} is above the largest page of `{tool}` ({max_limit}): its sentinel's next call could not be made"
    )]
    CapAbovePage {
        cap: u64,
        tool: String,
        max_limit: u64,
    },
    #[error("default_limit {default_limit} is above max_limit {max_limit}")]
    DefaultAboveMax { default_limit: u64, max_limit: u64 },
    #[error(
        "a `page_only` list has one page size, the forge's: set default_limit and max_limit both to it (now {default_limit} and {max_limit})"
    )]
    PageOnlySizes { default_limit: u64, max_limit: u64 },
    // A tool's name, summary and annotations.
    #[error("tool `{tool}` calls {method} but is marked read-only; only GET and POST tools may be")]
    ReadOnlyWrite { tool: String, method: String },
    #[error("tool `{tool}` calls DELETE; it must be destructive")]
    DeleteNotDestructive { tool: String },
    #[error(
        "tool name `{name}` must be snake_case (a-z, 0-9, single `_`) and at most {max} characters"
    )]
    ToolName { name: String, max: usize },
    #[error(
        "the first sentence of `{tool}`'s description is {length} characters, over {max}: it is what tools/list shows, so keep it short and put details in later sentences"
    )]
    LongSummary {
        tool: String,
        length: usize,
        max: usize,
    },
    // Output types.
    #[error(transparent)]
    FieldTypeWord(Untyped),
    #[error("`{name}` is typed twice, `{earlier}` and `{ty}`")]
    TypedTwice {
        name: String,
        earlier: String,
        ty: String,
    },
    #[error("tool `{tool}`, field `{field}`: {why}")]
    FieldUntyped {
        tool: String,
        field: String,
        why: String,
    },
    #[error("field type `{name}` is declared but no tool projects a field of that name")]
    UnusedFieldType { name: String },
}

impl Kind {
    /// The diagnostic code the rule reports under.
    pub(crate) fn code(&self) -> Code {
        use Kind::*;
        match self {
            FallbackWithoutAnsweredAs
            | ToolBesideList
            | FetchBesideTool { .. }
            | ArgsWithoutTool
            | FetchBesideList { .. }
            | NoRequest { .. }
            | CheckExpectation
            | ListWithEmbeds
            | ListWithProjection { .. }
            | FieldsWithoutTool
            | EmbedWithoutSource { .. }
            | NewestWithoutFetch { .. }
            | EmbedFieldsAndProjection { .. }
            | ListAndText { .. }
            | RepositoryOfPaths => checks::WRONG_TYPE,
            PathDefault { .. }
            | DefaultRefused { .. }
            | WhenNeverHolds { .. }
            | Reserved { .. }
            | BodyConflict { .. }
            | MisplacedArgument { .. }
            | FieldWithoutName { .. }
            | NoDescription { .. }
            | BadSchema { .. }
            | RuleAndType { .. }
            | OptionalPathArgument { .. }
            | FileNotString { .. }
            | AliasTaken { .. }
            | ConfirmArgument { .. }
            | ConfirmNotGet { .. } => checks::BAD_ARGUMENT,
            DuplicateTool { .. } => checks::DUPLICATE_TOOL,
            DuplicateTemplate { .. } => checks::DUPLICATE_TEMPLATE,
            RouteConflict { .. } => checks::ROUTE_CONFLICT,
            CoreNotATool { .. } | CoreTwice { .. } => checks::CORE_TOOL,
            EmptySynonym { .. } => checks::SYNONYM,
            DuplicateRule { .. } => checks::DUPLICATE_RULE,
            BadRule { .. } => checks::BAD_RULE,
            UnknownRule { .. } => checks::UNKNOWN_RULE,
            UnknownTool { .. } => checks::UNKNOWN_TOOL,
            UnknownTemplate { .. } => checks::UNKNOWN_TEMPLATE,
            NotAReason { .. }
            | StatusKey { .. }
            | NoCode { .. }
            | UnknownSituation { .. }
            | HintForNoReason { .. } => checks::ERROR_TABLE,
            TemplateScheme { .. } => checks::TEMPLATE_SCHEME,
            TemplateSyntax { .. } | ListTemplate { .. } => checks::TEMPLATE_SYNTAX,
            RequestSyntax { .. } | ResourceWrites { .. } => checks::REQUEST_SYNTAX,
            ScopelessId { .. } => checks::SCOPELESS_ID,
            MutableKey { .. } => checks::MUTABLE_KEY,
            UnboundPlaceholder { .. }
            | UndeclaredArgument { .. }
            | NotAVariable { .. }
            | NoSuchArgument { .. }
            | RenamedNothing { .. }
            | WhenNotAVariable { .. }
            | ToolReadsMissing { .. }
            | ListingWithoutValue { .. } => checks::UNBOUND_PLACEHOLDER,
            UnusedVariable { .. }
            | ParamNotInTemplate { .. }
            | DefaultNotAVariable { .. }
            | CompletionNotAVariable { .. } => checks::UNUSED_VARIABLE,
            UnruledVariable { .. } | UntypedArgument { .. } => checks::UNRULED_VARIABLE,
            Expression { .. }
            | ReadsNoVariable { .. }
            | UnknownSource { .. }
            | UnknownAuthor { .. }
            | TextAuthor
            | TextMark { .. } => checks::EXPRESSION,
            ExpressionPath { .. } | JsonPath { .. } => checks::JSONPATH_SYNTAX,
            MarkdownSyntax { .. } => checks::MARKDOWN_SYNTAX,
            MarkdownField { .. } => checks::MARKDOWN_FIELD,
            NoSuchField { .. } => checks::PICKED_FIELD,
            ProvisionalOnMutable | ProvisionalField { .. } | ProvisionalOnList | ProvisionalTtl => {
                checks::PROVISIONAL
            }
            ZeroCap => checks::BAD_CAP,
            CapAbovePage { .. } | DefaultAboveMax { .. } | PageOnlySizes { .. } => {
                checks::LIMIT_ABOVE_CAP
            }
            ReadOnlyWrite { .. } => checks::READ_ONLY_WRITE,
            DeleteNotDestructive { .. } => checks::DELETE_NOT_DESTRUCTIVE,
            ToolName { .. } => checks::TOOL_NAME,
            LongSummary { .. } => checks::LONG_SUMMARY,
            FieldTypeWord(_) | TypedTwice { .. } | FieldUntyped { .. } | UnusedFieldType { .. } => {
                checks::FIELD_TYPE
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{Source, Sources};

    const SHARED: &str = "rules:\n  name: {pattern: '[a-z]+'}\n  id: {type: integer, minimum: 1}\nerrors:\n  status: {\"404\": not_found}\n  codes: {invalid_params: -32602, forbidden: -32002, not_found: -32003, rate_limited: -32603, upstream_error: -32603}\n";

    const TOOLS: &str = "toolsets:\n  things:\n    description: Things.\n    tools:\n      - name: list_things\n        title: List things\n        description: Lists things.\n        call: GET /things/{owner}?q={q}\n        args:\n          owner: {rule: name, description: Owner.}\n          q: {rule: name, description: Query.}\n        list: {}\n      - {name: get_thing, title: G, description: Gets., call: 'GET /things/{owner}/{id}', args: {owner: {rule: name}, id: {rule: id}}, project: {id: $.id, name: $.name}, field_types: {integer: [id], string: [name]}}\n";

    const THING: &str = "  - name: thing\n    title: Thing\n    uri: forgejo://repo/{owner}/thing/{id}\n    description: A thing.\n    params: {owner: name, id: id}\n";

    const THINGS: &str = "  - name: things\n    title: Things\n    uri: 'forgejo://repo/{owner}/things{?page,limit,q}'\n    description: Things.\n    params: {owner: name, page: id, limit: id, q: name}\n";

    /// What compiling the resource entries `resources` (a sound `thing` when empty) beside the
    /// tools of `TOOLS` and one more (`tool`, an entry of the `things` toolset, or nothing)
    /// finds: (code, message).
    fn findings(resources: &str, tool: &str) -> Vec<(Code, String)> {
        let sound = format!("{THING}    fetch: GET /things/{{owner}}/{{id}}\n");
        let resources = if resources.is_empty() {
            &sound
        } else {
            resources
        };
        compiled(
            &format!("{SHARED}resources:\n{resources}"),
            &format!("{TOOLS}{tool}"),
            "{}",
        )
    }

    /// What compiling these three manifests (resources, tools, search) finds: (code, message).
    fn compiled(resources: &str, tools: &str, search: &str) -> Vec<(Code, String)> {
        let source = |name: &str, text: &str| Source {
            name: name.into(),
            text: text.into(),
        };
        let sources = Sources {
            resources: source("r.yaml", resources),
            tools: source("t.yaml", tools),
            search: source("s.yaml", search),
            catalog: None,
        };
        let manifests = crate::manifest::parse(&sources).expect("the manifests parse");
        match crate::engine::compile(&manifests) {
            Ok(_) => Vec::new(),
            Err(found) => found.into_iter().map(|f| (f.code, f.message)).collect(),
        }
    }

    /// A `make_thing` tool (`POST /things/{owner}`) with the arguments `args` beside `owner`.
    fn tool(args: &str) -> String {
        format!(
            "      - {{name: make_thing, title: M, description: Makes., call: 'POST /things/{{owner}}', args: {{owner: {{rule: name}}, {args}}}}}\n"
        )
    }

    fn name(n: &str) -> String {
        n.to_owned()
    }

    #[test]
    fn the_manifests_of_these_tests_compile() {
        let fetched = format!("{THING}    fetch: GET /things/{{owner}}/{{id}}\n");
        let listed = format!("{THINGS}    list: {{tool: list_things}}\n");
        assert_eq!(findings(&format!("{fetched}{listed}"), ""), Vec::new());
    }

    /// Each rule, broken once: a finding has the kind's code and its words. A kind that quotes
    /// another check's reason (`why`, `expected`) is given it empty: its words begin the message.
    #[test]
    fn each_rule_raises_its_own_kind() {
        let fetch = "    fetch: GET /things/{owner}/{id}\n";
        let list = format!("{THINGS}    list: {{tool: list_things}}\n");
        let none = String::new;
        let cases: Vec<(String, String, Kind)> = vec![
            (
                format!("{THING}{fetch}    fallback: [{{fetch: 'GET /others/{{owner}}/{{id}}', answered_as: other}}]\n"),
                none(),
                Kind::FallbackWithoutAnsweredAs,
            ),
            (format!("{list}    tool: get_thing\n"), none(), Kind::ToolBesideList),
            (
                format!("{THING}{fetch}    tool: get_thing\n"),
                none(),
                Kind::FetchBesideTool { tool: name("get_thing") },
            ),
            (format!("{THING}{fetch}    args: {{owner: owner}}\n"), none(), Kind::ArgsWithoutTool),
            (
                format!("{THINGS}    fetch: GET /things/{{owner}}\n    list: {{tool: list_things}}\n"),
                none(),
                Kind::FetchBesideList { tool: name("list_things") },
            ),
            (THING.to_owned(), none(), Kind::NoRequest { resource: name("thing") }),
            (format!("{THING}{fetch}    checks: [{{value: $.kind}}]\n"), none(), Kind::CheckExpectation),
            (
                format!("{list}    embed:\n      more: {{fetch: 'GET /things/{{owner}}', tool: list_things}}\n"),
                none(),
                Kind::ListWithEmbeds,
            ),
            (
                format!("{list}    project: {{id: $.id}}\n"),
                none(),
                Kind::ListWithProjection { tool: name("list_things") },
            ),
            (format!("{THING}{fetch}    fields: [id]\n"), none(), Kind::FieldsWithoutTool),
            (
                format!("{THING}{fetch}    embed:\n      more: {{tool: list_things}}\n"),
                none(),
                Kind::EmbedWithoutSource { field: name("more") },
            ),
            (
                format!("{THING}{fetch}    embed:\n      more: {{from: $.more, keep: newest, tool: list_things}}\n"),
                none(),
                Kind::NewestWithoutFetch { field: name("more") },
            ),
            (
                format!("{THING}{fetch}    embed:\n      more: {{from: $.more, tool: list_things, fields: [id], project: {{id: $.id}}}}\n"),
                none(),
                Kind::EmbedFieldsAndProjection { field: name("more") },
            ),
            (
                none(),
                "      - {name: read_thing, title: R, description: Reads., call: 'GET /things/{owner}', args: {owner: {rule: name}}, list: {}, text: {}}\n".to_owned(),
                Kind::ListAndText { tool: name("read_thing") },
            ),
            (
                none(),
                "      - {name: see_thing, title: S, description: Sees., call: 'GET /things/{owner}', args: {owner: {rule: name}}, repository_of: [$.a, $.b, $.c]}\n".to_owned(),
                Kind::RepositoryOfPaths,
            ),
            (format!("{THING}{fetch}    defaults: {{id: 3}}\n"), none(), Kind::PathDefault { name: name("id") }),
            (
                format!("{list}    defaults: {{q: 'A B'}}\n"),
                none(),
                Kind::DefaultRefused { name: name("q"), why: none() },
            ),
            (
                format!("{THING}{fetch}    checks: [{{value: $.kind, equals: x, when: {{id: abc}}}}]\n"),
                none(),
                Kind::WhenNeverHolds { var: name("id"), value: name("abc"), expected: none() },
            ),
            (none(), tool("sudo: {rule: name}"), Kind::Reserved { name: name("sudo"), to: "tool" }),
            (
                none(),
                tool("data: {type: string, in: payload, description: D.}, title: {type: string, description: T.}"),
                Kind::BodyConflict { tool: name("make_thing"), why: none() },
            ),
            (
                none(),
                "      - {name: make_thing, title: M, description: Makes., call: 'POST /things/{owner}', args: {owner: {rule: name, in: query}}}\n".to_owned(),
                Kind::MisplacedArgument {
                    name: name("owner"),
                    declared: name("Query"),
                    call: name("POST /things/{owner}"),
                },
            ),
            (
                none(),
                "      - {name: make_thing, title: M, description: Makes., call: 'POST /things/{owner}', args: {owner: {rule: name, field: who}}}\n".to_owned(),
                Kind::FieldWithoutName { name: name("owner") },
            ),
            (none(), tool("size: {type: integer}"), Kind::NoDescription { name: name("size") }),
            (
                none(),
                tool("size: {type: nonsense, description: S.}"),
                Kind::BadSchema { name: name("size"), why: none() },
            ),
            (
                none(),
                tool("size: {rule: id, type: integer, description: S.}"),
                Kind::RuleAndType { name: name("size") },
            ),
            (
                none(),
                "      - {name: make_thing, title: M, description: Makes., call: 'POST /things/{owner}', args: {owner: {rule: name, required: false}}}\n".to_owned(),
                Kind::OptionalPathArgument { name: name("owner") },
            ),
            (
                none(),
                tool("data: {in: file, schema: {type: integer}, description: D.}"),
                Kind::FileNotString { name: name("data") },
            ),
            (
                none(),
                tool("size: {type: integer, description: S., aliases: [sudo]}"),
                Kind::AliasTaken { name: name("size"), alias: name("sudo") },
            ),
            (
                none(),
                tool("size: {type: integer, description: S., aliases: [Size]}, count: {type: integer, description: C., aliases: [Size]}"),
                Kind::AliasTaken { name: name("size"), alias: name("Size") },
            ),
            (
                none(),
                "      - {name: make_thing, title: M, description: Makes., call: 'POST /things/{owner}', args: {owner: {rule: name}, size: {type: integer, description: S.}}, confirm: {arg: size, in: '$[*].name', what: a size}}\n".to_owned(),
                Kind::ConfirmArgument { tool: name("make_thing"), arg: name("size") },
            ),
            (
                none(),
                "      - {name: make_thing, title: M, description: Makes., call: 'POST /things/{owner}', args: {owner: {rule: name}, tags: {type: array, items: {type: string}, description: T.}}, confirm: {arg: tags, in: '$[*].name', what: a tag, known: [{fetch: 'POST /tags/{owner}', value: '$[*].name'}]}}\n".to_owned(),
                Kind::ConfirmNotGet { tool: name("make_thing") },
            ),
            (
                none(),
                tool("size: {type: integer, default: x, description: S.}"),
                Kind::DefaultRefused { name: name("size"), why: none() },
            ),
        ];
        for (resources, tool, kind) in cases {
            let found = findings(&resources, &tool);
            let words = kind.to_string();
            assert!(
                found
                    .iter()
                    .any(|(code, message)| *code == kind.code() && message.starts_with(&words)),
                "{kind:?}: expected {} {words:?}, found {found:#?}",
                kind.code()
            );
        }
    }

    /// That `found` holds a finding with `kind`'s code whose message begins with its words.
    fn assert_raised(found: &[(Code, String)], kind: &Kind) {
        let words = kind.to_string();
        assert!(
            found
                .iter()
                .any(|(code, message)| *code == kind.code() && message.starts_with(&words)),
            "{kind:?}: expected {} {words:?}, found {found:#?}",
            kind.code()
        );
    }

    /// The other rules, each broken once in whole manifests: the name tables, the error table,
    /// templates and requests, variables, expressions and marks, caching, pages, tool names and
    /// output types. As above, a quoted reason or hint is given empty.
    #[test]
    fn each_other_rule_raises_its_own_kind() {
        let fetched = format!("{THING}    fetch: GET /things/{{owner}}/{{id}}\n");
        let listed = format!("{THINGS}    list: {{tool: list_things}}\n");
        let resources = |entries: &str| format!("{SHARED}resources:\n{entries}");
        let tools = |added: &str| format!("{TOOLS}{added}");
        let sound = resources(&fetched);
        let shared = |more: &str| format!("{SHARED}{more}resources:\n{fetched}");
        // A `name` that is a full commit sha: `owner` keys an immutable resource.
        let by_sha = |entries: &str| {
            let rules = SHARED.replace("[a-z]+", "[0-9a-f]{40}");
            format!("{rules}resources:\n{entries}    cache: immutable\n")
        };
        let none = String::new;
        let cases: Vec<(String, String, Kind)> = vec![
            (
                sound.clone(),
                tools(&tool("size: {description: S.}")),
                Kind::UntypedArgument { name: name("size") },
            ),
            // Names declared twice, and names that name nothing.
            (
                sound.clone(),
                tools(
                    "      - {name: get_thing, title: Again, description: Again., call: GET /again}\n",
                ),
                Kind::DuplicateTool {
                    tool: name("get_thing"),
                },
            ),
            (
                resources(&format!(
                    "{fetched}{}",
                    fetched.replace("/thing/", "/other/")
                )),
                tools(""),
                Kind::DuplicateTemplate {
                    resource: name("thing"),
                    template: name("forgejo://repo/{owner}/other/{id}"),
                    other: name("thing"),
                    other_template: name("forgejo://repo/{owner}/thing/{id}"),
                },
            ),
            (
                resources(&format!(
                    "{fetched}{}",
                    fetched
                        .replace("name: thing", "name: other")
                        .replace("{id}", "{n}")
                        .replace("id: id", "n: id")
                )),
                tools(""),
                Kind::RouteConflict {
                    template: name("forgejo://repo/{owner}/thing/{n}"),
                    with: name("forgejo://repo/{owner}/thing/{id}"),
                },
            ),
            (
                sound.clone(),
                format!("core: [list_thigns]\n{TOOLS}"),
                Kind::CoreNotATool {
                    name: name("list_thigns"),
                    hint: name(" (did you mean `list_things`?)"),
                },
            ),
            (
                sound.clone(),
                format!("core: [get_thing, get_thing]\n{TOOLS}"),
                Kind::CoreTwice {
                    name: name("get_thing"),
                },
            ),
            (
                sound.clone(),
                format!("search:\n  synonyms:\n    pr: []\n{TOOLS}"),
                Kind::EmptySynonym { word: name("pr") },
            ),
            (
                sound.clone(),
                format!("rules:\n  id: {{type: integer}}\n{TOOLS}"),
                Kind::DuplicateRule { name: name("id") },
            ),
            (
                format!(
                    "{}resources:\n{fetched}",
                    SHARED.replace(
                        "rules:\n",
                        "rules:\n  few: {type: integer, minimum: 3, maximum: 1}\n"
                    )
                ),
                tools(""),
                Kind::BadRule {
                    name: name("few"),
                    why: name("minimum 3 is above maximum 1"),
                },
            ),
            (
                resources(&fetched.replace("owner: name,", "owner: nmae,")),
                tools(""),
                Kind::UnknownRule {
                    name: name("nmae"),
                    hint: name(" (did you mean `name`?)"),
                },
            ),
            (
                resources(&listed.replace("tool: list_things", "tool: list_thing")),
                tools(""),
                Kind::UnknownTool {
                    name: name("list_thing"),
                    hint: name(" (did you mean `list_things`?)"),
                },
            ),
            (
                format!(
                    "{SHARED}listing:\n  - {{fetch: GET /user/things, uri: 'forgejo://nowhere', args: {{}}, name: $.name}}\nresources:\n{fetched}"
                ),
                tools(""),
                Kind::UnknownTemplate {
                    uri: name("forgejo://nowhere"),
                    hint: none(),
                },
            ),
            // The error table.
            (
                format!(
                    "{}resources:\n{fetched}",
                    SHARED.replace("\"404\": not_found", "\"404\": gone")
                ),
                tools(""),
                Kind::NotAReason {
                    name: name("gone"),
                    hint: none(),
                },
            ),
            (
                format!(
                    "{}resources:\n{fetched}",
                    SHARED.replace("\"404\"", "\"40x\"")
                ),
                tools(""),
                Kind::StatusKey { key: name("40x") },
            ),
            (
                format!(
                    "{}resources:\n{fetched}",
                    SHARED.replace("rate_limited: -32603, ", "")
                ),
                tools(""),
                Kind::NoCode {
                    reason: name("rate_limited"),
                },
            ),
            (
                shared("  hints: {not_found: {someday: Later.}}\n"),
                tools(""),
                Kind::UnknownSituation {
                    reason: name("not_found"),
                    situation: name("someday"),
                    known: none(),
                },
            ),
            (
                shared("  hints: {gone: Gone.}\n"),
                tools(""),
                Kind::HintForNoReason { name: name("gone") },
            ),
            // Templates and request lines.
            (
                resources(&fetched.replace("forgejo://", "https://")),
                tools(""),
                Kind::TemplateScheme {
                    uri: name("https://repo/{owner}/thing/{id}"),
                    why: none(),
                },
            ),
            (
                resources(&fetched.replace("thing/{id}", "thing/x{id}")),
                tools(""),
                Kind::TemplateSyntax {
                    uri: name("forgejo://repo/{owner}/thing/x{id}"),
                    why: none(),
                },
            ),
            (
                resources(
                    &listed
                        .replace("{?page,limit,q}", "{?q}")
                        .replace(" page: id, limit: id,", ""),
                ),
                tools(""),
                Kind::ListTemplate {
                    template: name("forgejo://repo/{owner}/things{?q}"),
                },
            ),
            (
                resources(&fetched.replace("GET /things", "FETCH /things")),
                tools(""),
                Kind::RequestSyntax {
                    line: name("FETCH /things/{owner}/{id}"),
                    why: none(),
                },
            ),
            (
                resources(&fetched.replace("GET /things", "POST /things")),
                tools(""),
                Kind::ResourceWrites {
                    line: name("POST /things/{owner}/{id}"),
                },
            ),
            (
                resources(
                    &fetched
                        .replace("repo/{owner}/thing/{id}", "thing/{id}")
                        .replace("{owner: name, id: id}", "{id: id}")
                        .replace("/things/{owner}/{id}", "/things/{id}"),
                ),
                tools(""),
                Kind::ScopelessId {
                    template: name("forgejo://thing/{id}"),
                },
            ),
            (
                resources(&format!("{fetched}    cache: immutable\n")),
                tools(""),
                Kind::MutableKey {
                    template: name("forgejo://repo/{owner}/thing/{id}"),
                },
            ),
            // Variables: each read is given, each given is read, each has a rule.
            (
                resources(&fetched.replace("{owner}/{id}\n", "{owner}/{id}/{part}\n")),
                tools(""),
                Kind::UnboundPlaceholder {
                    placeholder: name("part"),
                    line: name("GET /things/{owner}/{id}/{part}"),
                    owner: name("forgejo://repo/{owner}/thing/{id}"),
                    hint: none(),
                },
            ),
            (
                sound.clone(),
                tools(
                    "      - {name: make_thing, title: M, description: Makes., call: 'POST /things/{owner}/{id}', args: {owner: {rule: name}}}\n",
                ),
                Kind::UndeclaredArgument {
                    placeholder: name("id"),
                    line: name("POST /things/{owner}/{id}"),
                },
            ),
            (
                resources(&format!("{fetched}    text: {{start_line: line}}\n")),
                tools(""),
                Kind::NotAVariable {
                    what: name("`text`"),
                    name: name("line"),
                    hint: none(),
                },
            ),
            (
                resources(&format!(
                    "{THING}    tool: get_thing\n    args: {{colour: id}}\n"
                )),
                tools(""),
                Kind::NoSuchArgument {
                    tool: name("get_thing"),
                    arg: name("colour"),
                },
            ),
            (
                resources(&format!(
                    "{THING}    tool: get_thing\n    args: {{id: nid}}\n"
                )),
                tools(""),
                Kind::RenamedNothing {
                    var: name("nid"),
                    uri: name("forgejo://repo/{owner}/thing/{id}"),
                },
            ),
            (
                resources(&format!(
                    "{fetched}    checks: [{{value: $.kind, equals: x, when: {{kind: issue}}}}]\n"
                )),
                tools(""),
                Kind::WhenNotAVariable { var: name("kind") },
            ),
            (
                // The tool's items show its argument `q`, which the list's URI does not have.
                resources(&listed.replace(",q}", "}").replace(", q: name", "")),
                TOOLS.replace(
                    "list: {}",
                    "list: {}\n        project: {q: '{q}'}\n        field_types: {string: [q]}",
                ),
                Kind::ToolReadsMissing {
                    tool: name("list_things"),
                    arg: name("q"),
                },
            ),
            (
                format!(
                    "{SHARED}listing:\n  - {{fetch: GET /user/things, uri: 'forgejo://repo/{{owner}}/thing/{{id}}', args: {{owner: $.owner}}, name: $.name}}\nresources:\n{fetched}"
                ),
                tools(""),
                Kind::ListingWithoutValue {
                    var: name("id"),
                    uri: name("forgejo://repo/{owner}/thing/{id}"),
                },
            ),
            (
                resources(&fetched.replace("{owner}/{id}\n", "{owner}\n")),
                tools(""),
                Kind::UnusedVariable {
                    var: name("id"),
                    template: name("forgejo://repo/{owner}/thing/{id}"),
                },
            ),
            (
                resources(&fetched.replace("id: id}", "id: id, q: name}")),
                tools(""),
                Kind::ParamNotInTemplate {
                    name: name("q"),
                    template: name("forgejo://repo/{owner}/thing/{id}"),
                },
            ),
            (
                resources(&format!("{fetched}    defaults: {{colour: red}}\n")),
                tools(""),
                Kind::DefaultNotAVariable {
                    name: name("colour"),
                },
            ),
            (
                format!("{SHARED}completions:\n  colour: {{sources: []}}\nresources:\n{fetched}"),
                tools(""),
                Kind::CompletionNotAVariable {
                    var: name("colour"),
                },
            ),
            (
                resources(&fetched.replace("{owner: name, id: id}", "{owner: name}")),
                tools(""),
                Kind::UnruledVariable { var: name("id") },
            ),
            // Expressions, paths and marks.
            (
                resources(&format!("{fetched}    project: {{a: $.a | shout}}\n")),
                tools(""),
                Kind::Expression {
                    what: name("a"),
                    why: none(),
                },
            ),
            (
                resources(&format!("{fetched}    project: {{a: '$.x[?'}}\n")),
                tools(""),
                Kind::ExpressionPath {
                    what: name("a"),
                    why: none(),
                },
            ),
            (
                resources(&format!("{fetched}    secrets: ['$.x[?']\n")),
                tools(""),
                Kind::JsonPath {
                    path: name("$.x[?"),
                    why: none(),
                },
            ),
            (
                resources(&format!("{fetched}    project: {{kind: '{{knd}}'}}\n")),
                tools(""),
                Kind::ReadsNoVariable {
                    what: name("kind"),
                    arg: name("knd"),
                    hint: none(),
                },
            ),
            (
                resources(&format!(
                    "{fetched}    embed:\n      more: {{from: $other.items, tool: list_things}}\n"
                )),
                tools(""),
                Kind::UnknownSource {
                    name: name("other"),
                },
            ),
            (
                resources(&format!(
                    "{fetched}    project: {{body: '$.body | untrusted(writer)'}}\n"
                )),
                tools(""),
                Kind::UnknownAuthor {
                    field: name("body"),
                    path: name("writer"),
                },
            ),
            (
                resources(&format!("{fetched}    text: {{untrusted: author}}\n")),
                tools(""),
                Kind::TextAuthor,
            ),
            (
                // Two ways of showing the text.
                resources(&format!(
                    "{fetched}    text: {{untrusted: 'plain, markdown'}}\n"
                )),
                tools(""),
                Kind::TextMark { why: none() },
            ),
            (
                resources(&format!(
                    "{fetched}    project: {{a: $.a}}\n    markdown: {{template: '{{{{ a '}}\n"
                )),
                tools(""),
                Kind::MarkdownSyntax { why: none() },
            ),
            (
                resources(&format!(
                    "{fetched}    project: {{body: $.body}}\n    markdown: {{template: '{{{{ bdy }}}}'}}\n"
                )),
                tools(""),
                Kind::MarkdownField {
                    var: name("bdy"),
                    hint: none(),
                },
            ),
            (
                resources(&format!(
                    "{THING}    tool: get_thing\n    fields: [colour]\n"
                )),
                tools(""),
                Kind::NoSuchField {
                    tool: name("get_thing"),
                    field: name("colour"),
                    has: name("it has id, name"),
                },
            ),
            // Caching.
            (
                resources(&format!(
                    "{fetched}    provisional: {{field: state, in: [pending], ttl_ms: 1000}}\n"
                )),
                tools(""),
                Kind::ProvisionalOnMutable,
            ),
            (
                by_sha(&format!(
                    "{fetched}    project: {{status: $.status}}\n    provisional: {{field: state, in: [pending], ttl_ms: 1000}}\n"
                )),
                tools(""),
                Kind::ProvisionalField {
                    field: name("state"),
                },
            ),
            (
                by_sha(&format!(
                    "{listed}    provisional: {{field: state, in: [pending], ttl_ms: 1000}}\n"
                )),
                tools(""),
                Kind::ProvisionalOnList,
            ),
            (
                by_sha(&format!(
                    "{fetched}    project: {{state: $.state}}\n    provisional: {{field: state, in: [pending], ttl_ms: 0}}\n"
                )),
                tools(""),
                Kind::ProvisionalTtl,
            ),
            // Pages.
            (
                resources(&listed.replace("list_things}", "list_things, cap: 0}")),
                tools(""),
                Kind::ZeroCap,
            ),
            (
                resources(&listed.replace("list_things}", "list_things, cap: 60}")),
                tools(""),
                Kind::CapAbovePage {
                    cap: 60,
                    tool: name("list_things"),
                    max_limit: 50,
                },
            ),
            (
                sound.clone(),
                TOOLS.replace("list: {}", "list: {default_limit: 60, max_limit: 50}"),
                Kind::DefaultAboveMax {
                    default_limit: 60,
                    max_limit: 50,
                },
            ),
            (
                sound.clone(),
                TOOLS.replace(
                    "list: {}",
                    "list: {page_only: true, default_limit: 10, max_limit: 50}",
                ),
                Kind::PageOnlySizes {
                    default_limit: 10,
                    max_limit: 50,
                },
            ),
            // A tool's name, summary and annotations.
            (
                sound.clone(),
                tools(
                    "      - {name: put_thing, title: Put, description: Replaces., call: PUT /things, annotations: {read_only: true}}\n",
                ),
                Kind::ReadOnlyWrite {
                    tool: name("put_thing"),
                    method: name("PUT"),
                },
            ),
            (
                sound.clone(),
                tools(
                    "      - {name: drop_thing, title: Drop, description: Drops., call: DELETE /things, annotations: {destructive: false}}\n",
                ),
                Kind::DeleteNotDestructive {
                    tool: name("drop_thing"),
                },
            ),
            (
                sound.clone(),
                TOOLS.replace("name: list_things", "name: ListThings"),
                Kind::ToolName {
                    name: name("ListThings"),
                    max: 64,
                },
            ),
            (
                sound.clone(),
                tools(&format!(
                    "      - {{name: long_thing, title: L, description: {}., call: GET /l}}\n",
                    "a".repeat(250)
                )),
                Kind::LongSummary {
                    tool: name("long_thing"),
                    length: 251,
                    max: 200,
                },
            ),
            // Output types.
            (
                sound.clone(),
                format!("field_types: {{long: [name]}}\n{TOOLS}"),
                Kind::FieldTypeWord(Untyped::UnknownType(name("long"))),
            ),
            (
                sound.clone(),
                format!("field_types: {{integer: [size], string: [size]}}\n{TOOLS}"),
                Kind::TypedTwice {
                    name: name("size"),
                    earlier: name("integer"),
                    ty: name("string"),
                },
            ),
            (
                sound.clone(),
                tools(
                    "      - {name: get_size, title: S, description: Sizes., call: GET /size, project: {size: $.size}}\n",
                ),
                Kind::FieldUntyped {
                    tool: name("get_size"),
                    field: name("size"),
                    why: none(),
                },
            ),
            (
                sound.clone(),
                format!("field_types: {{integer: [size]}}\n{TOOLS}"),
                Kind::UnusedFieldType { name: name("size") },
            ),
        ];
        for (resources, tools, kind) in &cases {
            assert_raised(&compiled(resources, tools, "{}"), kind);
        }
        // search.yaml's synonyms are held to the same rule as the tool manifest's.
        let found = compiled(
            &sound,
            TOOLS,
            "search:\n  synonyms:\n    '': [pull request]\n",
        );
        assert_raised(&found, &Kind::EmptySynonym { word: none() });
    }
}
