//! The service: a compiled catalog joined to a forge client. It runs a read or a call end to
//! end — plan, send (concurrently where a read needs several requests), assemble — for every
//! front end alike: the MCP adapter over stdio or HTTP, and the `read` / `call` commands.
//! Reads go through the read cache ([`crate::cache`]). Calls of the meta-tools
//! ([`crate::surface`]) are answered here too, over the same reads and calls.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::cache::ReadCache;
use crate::config::{Config, Surface};
use crate::engine::complete::Plan;
use crate::engine::error::{Invalid, echo};
use crate::engine::listing::Listed;
use crate::engine::search::SearchIndex;
use crate::engine::tool::{Form, Serving};
use crate::engine::untrusted::{Envelope, Rendering, neutralize};
use crate::engine::{self, Answer, Catalog, ReadOutput, Tool};
use crate::forge::allow::AllowList;
use crate::forge::allow::{self as allow_list, Target};
use crate::forge::{self, ClientOptions, ForgeError, Method, Token};
use crate::lockdown::{self, Held, Lockdown, Reveal};
use crate::manifest::checks;
use crate::manifest::diagnostic::did_you_mean;
use crate::manifest::{self, Diagnostic, Finding, Sources};
use crate::surface::{self, Meta};

/// Why a server could not start.
#[derive(Debug, Error)]
pub enum StartError {
    #[error("the manifests have {} error(s):\n{}", .0.len(), render(.0))]
    Manifest(Vec<Diagnostic>),
    #[error("{0}")]
    Filter(String),
    #[error(transparent)]
    Forge(#[from] forge::ForgeError),
}

fn render(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| format!("  {d}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why a tool call produced no result.
#[derive(Debug, Error)]
pub enum CallError {
    /// No such tool at all: a protocol error. `hint` names the tool it may have meant.
    #[error("unknown tool `{}`{hint}; tools/list shows the tools offered", echo(.name))]
    Unknown { name: String, hint: String },
    /// The tool exists but this server does not offer it.
    #[error("tool `{}` is not offered: {why}", echo(.name))]
    Refused { name: String, why: String },
    /// The call failed: bad arguments or an upstream failure.
    #[error(transparent)]
    Failed(#[from] engine::Error),
    /// `read_resource` failed as `resources/read` of `uri` would have.
    #[error("{error}")]
    Read { uri: String, error: engine::Error },
}

/// What a call gives back.
#[derive(Debug)]
pub enum Called {
    /// A tool's result.
    Value(ToolAnswer),
    /// The blocks of a resource, read through `read_resource`.
    Read(ReadOutput),
}

/// A tool's result: the structured value, what it says about itself (its `_meta`), and, when
/// the text a client shows the model differs from the value's JSON, that text.
#[derive(Debug)]
pub struct ToolAnswer {
    pub value: Value,
    pub meta: Option<Value>,
    /// The value's JSON with user-written text enveloped (a text tool's `text`), for the
    /// result's content; the structured value keeps the text as it is.
    pub shown: Option<String>,
}

impl ToolAnswer {
    fn plain(value: Value) -> ToolAnswer {
        ToolAnswer {
            value,
            meta: None,
            shown: None,
        }
    }
}

/// One entry of `tools/list`.
#[derive(Debug, Clone, Copy)]
pub enum Listing<'a> {
    Meta(Meta),
    Tool(&'a Tool),
}

/// A catalog and a forge, ready to serve.
#[derive(Debug)]
pub struct Service {
    catalog: Catalog,
    forge: forge::Client,
    cache: ReadCache,
    token: Option<Token>,
    /// Tools removed by the configuration (meta-tools among them), and why.
    withheld: HashMap<String, String>,
    surface: Surface,
    form: Form,
    /// Every reachable tool, for `search_tools`.
    index: SearchIndex,
    /// The repositories requests may be about (`--allow-repos`); the forge client holds every
    /// request path to it too.
    allow: Option<AllowList>,
    /// `--lockdown`, with its kept verdicts.
    lockdown: Option<Lockdown>,
}

impl Service {
    /// Compiles the manifests, applies the tool filters and builds the forge client.
    pub fn start(config: &Config, sources: &Sources) -> Result<Service, StartError> {
        let catalog = compile(sources).map_err(StartError::Manifest)?;
        let mut options = ClientOptions::new(config.url.clone());
        options.read_only = config.read_only;
        options.timeout = config.timeout;
        options.max_in_flight = config.max_upstream;
        options.allow = config.allow.clone();
        let forge = forge::Client::new(options)?;
        Service::with_client(catalog, forge, config)
    }

    /// Applies the tool filters of `config` to `catalog` and joins it to `forge`.
    pub fn with_client(
        mut catalog: Catalog,
        forge: forge::Client,
        config: &Config,
    ) -> Result<Service, StartError> {
        let withheld = filter_tools(&mut catalog, config)?;
        catalog.withhold_endpoints(|tool| withheld.get(tool).cloned());
        catalog.set_max_answer_bytes(config.max_answer_bytes);
        catalog.set_instance(config.url.host_str().unwrap_or_default());
        let offered = |meta: Meta| !withheld.contains_key(meta.name());
        if config.surface == Surface::Core {
            let core = catalog.core.clone();
            let (read, write) = (offered(Meta::CallReadTool), offered(Meta::CallWriteTool));
            catalog.route_through(|tool| match core.contains(&tool.name) {
                true => None,
                false if tool.annotations.read_only && read => Some(Meta::CallReadTool.name()),
                false if write => Some(Meta::CallWriteTool.name()),
                false => None,
            });
        }
        let index = SearchIndex::new(
            catalog.tools(),
            |set| catalog.toolsets.get(set).cloned(),
            |tool| tool.generated,
            catalog.vocabulary(),
        );
        Ok(Service {
            catalog,
            forge,
            cache: ReadCache::new(config.mutable_ttl),
            token: config.token.clone(),
            withheld,
            surface: config.surface,
            form: Form::Lean { sudo: config.sudo },
            index,
            allow: config.allow.clone(),
            lockdown: config.lockdown.then(Lockdown::default),
        })
    }

    pub fn surface(&self) -> Surface {
        self.surface
    }

    /// The schema form `tools/list` shows.
    pub fn form(&self) -> Form {
        self.form
    }

    /// What `tools/list` shows, in order: the meta-tools offered, then the tools.
    pub fn listed(&self) -> Vec<Listing<'_>> {
        let metas = Meta::ALL
            .into_iter()
            .filter(|m| m.listed_in(self.surface) && self.offers(*m))
            .map(Listing::Meta);
        let tools: Vec<Listing<'_>> = match self.surface {
            Surface::Full => self.catalog.tools().iter().map(Listing::Tool).collect(),
            Surface::Core => self
                .catalog
                .core
                .iter()
                .filter_map(|name| self.catalog.tool(name))
                .map(Listing::Tool)
                .collect(),
        };
        metas.chain(tools).collect()
    }

    fn offers(&self, meta: Meta) -> bool {
        !self.withheld.contains_key(meta.name())
    }

    /// The forge's instance URL.
    pub fn instance(&self) -> &reqwest::Url {
        self.forge.instance()
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The configured token (the one a request without its own uses).
    pub fn token(&self) -> Option<&Token> {
        self.token.as_ref()
    }

    /// Whether the forge is reachable: it answered `GET /version`. Any answer short of a server
    /// error counts, since an instance that wants a sign-in (401/403) is up all the same.
    pub async fn probe(&self) -> Result<(), ForgeError> {
        match self
            .forge
            .send(&forge::Request::get("/version"), self.token.as_ref())
            .await
        {
            Ok(_) => Ok(()),
            Err(ForgeError::Status { status, .. }) if status < 500 => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Reads one resource: from the cache when an answer there is still fresh, else from the
    /// forge (keeping the answer when it may be reused). The policy runs between projecting
    /// and bounding, lockdown included.
    pub async fn read(
        &self,
        uri: &str,
        token: Option<&Token>,
    ) -> Result<ReadOutput, engine::Error> {
        let (bare, reveal) = match &self.lockdown {
            Some(_) => lockdown::strip_reveal(uri),
            None => (uri.to_owned(), false),
        };
        let read = self.catalog.route(&bare)?;
        // Kept as shown: a read revealing withheld text is kept apart from one that does not.
        if let Some(kept) = self.cache.get(token, uri, Instant::now()) {
            return Ok(kept);
        }
        let mut answers = Vec::new();
        let mut primary_path = String::new();
        let mut batch = read.plan()?;
        while !batch.is_empty() {
            if let Some(primary) = batch
                .iter()
                .rfind(|p| matches!(p.slot, engine::Slot::Primary(_)))
            {
                primary_path = primary.request.path.clone();
            }
            let results =
                futures::future::join_all(batch.iter().map(|p| self.forge.send(&p.request, token)))
                    .await;
            answers.extend(
                batch
                    .into_iter()
                    .zip(results)
                    .map(|(planned, result)| Answer {
                        slot: planned.slot,
                        result,
                    }),
            );
            batch = read.follow_up(&answers)?;
        }
        let mut projected = read.project_answers(answers)?;
        if let (Some(lockdown), false) = (&self.lockdown, reveal) {
            let marks = read.marks();
            let shown_uri = lockdown::reveal_uri(&bare);
            let outcome = lockdown
                .hold(
                    &self.forge,
                    token,
                    &primary_path,
                    Held::Marked(&marks),
                    read.text_mark(),
                    &read.args,
                    &mut projected.value,
                    Reveal::Uri(&shown_uri),
                )
                .await;
            let repo = scope_of(&primary_path);
            projected.withheld_markdown = outcome.top_notice(|who| {
                lockdown::notice(who, repo_pair(&repo), &Reveal::Uri(&shown_uri))
            });
            projected.withheld_text = outcome.text;
        }
        let output = read.finish(projected)?;
        self.cache.put(token, uri, &output, Instant::now());
        Ok(output)
    }

    /// One page of the `index`-th `resources/list` source, and whether another follows.
    pub async fn listing_page(
        &self,
        index: usize,
        page: u64,
        token: Option<&Token>,
    ) -> Result<(Vec<Listed>, bool), engine::Error> {
        let listing = &self.catalog.listings()[index];
        let response = self.forge.send(&listing.request(page), token).await?;
        Ok(listing.entries(response, page, self.allow.as_ref()))
    }

    /// Candidates for variable `var` of template `template`, given the text typed so far and
    /// the template's other arguments. A source the forge fails to answer gives none.
    pub async fn complete(
        &self,
        template: &str,
        var: &str,
        typed: &str,
        context: &[(String, String)],
        token: Option<&Token>,
    ) -> Vec<String> {
        match self.catalog.complete(template, var, typed, context) {
            Plan::Values(values) => values,
            Plan::Fetch(completion, requests, args) => {
                let answers =
                    futures::future::join_all(requests.iter().map(|r| self.forge.send(r, token)))
                        .await;
                let answers: Vec<_> = answers
                    .into_iter()
                    .map(|a| {
                        a.inspect_err(|e| tracing::info!("completion source failed: {e}"))
                            .ok()
                    })
                    .collect();
                // Names from the forge, shown like any of its text: hidden characters visible.
                let candidates = completion
                    .candidates(&answers, &args)
                    .into_iter()
                    .map(|c| neutralize(&c, Rendering::Plain, self.catalog.instance()).into_owned())
                    .collect();
                self.within_allow_list(var, candidates, context)
            }
        }
    }

    /// Completion candidates that name an owner or a repository outside the allow-list are
    /// left out (the URI templates call them `owner` and `repo`).
    fn within_allow_list(
        &self,
        var: &str,
        candidates: Vec<String>,
        context: &[(String, String)],
    ) -> Vec<String> {
        let Some(allow) = &self.allow else {
            return candidates;
        };
        let owner = context.iter().find(|(k, _)| k == "owner").map(|(_, v)| v);
        candidates
            .into_iter()
            .filter(|c| match (var, owner) {
                ("owner", _) => allow.allows_owner(c),
                ("repo", Some(owner)) => allow.allows(owner, c),
                ("repo", None) => false,
                _ => true,
            })
            .collect()
    }

    /// Calls one tool, or one meta-tool, with its JSON arguments.
    pub async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        token: Option<&Token>,
    ) -> Result<Called, CallError> {
        match Meta::named(name) {
            Some(meta) if self.offers(meta) => self.call_meta(meta, arguments, token).await,
            _ => self.call_tool(name, arguments, token).await,
        }
    }

    /// Calls one tool of the catalog: check, send, project, the policy (lockdown included),
    /// then the bound.
    async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        token: Option<&Token>,
    ) -> Result<Called, CallError> {
        let tool = self.reachable(name)?;
        let mut arguments = arguments;
        let reveal = match &self.lockdown {
            Some(_) => arguments.remove(lockdown::REVEAL) == Some(Value::Bool(true)),
            None => false,
        };
        let call = tool.prepare(arguments)?;
        let request = call.request()?;
        let response = self
            .forge
            .send(&request, token)
            .await
            .map_err(engine::Error::from)?;
        let serving = Serving {
            budget: self.catalog.max_answer_bytes(),
            allow: self.allow.as_ref(),
            instance: self.catalog.instance(),
        };
        let mut projected = call.project(response, &serving)?;
        if let (Some(lockdown), false) = (&self.lockdown, reveal) {
            let marks = tool.marks();
            let held = match tool.unshaped() {
                true => Held::Unshaped,
                false => Held::Marked(&marks),
            };
            let text = tool.text_mark().filter(|_| projected.is_text());
            let outcome = lockdown
                .hold(
                    &self.forge,
                    token,
                    &request.path,
                    held,
                    text,
                    call.args(),
                    &mut projected.value,
                    Reveal::Tool(&tool.name),
                )
                .await;
            projected.withheld_text = outcome.text;
        }
        let value = call.bound(projected, serving.budget)?;
        let meta = tool.untrusted_meta();
        // The text a client shows the model: what forge users wrote, in an envelope. A text
        // tool's text is enveloped inside its JSON; an unshaped answer is enveloped whole.
        let shown = if tool.unshaped() {
            let json = serde_json::to_string(&value).expect("a JSON value always serializes");
            let envelope = Envelope::fresh(std::iter::once(json.as_str()));
            Some(envelope.wrap(&json, &tool.name, None, &request.describe()))
        } else {
            match (
                tool.untrusted_text(),
                value.get("text").and_then(Value::as_str),
            ) {
                (true, Some(text)) => {
                    let envelope = Envelope::fresh(std::iter::once(text));
                    let mut shown = value.clone();
                    shown["text"] =
                        Value::String(envelope.wrap(text, &tool.name, None, &request.describe()));
                    Some(serde_json::to_string(&shown).expect("a JSON value always serializes"))
                }
                _ => None,
            }
        };
        Ok(Called::Value(ToolAnswer { value, meta, shown }))
    }

    /// " (did you mean `x`?)" for the reachable tool nearest to `name`, or nothing.
    fn nearest_tool(&self, name: &str) -> String {
        let names = self.catalog.tools().iter().map(|t| t.name.as_str());
        did_you_mean(name, names.chain(Meta::ALL.iter().map(|m| m.name())))
    }

    /// The tool named `name`, or why it cannot be called.
    fn reachable(&self, name: &str) -> Result<&Tool, CallError> {
        self.catalog
            .tool(name)
            .ok_or_else(|| match self.withheld.get(name) {
                Some(why) => CallError::Refused {
                    name: name.to_owned(),
                    why: why.clone(),
                },
                None => CallError::Unknown {
                    name: name.to_owned(),
                    hint: self.nearest_tool(name),
                },
            })
    }

    async fn call_meta(
        &self,
        meta: Meta,
        mut arguments: Map<String, Value>,
        token: Option<&Token>,
    ) -> Result<Called, CallError> {
        meta.check(&arguments)
            .map_err(|why| Invalid::MetaArguments {
                tool: meta.name().to_owned(),
                why,
            })
            .map_err(engine::Error::from)?;
        let text = |arguments: &Map<String, Value>, key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let budget = self.catalog.max_answer_bytes();
        match meta {
            Meta::SearchTools => {
                let limit = arguments
                    .get("limit")
                    .and_then(Value::as_u64)
                    .unwrap_or(surface::DEFAULT_SEARCH_RESULTS);
                let found = self.search(&text(&arguments, "query"), limit as usize);
                Ok(Called::Value(ToolAnswer::plain(engine::tool::within(
                    found, budget,
                ))))
            }
            Meta::DescribeTools => {
                let names: Vec<String> = match arguments.remove("names") {
                    Some(Value::Array(names)) => names
                        .into_iter()
                        .filter_map(|n| n.as_str().map(str::to_owned))
                        .collect(),
                    _ => Vec::new(),
                };
                Ok(Called::Value(ToolAnswer::plain(engine::tool::within(
                    self.describe(&names)?,
                    budget,
                ))))
            }
            Meta::CallReadTool | Meta::CallWriteTool => {
                let name = text(&arguments, "name");
                if let Some(inner) = Meta::named(&name) {
                    return Err(CallError::Refused {
                        name,
                        why: format!("{} is itself a meta-tool; call it directly", inner.name()),
                    });
                }
                let tool = self.reachable(&name)?;
                if meta == Meta::CallReadTool && !tool.annotations.read_only {
                    let how = match self.offers(Meta::CallWriteTool) {
                        true => "run it with call_write_tool",
                        false => "call_write_tool is not offered here",
                    };
                    return Err(CallError::Refused {
                        name,
                        why: format!(
                            "call_read_tool runs only read-only tools, and this one changes things; {how}"
                        ),
                    });
                }
                let inner = match arguments.remove("arguments") {
                    Some(Value::Object(map)) => map,
                    _ => Map::new(),
                };
                self.call_tool(&name, inner, token).await
            }
            Meta::ReadResource => {
                let uri = text(&arguments, "uri");
                match self.read(&uri, token).await {
                    Ok(output) => Ok(Called::Read(output)),
                    Err(error) => Err(CallError::Read { uri, error }),
                }
            }
        }
    }

    /// The `search_tools` answer: the best `limit` reachable tools for `query`.
    fn search(&self, query: &str, limit: usize) -> Value {
        let hits = self.index.search(query, limit);
        let tools: Vec<Value> = hits
            .iter()
            .map(|hit| {
                let tool = &self.catalog.tools()[hit.tool];
                let mut row = Map::new();
                row.insert("name".into(), json!(tool.name));
                row.insert("title".into(), json!(tool.title));
                row.insert("description".into(), json!(tool.summary));
                row.insert("toolset".into(), json!(tool.toolset));
                row.insert("read_only".into(), json!(tool.annotations.read_only));
                row.insert("destructive".into(), json!(tool.annotations.destructive));
                row.insert("arguments".into(), json!(tool.signature()));
                if let Some(via) = tool.via {
                    row.insert("call_with".into(), json!(via));
                }
                Value::Object(row)
            })
            .collect();
        let note = match (tools.is_empty(), self.surface) {
            (true, _) => {
                "No tool matches those words; try others (what you want to do, and to what)."
            }
            (false, Surface::Core) => {
                "Call a tool without `call_with` directly; call the others through the meta-tool `call_with` names, as {name, arguments}. describe_tools gives complete schemas."
            }
            (false, Surface::Full) => {
                "Call any of these directly; describe_tools gives complete schemas."
            }
        };
        json!({"query": query, "tools": tools, "note": note})
    }

    /// The `describe_tools` answer: the complete form of each named tool.
    fn describe(&self, names: &[String]) -> Result<Value, CallError> {
        if names.is_empty() || names.len() > surface::MAX_DESCRIBED {
            return Err(engine::Error::from(Invalid::DescribeCount {
                max: surface::MAX_DESCRIBED,
                given: names.len(),
            })
            .into());
        }
        let mut described = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            if let Some(meta) = Meta::named(name).filter(|m| self.offers(*m)) {
                described.push(json!({
                    "name": meta.name(),
                    "title": meta.title(),
                    "description": meta.description(),
                    "annotations": annotations_json(meta.annotations()),
                    "inputSchema": meta.input_schema(),
                }));
                continue;
            }
            match self.catalog.tool(name) {
                Some(tool) => {
                    let mut entry = json!({
                        "name": tool.name,
                        "title": tool.title,
                        "description": tool.description,
                        "toolset": tool.toolset,
                        "annotations": annotations_json(tool.annotations),
                        "inputSchema": tool.input_schema(Form::Complete),
                    });
                    if let Some(output) = tool.output_schema() {
                        entry["outputSchema"] = Value::Object(output);
                    }
                    if let Some(via) = tool.via {
                        entry["call_with"] = json!(via);
                    }
                    described.push(entry);
                }
                None => {
                    let why = match self.withheld.get(name) {
                        Some(why) => format!("not offered: {why}"),
                        None => format!(
                            "no such tool{}",
                            did_you_mean(
                                name,
                                self.catalog.tools().iter().map(|t| t.name.as_str())
                            )
                        ),
                    };
                    unknown.push(json!({"name": name, "why": why}));
                }
            }
        }
        let mut out = json!({"tools": described});
        if !unknown.is_empty() {
            out["unknown"] = Value::Array(unknown);
        }
        Ok(out)
    }
}

/// The repository a request path is about, when it names one.
fn scope_of(path: &str) -> Option<(String, String)> {
    match allow_list::target(path) {
        Target::Repo(owner, repo) => Some((owner, repo)),
        _ => None,
    }
}

fn repo_pair(repo: &Option<(String, String)>) -> Option<(&str, &str)> {
    repo.as_ref().map(|(o, r)| (o.as_str(), r.as_str()))
}

/// Annotations as MCP names them.
fn annotations_json(a: engine::Annotations) -> Value {
    json!({
        "readOnlyHint": a.read_only,
        "destructiveHint": a.destructive,
        "idempotentHint": a.idempotent,
        "openWorldHint": a.open_world,
    })
}

/// Parses and compiles both manifests, and the generated catalog when there is one, naming
/// every error with its file.
pub fn compile(sources: &Sources) -> Result<Catalog, Vec<Diagnostic>> {
    let manifests = manifest::parse(sources)?;
    let mut catalog = engine::compile(&manifests).map_err(|findings| {
        findings
            .iter()
            .map(|f| sources.diagnostic(f))
            .collect::<Vec<_>>()
    })?;
    if let Some(generated) = &sources.catalog {
        let skipped = catalog.absorb(compile_generated(&sources.resources, generated)?);
        for name in skipped {
            tracing::info!(tool = %name, "a curated tool has this name; the generated one is not served");
        }
    }
    let reserved: Vec<Diagnostic> = catalog
        .tools()
        .iter()
        .filter(|t| Meta::named(&t.name).is_some())
        .map(|t| {
            sources.diagnostic(&Finding {
                pos: t.pos,
                code: checks::RESERVED_TOOL,
                message: format!(
                    "`{}` is the name of one of forgelens's meta-tools; give the tool another",
                    t.name
                ),
            })
        })
        .collect();
    if !reserved.is_empty() {
        return Err(reserved);
    }
    Ok(catalog)
}

/// Compiles a generated catalog on its own, with the rules and error table of `resources`
/// but none of its resources, listings or completions (they name curated tools and templates
/// the catalog does not have).
pub fn compile_generated(
    resources: &manifest::Source,
    generated: &manifest::Source,
) -> Result<Catalog, Vec<Diagnostic>> {
    let sources = Sources {
        resources: resources.clone(),
        tools: generated.clone(),
        catalog: None,
    };
    let mut manifests = manifest::parse(&sources)?;
    manifests.resources.resources.clear();
    manifests.resources.listing.clear();
    manifests.resources.completions.clear();
    engine::compile(&manifests)
        .map_err(|findings| findings.iter().map(|f| sources.diagnostic(f)).collect())
}

/// Removes the tools the configuration does not offer; an unknown name is an error that
/// suggests the nearest ones.
fn filter_tools(
    catalog: &mut Catalog,
    config: &Config,
) -> Result<HashMap<String, String>, StartError> {
    if let Some(toolsets) = &config.toolsets {
        let unknown: Vec<&String> = toolsets
            .iter()
            .filter(|t| !catalog.toolsets.keys().any(|known| same_toolset(t, known)))
            .collect();
        if !unknown.is_empty() {
            let valid: Vec<&str> = catalog.toolsets.keys().map(String::as_str).collect();
            return Err(StartError::Filter(format!(
                "unknown toolset(s) {}; valid toolsets: {}",
                quoted(unknown.iter().map(|s| s.as_str())),
                valid.join(", ")
            )));
        }
    }
    let unknown: Vec<&String> = config
        .disabled_tools
        .iter()
        .filter(|t| catalog.tool(t).is_none() && Meta::named(t).is_none())
        .collect();
    if !unknown.is_empty() {
        let names = || {
            Meta::ALL
                .iter()
                .map(|m| m.name())
                .chain(catalog.tools().iter().map(|t| t.name.as_str()))
        };
        let named: Vec<String> = unknown
            .iter()
            .map(|name| format!("`{name}`{}", did_you_mean(name, names())))
            .collect();
        return Err(StartError::Filter(format!(
            "unknown tool(s) in the disabled tools: {}; `forgelens list tools` prints every name",
            named.join(", ")
        )));
    }
    let mut withheld = HashMap::new();
    for tool in catalog.tools() {
        // A read-only POST (rendering) still sends a POST, which read-only mode never does.
        let why = if config.read_only
            && !(tool.annotations.read_only && tool.method() == Some(Method::Get))
        {
            Some(match tool.method() {
                Some(Method::Get) => {
                    "forgelens runs read-only and this tool is not marked read-only".to_owned()
                }
                Some(other) => format!(
                    "forgelens runs read-only, sending only GET requests, and this tool calls {}",
                    other.as_str()
                ),
                None => "forgelens runs read-only and this tool may send any method".to_owned(),
            })
        } else if config
            .toolsets
            .as_ref()
            .is_some_and(|sets| !sets.iter().any(|set| same_toolset(set, &tool.toolset)))
        {
            Some(format!(
                "its toolset `{}` is not among the enabled toolsets",
                tool.toolset
            ))
        } else if config.disabled_tools.contains(&tool.name) {
            Some("it is disabled by the configuration".to_owned())
        } else {
            None
        };
        if let Some(why) = why {
            withheld.insert(tool.name.clone(), why);
        }
    }
    catalog.retain_tools(|t| !withheld.contains_key(&t.name));
    for meta in Meta::ALL {
        let why = if config.read_only && !meta.annotations().read_only {
            Some("forgelens runs read-only, and this meta-tool runs tools that change things")
        } else if config.disabled_tools.iter().any(|t| t == meta.name()) {
            Some("it is disabled by the configuration")
        } else {
            None
        };
        if let Some(why) = why {
            withheld.insert(meta.name().to_owned(), why.to_owned());
        }
    }
    Ok(withheld)
}

fn quoted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether two toolset names are one: the same, or one the plural of the other. Curated
/// toolsets are plural (`issues`, `pulls`, `repos`) and generated ones singular (`issue`,
/// `pull`, `repo`), so either spelling names both.
fn same_toolset(a: &str, b: &str) -> bool {
    a == b || a.strip_suffix('s') == Some(b) || b.strip_suffix('s') == Some(a)
}
