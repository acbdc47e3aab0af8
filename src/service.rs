//! The service: a compiled catalog joined to a forge client. It runs a read or a call end to
//! end — plan, send (concurrently where a read needs several requests), assemble — for every
//! front end alike: the MCP adapter over stdio or HTTP, and the `read` / `call` commands.
//! Reads go through the read cache ([`crate::cache`]).

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Map, Value};
use thiserror::Error;

use crate::cache::ReadCache;
use crate::config::Config;
use crate::engine::complete::Plan;
use crate::engine::listing::Listed;
use crate::engine::{self, Answer, Catalog, ReadOutput};
use crate::forge::{self, ClientOptions, ForgeError, Method, Token};
use crate::manifest::{self, Diagnostic, Sources};

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
    /// No such tool at all: a protocol error.
    #[error("unknown tool `{0}`; tools/list shows the tools offered")]
    Unknown(String),
    /// The tool exists but this server does not offer it.
    #[error("tool `{name}` is not offered: {why}")]
    Refused { name: String, why: String },
    /// The call failed: bad arguments or an upstream failure.
    #[error(transparent)]
    Failed(#[from] engine::Error),
}

/// A catalog and a forge, ready to serve.
#[derive(Debug)]
pub struct Service {
    catalog: Catalog,
    forge: forge::Client,
    cache: ReadCache,
    token: Option<Token>,
    /// Tools removed by the configuration, and why.
    withheld: HashMap<String, String>,
}

impl Service {
    /// Compiles the manifests, applies the tool filters and builds the forge client.
    pub fn start(config: &Config, sources: &Sources) -> Result<Service, StartError> {
        let catalog = compile(sources).map_err(StartError::Manifest)?;
        let mut options = ClientOptions::new(config.url.clone());
        options.read_only = config.read_only;
        options.timeout = config.timeout;
        options.max_in_flight = config.max_upstream;
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
        Ok(Service {
            catalog,
            forge,
            cache: ReadCache::new(config.mutable_ttl),
            token: config.token.clone(),
            withheld,
        })
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
    /// forge (keeping the answer when it may be reused).
    pub async fn read(
        &self,
        uri: &str,
        token: Option<&Token>,
    ) -> Result<ReadOutput, engine::Error> {
        let read = self.catalog.route(uri)?;
        if let Some(kept) = self.cache.get(token, uri, Instant::now()) {
            return Ok(kept);
        }
        let mut answers = Vec::new();
        let mut batch = read.plan()?;
        while !batch.is_empty() {
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
        let output = read.assemble(answers)?;
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
        Ok(listing.entries(response, page))
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
                completion.candidates(&answers, &args)
            }
        }
    }

    /// Calls one tool with its JSON arguments.
    pub async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        token: Option<&Token>,
    ) -> Result<Value, CallError> {
        let Some(tool) = self.catalog.tool(name) else {
            return Err(match self.withheld.get(name) {
                Some(why) => CallError::Refused {
                    name: name.to_owned(),
                    why: why.clone(),
                },
                None => CallError::Unknown(name.to_owned()),
            });
        };
        let call = tool.prepare(arguments)?;
        let request = call.request()?;
        let response = self
            .forge
            .send(&request, token)
            .await
            .map_err(engine::Error::from)?;
        Ok(call.finish(response)?)
    }
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

/// Removes the tools the configuration does not offer; unknown names are an error that lists
/// the valid ones.
fn filter_tools(
    catalog: &mut Catalog,
    config: &Config,
) -> Result<HashMap<String, String>, StartError> {
    if let Some(toolsets) = &config.toolsets {
        let unknown: Vec<&String> = toolsets
            .iter()
            .filter(|t| !catalog.toolsets.contains_key(*t))
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
        .filter(|t| catalog.tool(t).is_none())
        .collect();
    if !unknown.is_empty() {
        let valid: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
        return Err(StartError::Filter(format!(
            "unknown tool(s) {} in the disabled tools; valid tools: {}",
            quoted(unknown.iter().map(|s| s.as_str())),
            valid.join(", ")
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
            .is_some_and(|sets| !sets.contains(&tool.toolset))
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
    Ok(withheld)
}

fn quoted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
