//! The service: a compiled catalog joined to a forge client. It runs a read or a call end to
//! end — plan, send (concurrently where a read needs several requests), assemble — for every
//! front end alike: the MCP adapter over stdio or HTTP, and the `read` / `call` commands.
//! Reads go through the read cache ([`crate::cache`]). Its rooms: [`load`] compiles the
//! manifests, [`offer`] decides what a configuration offers, [`meta`] answers the meta-tools
//! over the same reads and calls.

pub mod find;
mod load;
mod meta;
mod offer;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde_json::{Map, Value};
use thiserror::Error;

use crate::cache::ReadCache;
use crate::config::{Config, Surface};
use crate::engine::complete::Plan;
use crate::engine::endpoint::Serving;
use crate::engine::error::echo;
use crate::engine::listing::Listed;
use crate::engine::tool::Form;
use crate::engine::untrusted::{Rendering, neutralize};
use crate::engine::{self, Answer, Catalog, ReadOutput, Tool};
use crate::forge::allow::{self as allow_list, Target};
use crate::forge::{self, ClientOptions, ForgeError, Token};
use crate::lockdown::{self, Held, Lockdown, Reveal};
use crate::manifest::diagnostic::did_you_mean;
use crate::manifest::{Diagnostic, Sources};
use crate::store::redis::RedisStore;
use crate::surface::Meta;

pub use self::load::{compile, compile_exactly, compile_generated};
use self::offer::filter_tools;

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
    /// Every reachable tool, for `search_tools`: built by the first search, since a session
    /// that never searches should not pay for it at start-up.
    index: OnceLock<find::Finder>,
    /// What every answer is held to: the byte budget, the repositories it may be about
    /// (`--allow-repos`; the forge client holds every request path to them too), the host.
    serving: Serving,
    /// `--lockdown`, with its kept verdicts.
    lockdown: Option<Lockdown>,
    /// The store replicas share (`--store redis://…`).
    shared: Option<Arc<RedisStore>>,
}

impl Service {
    /// Compiles the manifests, applies the tool filters and builds the forge client; with
    /// `shared`, the store replicas share, the cache and the forge's budget are kept there.
    pub fn start(
        config: &Config,
        sources: &Sources,
        shared: Option<Arc<RedisStore>>,
    ) -> Result<Service, StartError> {
        let catalog = compile(sources).map_err(StartError::Manifest)?;
        let mut options = ClientOptions::new(config.url.clone());
        options.read_only = config.read_only;
        options.timeout = config.timeout;
        options.max_in_flight = config.max_upstream;
        options.allow = config.allow.clone();
        options.rate = config.forge_rate;
        options.store = shared.clone();
        let started = Instant::now();
        let forge = forge::Client::new(options)?;
        load::phase("forge client", started);
        let mut service = Service::with_client(catalog, forge, config)?;
        if let Some(store) = shared {
            service.cache.share(store.clone());
            service.shared = Some(store);
        }
        Ok(service)
    }

    /// The store replicas share, when the server was started with one.
    pub fn shared_store(&self) -> Option<&Arc<RedisStore>> {
        self.shared.as_ref()
    }

    /// Applies the tool filters of `config` to `catalog` and joins it to `forge`.
    pub fn with_client(
        mut catalog: Catalog,
        forge: forge::Client,
        config: &Config,
    ) -> Result<Service, StartError> {
        let withheld = filter_tools(&mut catalog, config)?;
        catalog.withhold_endpoints(|tool| withheld.get(tool).cloned());
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
        Ok(Service {
            catalog,
            forge,
            cache: ReadCache::new(config.mutable_ttl),
            token: config.token.clone(),
            withheld,
            surface: config.surface,
            form: Form::Lean { sudo: config.sudo },
            index: OnceLock::new(),
            serving: Serving {
                budget: config.max_answer_bytes,
                allow: config.allow.clone(),
                instance: config.url.host_str().unwrap_or_default().to_owned(),
            },
            lockdown: config.lockdown.then(Lockdown::default),
            shared: None,
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

    /// The search index, built on first use.
    fn index(&self) -> &find::Finder {
        self.index.get_or_init(|| {
            let started = Instant::now();
            let finder = find::Finder::new(&self.catalog, Default::default());
            load::phase("search index", started);
            finder
        })
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

    /// The forge client, for the OAuth sign-in's calls to the forge.
    pub fn forge(&self) -> &forge::Client {
        &self.forge
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
        if let Some(kept) = self.cache.lookup(token, uri).await {
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
        let mut projected = read.project_answers(answers, &self.serving)?;
        if let (Some(lockdown), false) = (&self.lockdown, reveal) {
            let shown_uri = lockdown::reveal_uri(&bare);
            let outcome = lockdown
                .hold(
                    &self.forge,
                    token,
                    &primary_path,
                    Held::Marked(read.marks()),
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
        let output = read.finish(projected, &self.serving)?;
        self.cache.keep(token, uri, &output).await;
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
        Ok(listing.entries(response, page, self.serving.allow.as_ref()))
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
                    .map(|c| neutralize(&c, Rendering::Plain, &self.serving.instance).into_owned())
                    .collect();
                self.within_allow_list(template, var, candidates, context)
            }
        }
    }

    /// Completion candidates that name an owner or a repository outside the allow-list are
    /// left out: those of the variables where the template's resource's endpoint names its
    /// repository.
    fn within_allow_list(
        &self,
        template: &str,
        var: &str,
        candidates: Vec<String>,
        context: &[(String, String)],
    ) -> Vec<String> {
        let Some(allow) = &self.serving.allow else {
            return candidates;
        };
        let repository = self
            .catalog
            .resource(template)
            .and_then(|r| r.repository_vars());
        let Some((owner_var, repo_var)) = repository else {
            return candidates;
        };
        let owner = context
            .iter()
            .find(|(k, _)| *k == owner_var)
            .map(|(_, v)| v);
        candidates
            .into_iter()
            .filter(|c| {
                if var == owner_var {
                    allow.allows_owner(c)
                } else if var == repo_var {
                    owner.is_some_and(|owner| allow.allows(owner, c))
                } else {
                    true
                }
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
            .map_err(|e| engine::Error::from(tool.explain(e)))?;
        let serving = &self.serving;
        let mut projected = call.project(response, serving)?;
        if let Some(unconfirmed) = projected.unconfirmed.take() {
            // Read what the values may be, to name them; what cannot be read (an owner that
            // is no organization has no organization labels) is left out.
            let mut known = Vec::new();
            for request in call.known_requests() {
                known.push(match request {
                    Ok(request) => match self.forge.send(&request, token).await {
                        Ok(response) => Some(response.body.into_json()),
                        Err(_) => None,
                    },
                    Err(_) => None,
                });
            }
            return Err(call.unconfirmed_error(unconfirmed, &known).into());
        }
        if let (Some(lockdown), false) = (&self.lockdown, reveal) {
            let held = match tool.unshaped() {
                true => Held::Unshaped,
                false => Held::Marked(tool.marks()),
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
        let shown = tool.shown(&value, &request.describe());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Flags;

    #[tokio::test]
    async fn the_search_index_waits_for_the_first_search() {
        let config = Config::resolve(&Flags::default(), &|_| None).unwrap();
        let service = Service::start(&config, &Sources::builtin(), None).unwrap();
        assert!(service.index.get().is_none(), "built at start-up");
        let mut names = Map::new();
        names.insert("names".into(), serde_json::json!(["get_issue"]));
        service.call("describe_tools", names, None).await.unwrap();
        assert!(service.index.get().is_none(), "built for describe_tools");
        let mut query = Map::new();
        query.insert("query".into(), "open a pull request".into());
        let Called::Value(found) = service.call("search_tools", query, None).await.unwrap() else {
            panic!("search_tools answers a value");
        };
        assert!(service.index.get().is_some(), "the first search builds it");
        assert!(
            serde_json::to_string(&found.value)
                .unwrap()
                .contains("create_pull_request"),
            "{found:?}"
        );
    }
}
