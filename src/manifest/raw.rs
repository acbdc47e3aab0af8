//! The raw manifests: serde types that mirror `resources.yaml` and `tools.yaml` one to one.
//!
//! Nothing here has behaviour. Values a later check may reject are wrapped in [`Spanned`] so a
//! diagnostic can point at their line and column; unknown keys are refused by every struct.
//! `engine::compile` turns these into the compiled catalog; see `docs/manifest-reference.md` for
//! what each key means.

use std::fmt;

use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_saphyr::Spanned;

/// `resources.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceManifest {
    /// Blocks several resources share, named once and used as YAML aliases (`*name`): read
    /// only where they are used.
    #[serde(default)]
    pub shared: Option<serde::de::IgnoredAny>,
    /// Named validation rules for parameters, shared with the tool manifest.
    #[serde(default)]
    pub rules: IndexMap<String, Spanned<RuleDef>>,
    /// How upstream failures become wire errors.
    pub errors: Spanned<ErrorsDef>,
    /// Template variables declared once: a variable a resource does not list under its own
    /// `params` takes the rule of its name here.
    #[serde(default)]
    pub variables: IndexMap<String, Spanned<String>>,
    #[serde(default)]
    pub defaults: DefaultsDef,
    #[serde(default)]
    pub resources: Vec<ResourceDef>,
    /// Where `resources/list` finds concrete resources besides the variable-free ones.
    #[serde(default)]
    pub listing: Vec<Spanned<ListingDef>>,
    /// How `completion/complete` completes a template variable, by variable name.
    #[serde(default)]
    pub completions: IndexMap<String, Spanned<CompletionDef>>,
}

/// A source of concrete resources for `resources/list`: each item of a list answer becomes
/// one resource URI.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListingDef {
    /// A paged list request (forgelens adds `page` and `limit`).
    pub fetch: Spanned<String>,
    /// Only listed when a token is configured (the request is about "me").
    #[serde(default)]
    pub needs_token: bool,
    /// A template of the manifest, expanded with `args`.
    pub uri: Spanned<String>,
    /// Template variable → expression on the item.
    pub args: IndexMap<String, Spanned<String>>,
    /// Expressions on the item for the resource's name and description.
    pub name: Spanned<String>,
    pub description: Option<Spanned<String>>,
}

/// Candidate values for a template variable, from the forge.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionDef {
    pub sources: Vec<Spanned<CompletionSource>>,
}

/// One request giving candidates: `{value}` stands for the text typed so far, `{var}` for
/// another argument of the template already given.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionSource {
    pub fetch: Spanned<String>,
    /// JSONPath of the array in the answer (default: the answer itself).
    pub from: Option<Spanned<String>>,
    /// Expression giving the candidate from an item.
    pub value: Spanned<String>,
    /// Expression → text (with `{var}`) that must match, ignoring case, for an item to count.
    #[serde(default, rename = "where")]
    pub filter: IndexMap<String, String>,
}

/// `tools.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolManifest {
    /// Blocks several tools share (projections, argument sets), named once and used as YAML
    /// aliases (`*name`): read only where they are used.
    #[serde(default)]
    pub shared: Option<serde::de::IgnoredAny>,
    /// More named rules; a name may be defined in only one of the two manifests.
    #[serde(default)]
    pub rules: IndexMap<String, Spanned<RuleDef>>,
    /// Toolset name → its one-line description and its tools: a tool belongs to the toolset
    /// it is written under.
    #[serde(default)]
    pub toolsets: IndexMap<String, ToolsetDef>,
    /// Arguments declared once: a request placeholder that a tool does not declare under its
    /// own `args` takes the declaration of its name here.
    #[serde(default, deserialize_with = "arg_map")]
    pub arguments: IndexMap<String, Spanned<ArgDef>>,
    /// The JSON type of each projected field, by the field's own name: type → the names of
    /// that type (`integer: [id, number]`, `'[string]': [labels]`): what the tools' output
    /// schemas announce.
    #[serde(default)]
    pub field_types: IndexMap<String, Vec<Spanned<String>>>,
    /// The tools `--tool-surface core` lists by name; the rest are reached through the
    /// meta-tools.
    #[serde(default)]
    pub core: Vec<Spanned<String>>,
    /// How `search_tools` reads a task described in words.
    #[serde(default)]
    pub search: SearchDef,
}

impl ToolManifest {
    /// Every tool with the name of its toolset, in the manifest's order.
    pub fn tools(&self) -> impl Iterator<Item = (&str, &ToolDef)> {
        self.toolsets
            .iter()
            .flat_map(|(set, group)| group.tools.iter().map(move |t| (set.as_str(), t)))
    }
}

/// One toolset: what it is for, and its tools.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsetDef {
    pub description: String,
    #[serde(default)]
    pub tools: Vec<ToolDef>,
}

/// `search.yaml`: how `search_tools` reads a task, kept apart from the tools it finds.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchManifest {
    /// The vocabulary queries are read with.
    #[serde(default)]
    pub search: SearchDef,
    /// Tool name → how people ask for what the tool does (added to the tool's own `keywords`).
    #[serde(default)]
    pub keywords: IndexMap<String, Spanned<Vec<String>>>,
}

/// The vocabulary of `search_tools`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchDef {
    /// A word or phrase people use → the words the tools' own texts use for it.
    #[serde(default)]
    pub synonyms: IndexMap<String, Spanned<Vec<String>>>,
    /// Tokens known by their shape → the words they stand for.
    #[serde(default)]
    pub shapes: ShapesDef,
    /// Words that ask to read, to change, and to remove.
    #[serde(default)]
    pub intents: IntentsDef,
    /// A tool verb (the first word of tool names) → the words that ask for it.
    #[serde(default)]
    pub verbs: IndexMap<String, Vec<String>>,
    /// The verbs of tools that list things: what a query in the plural asks for.
    #[serde(default)]
    pub lists: Vec<String>,
    /// Where a query says the thing lives → the start of the forge's paths that hold it there
    /// (`/orgs/: [org, organization]`).
    #[serde(default)]
    pub scopes: IndexMap<String, Vec<String>>,
    /// Words that say a name next to them is somebody's, a user's or an organization's
    /// (`user tlee`, `the finco org`).
    #[serde(default)]
    pub whose: Vec<String>,
    /// Names the keywords use as examples (`acme`, `alice`): they say nothing about which
    /// tool, so no tool's text has them.
    #[serde(default)]
    pub examples: Vec<String>,
}

/// Words (or phrases) that tell a request to read from one to change something.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentsDef {
    #[serde(default)]
    pub read: Vec<String>,
    #[serde(default)]
    pub change: Vec<String>,
    /// Of the words that ask to change, those that ask to remove something.
    #[serde(default)]
    pub delete: Vec<String>,
}

/// What a query's file paths, directories, versions and commit shas stand for.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapesDef {
    #[serde(default)]
    pub path: Vec<String>,
    #[serde(default)]
    pub directory: Vec<String>,
    #[serde(default)]
    pub version: Vec<String>,
    #[serde(default)]
    pub sha: Vec<String>,
    #[serde(default)]
    pub number: Vec<String>,
    #[serde(default)]
    pub duration: Vec<String>,
    #[serde(default)]
    pub repository: Vec<String>,
    #[serde(default)]
    pub identifier: Vec<String>,
}

/// A named parameter rule: a small, JSON-Schema-like description of one value.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    pub description: Option<String>,
    /// `string` (the default) or `integer`.
    #[serde(rename = "type")]
    pub kind: Option<Spanned<String>>,
    pub pattern: Option<Spanned<String>>,
    pub max_length: Option<usize>,
    pub minimum: Option<i64>,
    pub maximum: Option<i64>,
    #[serde(rename = "enum")]
    pub values: Option<Vec<String>>,
}

/// The error table: upstream status → reason, reason → JSON-RPC code.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorsDef {
    /// Keys are a status (`"404"`) or a class (`"4xx"`, `"5xx"`); values are reasons.
    pub status: IndexMap<String, Spanned<String>>,
    /// Reason → JSON-RPC error code.
    pub codes: IndexMap<String, Spanned<i64>>,
    /// Reason → what the caller can do about it, appended to every such error's message: one
    /// sentence, or one for each situation (`default`, `tool`, `resource`, `client_token`,
    /// `configured_token`, `no_token`, `unreachable`), the first that fits being said.
    #[serde(default)]
    pub hints: IndexMap<String, HintDef>,
}

/// The hint of one reason.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum HintDef {
    One(String),
    BySituation(IndexMap<String, String>),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultsDef {
    /// Default cap of embedded lists and list pages.
    pub cap: Option<Spanned<u64>>,
    /// `ttlMs` announced for immutable resources.
    pub immutable_ttl_ms: Option<u64>,
    /// Default size cap of a markdown block, in characters.
    pub markdown_max_chars: Option<usize>,
}

/// One resource (a URI template or, without variables, a concrete resource).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceDef {
    pub name: Spanned<String>,
    pub title: String,
    pub uri: Spanned<String>,
    pub description: String,
    /// Template variable → rule name.
    #[serde(default)]
    pub params: IndexMap<String, Spanned<String>>,
    /// Template variable → value used when the URI leaves it out.
    #[serde(default)]
    pub defaults: IndexMap<String, Spanned<Value>>,
    /// The primary upstream request: `GET /path/{var}?name=value`. A list resource without
    /// one reads its tool's endpoint: the tool's path, and the query pairs the URI can fill.
    pub fetch: Option<Spanned<String>>,
    /// What `@answered` says when the primary request answered.
    pub answered_as: Option<String>,
    /// Requests tried in order when the one before answers 404.
    #[serde(default)]
    pub fallback: Vec<Spanned<FallbackDef>>,
    /// More upstream requests made concurrently with the primary one; name → request.
    #[serde(default)]
    pub with: IndexMap<String, Spanned<String>>,
    /// JSONPaths removed from every answer before anything is projected: values that must
    /// never leave the server.
    #[serde(default)]
    pub secrets: Vec<Spanned<String>>,
    /// Conditions the answer must meet, else the read is "not found".
    #[serde(default)]
    pub checks: Vec<Spanned<CheckDef>>,
    /// Fields of the JSON block (an entity's; a list shows its tool's items).
    pub project: Option<Projection>,
    /// For an entity: the tool whose endpoint it is. The resource reads the tool's `call` and
    /// shows the tool's projection (all of it, or the `fields` named), which its own `project`
    /// may extend with fields the tool does not have.
    pub tool: Option<Spanned<String>>,
    /// The fields of `tool`'s projection the entity shows, in this order (all when left out).
    #[serde(default)]
    pub fields: Vec<Spanned<String>>,
    /// For a resource that reads its tool's endpoint (an entity's `tool`, a list's): the tool's
    /// arguments that take a URI variable of another name (`filepath: path`). A list's sentinel
    /// gives them the read's values; query variables the tool takes by the same name are
    /// carried without saying.
    #[serde(default)]
    pub args: IndexMap<String, Spanned<String>>,
    /// Makes the resource a page of a list.
    pub list: Option<Spanned<ListDef>>,
    /// Bounded lists embedded in the entity, by field name.
    #[serde(default)]
    pub embed: IndexMap<String, Spanned<EmbedDef>>,
    pub markdown: Option<Spanned<MarkdownDef>>,
    /// Serves the answer's text (a file) as a bounded range of lines.
    pub text: Option<Spanned<TextDef>>,
    /// `mutable` (the default: the answer may change at any time) or `immutable`.
    pub cache: Option<Spanned<CacheClass>>,
    /// For an immutable resource: answers that are not final yet, reused for a short time only.
    pub provisional: Option<Spanned<ProvisionalDef>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FallbackDef {
    pub fetch: Spanned<String>,
    /// What `@answered` says when this request answered.
    pub answered_as: String,
}

/// A condition on the answer: `value` (an expression) must equal or end with a text in which
/// `{var}` stands for a variable's value. With `when`, it applies only when each named
/// variable has the given value.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckDef {
    pub value: Spanned<String>,
    pub equals: Option<String>,
    pub ends_with: Option<String>,
    #[serde(default)]
    pub when: IndexMap<String, String>,
}

/// A text answer served as a bounded range of lines.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextDef {
    /// An expression giving the text (default: the answer's body, fetched as text).
    pub from: Option<Spanned<String>>,
    /// The variable or argument holding the first line wanted (1-based).
    pub start_line: Option<String>,
    /// The variable or argument holding the last line wanted (inclusive).
    pub end_line: Option<String>,
    /// The variable or argument holding the byte of `start_line` to begin at, for lines longer
    /// than one answer.
    pub start_byte: Option<String>,
    /// Most lines one answer shows.
    pub max_lines: Option<Spanned<u64>>,
    /// Most bytes one answer shows (cut at a line boundary).
    pub max_bytes: Option<Spanned<u64>>,
    /// Which end is shown when no range is asked for: the start (`oldest`) or the end (`newest`).
    #[serde(default)]
    pub keep: Keep,
    /// The argument naming one file of a unified diff: the answer is that file's part, and
    /// without it the list of files.
    pub diff_file: Option<String>,
    /// The text was written by forge users (a file, a log, a wiki page): how the forge shows it
    /// and who may have written it, in the words of the `untrusted` pipe (`plain`,
    /// `by_extension(ARG)`, `writers(ARG)`, …). Hidden text is made visible and the text block
    /// enveloped.
    pub untrusted: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheClass {
    Immutable,
    Mutable,
}

/// When an answer of an immutable resource is not final yet: its projected `field` has one of
/// the values `in` (a combined status still `pending`). Such an answer is reused for `ttl_ms`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvisionalDef {
    pub field: String,
    #[serde(rename = "in")]
    pub values: Vec<String>,
    pub ttl_ms: u64,
}

/// Where a list's paging happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Window {
    /// The forge pages: `page` and `limit` are sent upstream.
    #[default]
    Upstream,
    /// The forge returns the whole list and ignores paging: forgelens cuts the window.
    Server,
}

/// Which end of an embedded list is kept when it is capped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    #[default]
    Oldest,
    Newest,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListDef {
    /// Most items one read returns; `limit` is clamped to it.
    pub cap: Option<Spanned<u64>>,
    /// The tool whose endpoint the list reads (where its answers hold the array and how they
    /// are paged are the tool's `list:`), and which a truncation sentinel names.
    pub tool: Spanned<String>,
    /// Only an answer that is an array is a list page; any other answer is served as an
    /// entity (a contents path may be a directory or a file).
    #[serde(default)]
    pub only_arrays: bool,
    /// For a resource without its own `project`: the fields of the tool's item projection it
    /// shows, in this order (all of them when left out).
    #[serde(default)]
    pub fields: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedDef {
    /// Its own upstream request (made concurrently with the primary one).
    pub fetch: Option<Spanned<String>>,
    /// JSONPath of the array inside the source body (default: the body itself).
    pub from: Option<Spanned<String>>,
    /// JSONPath of the list's full length in the source body, for forges that count in the
    /// body instead of `X-Total-Count`.
    pub total: Option<Spanned<String>>,
    pub cap: Option<Spanned<u64>>,
    #[serde(default)]
    pub keep: Keep,
    #[serde(default)]
    pub window: Window,
    pub tool: Spanned<String>,
    /// Fields of each item; without it, the items are the tool's (all their fields, or those
    /// `fields` picks), as a list resource's are.
    pub project: Option<Projection>,
    /// Without `project`: the fields of the tool's item projection shown, in this order.
    #[serde(default)]
    pub fields: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkdownDef {
    /// A minijinja template rendered from the JSON block's value.
    pub template: Spanned<String>,
    /// Fields the template may use that the JSON block does not carry.
    pub project: Option<Projection>,
    pub max_chars: Option<usize>,
}

/// One tool.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    pub name: Spanned<String>,
    pub title: String,
    pub description: String,
    /// Words and phrases people use for what the tool does, for `search_tools` only (never
    /// advertised).
    #[serde(default)]
    pub keywords: Vec<String>,
    /// The upstream request: `METHOD /path/{arg}?name={arg}`.
    pub call: Spanned<String>,
    #[serde(default, deserialize_with = "arg_map")]
    pub args: IndexMap<String, Spanned<ArgDef>>,
    /// Makes the tool return one page of a list.
    pub list: Option<Spanned<ToolListDef>>,
    /// Makes the tool return a bounded range of the answer's text.
    pub text: Option<Spanned<TextDef>>,
    /// JSONPaths removed from the answer before anything is projected.
    #[serde(default)]
    pub secrets: Vec<Spanned<String>>,
    /// Fields of the result (for a list: of each item).
    pub project: Option<Projection>,
    /// Types of this tool's fields that differ from the manifest's `field_types` (same form).
    #[serde(default)]
    pub field_types: IndexMap<String, Vec<Spanned<String>>>,
    /// Where the repository of the answer (of each item, for a list) is: a JSONPath to its
    /// full name, or two, to its owner and its name. With `--allow-repos`, items outside are
    /// left out and an answer outside is withheld.
    pub repository_of: Option<Spanned<OneOrTwo>>,
    /// Overrides of the annotations derived from the method.
    pub annotations: Option<AnnotationsDef>,
    /// How the answer is read (default: JSON).
    pub accept: Option<AcceptDef>,
    /// That the answer holds every value of an argument: a forge that drops a value it does
    /// not know (a label name) is then an error naming it.
    pub confirm: Option<Spanned<ConfirmDef>>,
    /// Which forges have the endpoint, when not every one does ("Gitea 1.24 or later"): said
    /// in search results and in the 404 an older or other forge answers.
    pub needs: Option<String>,
}

/// What a tool's answer must hold of one argument, and where the values there are come from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmDef {
    /// The argument (a string or an array of strings) whose every value the answer must hold.
    pub arg: Spanned<String>,
    /// A JSONPath to the values the answer holds.
    #[serde(rename = "in")]
    pub found: Spanned<String>,
    /// What each value must be, in words: "a label of the repository or its organization".
    pub what: String,
    /// Where the values there are can be read, to name them and the nearest: each a GET
    /// request line over the tool's arguments, and a JSONPath to the values in its answer.
    #[serde(default)]
    pub known: Vec<KnownDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownDef {
    pub fetch: Spanned<String>,
    pub value: Spanned<String>,
}

/// One string, or a list of two.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrTwo {
    One(String),
    Two(Vec<String>),
}

/// How a tool reads the forge's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcceptDef {
    Json,
    /// The answer is text (a diff, a raw file, rendered HTML): the result is that string.
    Text,
    /// The answer is any bytes (an archive): the result is them, base64-encoded.
    Binary,
    /// Whatever the forge sends: JSON when it says so, else text (shown through the tool's
    /// `text:` window when it has one).
    Any,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolListDef {
    pub default_limit: Option<Spanned<u64>>,
    pub max_limit: Option<Spanned<u64>>,
    #[serde(default)]
    pub window: Window,
    /// JSONPath of the array in the answer (default: the answer itself).
    pub from: Option<Spanned<String>>,
    /// The forge pages this list by a size of its own and takes only `page`: the tool's
    /// `limit` is fixed to that size (`default_limit` = `max_limit`) and not sent.
    #[serde(default)]
    pub page_only: bool,
    /// What the caller did wrong when the forge answers with something other than a list
    /// (a file's path given to a directory listing): the call is then refused as invalid
    /// params with these words, instead of an "unexpected response".
    pub not_a_list: Option<Spanned<String>>,
    /// Fields of the whole answer shown beside the page's items (a combined status's `state`
    /// beside its statuses): a projection over the answer, as `project` is over an item.
    pub beside: Option<Projection>,
}

/// One tool argument: a rule reference or an inline JSON-Schema-like type. Written as a
/// rule's name alone (`owner: owner_name`), it is that rule and nothing else, the shape of
/// `resources.yaml`'s `variables:` and `params:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgDef {
    /// Optional for an argument with a `rule`: the name says it, and the complete form shows
    /// the rule's description.
    #[serde(default)]
    pub description: String,
    pub rule: Option<Spanned<String>>,
    #[serde(rename = "type")]
    pub kind: Option<Spanned<String>>,
    #[serde(rename = "enum")]
    pub values: Option<Vec<Value>>,
    pub default: Option<Value>,
    pub required: Option<bool>,
    /// The elements of an `array` argument.
    pub items: Option<ItemDef>,
    pub minimum: Option<i64>,
    pub maximum: Option<i64>,
    pub pattern: Option<Spanned<String>>,
    pub max_length: Option<usize>,
    /// A whole JSON Schema (nested objects, arrays of objects), instead of `type` and the
    /// keywords beside it.
    pub schema: Option<Spanned<Value>>,
    /// Where the value goes upstream; derived from `call` when left out (body for the rest).
    #[serde(rename = "in")]
    pub location: Option<ArgLocation>,
    /// The name the forge gives this value in the body, query or form, when it differs from
    /// the argument's (two values the forge names alike, as a path's `owner` and a body's).
    pub field: Option<String>,
    /// Other names a call may give the argument by (an earlier name, the forge's own):
    /// accepted, never advertised.
    #[serde(default)]
    pub aliases: Vec<String>,
}

/// Reads a map of arguments, each declared whole or by its rule's name alone; the rule of the
/// short form is placed where the name is written.
fn arg_map<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<IndexMap<String, Spanned<ArgDef>>, D::Error> {
    let written = IndexMap::<String, Spanned<Written>>::deserialize(deserializer)?;
    let declared = written.into_iter().map(|(name, arg)| {
        let (referenced, defined) = (arg.referenced, arg.defined);
        let def = match arg.value {
            Written::Whole(def) => *def,
            Written::Rule(rule) => ArgDef {
                rule: Some(Spanned::new(rule, referenced, defined)),
                ..ArgDef::default()
            },
        };
        (name, Spanned::new(def, referenced, defined))
    });
    Ok(declared.collect())
}

/// An argument as written: a rule's name, or the map of its keys.
enum Written {
    Rule(String),
    Whole(Box<ArgDef>),
}

impl<'de> Deserialize<'de> for Written {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct WrittenVisitor;

        impl<'de> Visitor<'de> for WrittenVisitor {
            type Value = Written;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a rule's name, or a map declaring the argument")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Written, E> {
                Ok(Written::Rule(v.to_owned()))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Written, A::Error> {
                // Through the source's own map, so the keys inside keep their positions.
                ArgDef::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|def| Written::Whole(Box::new(def)))
            }
        }

        deserializer.deserialize_any(WrittenVisitor)
    }
}

/// What each element of an `array` argument may be, in an argument's own words (`max_length`,
/// as beside `type`); a whole JSON Schema goes under `schema:` instead.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemDef {
    #[serde(rename = "type")]
    pub kind: String,
    pub format: Option<String>,
    #[serde(rename = "enum")]
    pub values: Option<Vec<Value>>,
    pub pattern: Option<String>,
    pub minimum: Option<i64>,
    pub maximum: Option<i64>,
    pub max_length: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgLocation {
    Path,
    Query,
    /// One field of the JSON body.
    Body,
    /// The whole request body: JSON, or `text/plain` when the value is a string.
    Payload,
    /// One text field of a `multipart/form-data` body.
    Form,
    /// One file of a `multipart/form-data` body; the value is its content, base64-encoded.
    File,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnnotationsDef {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// An ordered map of output field → value expression.
pub type Projection = IndexMap<String, Spanned<ProjectValue>>;

/// A projection value: an expression string, a scalar literal, a nested object, or a list of
/// alternatives (the first that is neither null nor empty wins).
#[derive(Debug)]
pub enum ProjectValue {
    Expr(String),
    Literal(Value),
    Object(Projection),
    FirstOf(Vec<Spanned<ProjectValue>>),
}

impl<'de> Deserialize<'de> for ProjectValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Hand-written rather than `untagged` so nested values keep their source positions.
        struct ProjectVisitor;

        impl<'de> Visitor<'de> for ProjectVisitor {
            type Value = ProjectValue;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "an expression string, a scalar, a map of fields or a list of alternatives",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Expr(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Expr(v))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::Bool(v)))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::from(v)))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::from(v)))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::from(v)))
            }

            fn visit_unit<E: de::Error>(self) -> Result<ProjectValue, E> {
                Ok(ProjectValue::Literal(Value::Null))
            }

            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ProjectValue, A::Error> {
                let mut alternatives = Vec::new();
                while let Some(value) = seq.next_element::<Spanned<ProjectValue>>()? {
                    alternatives.push(value);
                }
                Ok(ProjectValue::FirstOf(alternatives))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProjectValue, A::Error> {
                let mut fields = Projection::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value::<Spanned<ProjectValue>>()?;
                    if fields.insert(key.clone(), value).is_some() {
                        return Err(de::Error::custom(format!("duplicate field `{key}`")));
                    }
                }
                Ok(ProjectValue::Object(fields))
            }
        }

        deserializer.deserialize_any(ProjectVisitor)
    }
}
