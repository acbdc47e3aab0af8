//! What the compiler finds wrong in the shape of a resource or a tool: one kind per rule, each
//! with its code and its message, the way `just` keeps its compile error kinds. A rule is
//! raised by naming its kind ([`super::Compiler::raise`]); the words live here, once.
//!
//! The kinds below are those of FL003 (a resource's or a tool's form: which keys go together)
//! and FL090 (an argument's type, default or location). Other codes are still raised with
//! their message at the place that finds them.

use thiserror::Error;

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
            | FileNotString { .. } => checks::BAD_ARGUMENT,
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
        let sources = Sources {
            resources: Source {
                name: "r.yaml".into(),
                text: format!("{SHARED}resources:\n{resources}"),
            },
            tools: Source {
                name: "t.yaml".into(),
                text: format!("{TOOLS}{tool}"),
            },
            search: Source {
                name: "s.yaml".into(),
                text: "{}".into(),
            },
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
}
