//! The command line: what each subcommand takes, and the function that runs each.
//!
//! `forgelens` alone (or `serve`) is the stdio server, or with `--http ADDR` the Streamable HTTP
//! server; `read` and `call` run one read or call through the same service the server uses;
//! `manifest-lint` checks the manifests; `catalog` generates and checks tool catalogs from a
//! swagger. Exit codes: 0 success, 1 findings (or a stale catalog, or a failed read/call), 2
//! usage, configuration or unreadable input.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};

use crate::config::{self, CatalogSource, Config, Flags, HttpConfig, HttpFlags};
use crate::forge::{self, ClientOptions};
use crate::manifest::{FileId, Source, Sources};
use crate::service::{CallError, Called, Service, StartError, ToolAnswer};
use crate::{catalog, lint, mcp};

/// Serve a Forgejo or Gitea instance to AI agents over MCP.
#[derive(Debug, Parser)]
#[command(name = "forgelens", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServerArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio (the default), or over Streamable HTTP with `--http ADDR`.
    Serve(ServerArgs),
    /// Read one resource and print its content blocks.
    Read {
        /// A forgejo:// URI.
        uri: String,
        #[command(flatten)]
        serve: ServeArgs,
    },
    /// Print what the server offers: every reachable tool (with the options given, whatever
    /// the tool surface lists), the resource templates, or the toolsets.
    List {
        #[arg(value_enum)]
        what: ListWhat,
        #[command(flatten)]
        serve: ServeArgs,
    },
    /// Call one tool and print its result.
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments, as one JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        args: String,
        #[command(flatten)]
        serve: ServeArgs,
    },
    /// Check the manifests and print every finding.
    ///
    /// Checks `resources.yaml` and `tools.yaml` in the working directory, or the files
    /// --resources / --tools name; either one absent is replaced by the built-in copy. The
    /// summary line names each file read and marks a built-in copy `(built-in)`.
    ManifestLint(LintArgs),
    /// Generate or check a catalog of tools from a Forgejo or Gitea swagger.
    #[command(subcommand)]
    Catalog(CatalogCommand),
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Write the catalog of every operation of a swagger.
    Generate(GenerateArgs),
    /// Exit 1 when FILE is not what `generate` would write for the swagger.
    Check(CheckArgs),
}

/// Where a swagger comes from, and what the catalog may carry.
#[derive(Debug, Clone, Args)]
pub struct SpecArgs {
    /// The Swagger 2.0 spec: a file, or an http(s) URL such as
    /// https://codeberg.org/swagger.v1.json.
    #[arg(long, value_name = "FILE|URL")]
    pub swagger: String,
    /// Put each operation's summary from the spec in its tool's description (for a catalog of
    /// your own; the spec's words then live in the file).
    #[arg(long)]
    pub with_summaries: bool,
}

#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
    /// The catalog file to write (`-` for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
    /// The catalog file to check.
    pub file: PathBuf,
}

/// Where the manifests come from.
#[derive(Debug, Clone, Default, Args)]
pub struct ManifestArgs {
    /// Resource manifest to use instead of the built-in one.
    #[arg(
        long,
        value_name = "FILE",
        env = "FORGELENS_RESOURCES",
        hide_env_values = true
    )]
    pub resources: Option<PathBuf>,
    /// Tool manifest to use instead of the built-in one.
    #[arg(
        long,
        value_name = "FILE",
        env = "FORGELENS_TOOLS",
        hide_env_values = true
    )]
    pub tools: Option<PathBuf>,
}

impl ManifestArgs {
    pub(crate) fn sources(&self) -> Result<Sources, String> {
        let read = |path: Option<&PathBuf>, file| {
            Source::from_option(path.map(PathBuf::as_path), file).map_err(|e| {
                format!(
                    "cannot read {}: {e}",
                    path.map_or("manifest".into(), |p| p.display().to_string())
                )
            })
        };
        Ok(Sources {
            resources: read(self.resources.as_ref(), FileId::Resources)?,
            tools: read(self.tools.as_ref(), FileId::Tools)?,
            catalog: None,
        })
    }
}

/// Options of the server and of `read` / `call`.
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// The instance URL [env: FORGEJO_URL, GITEA_URL, GITEA_HOST] [default: https://codeberg.org].
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Read the token from this file (the token is never a flag) [env: FORGEJO_TOKEN, …].
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Offer only read tools and send nothing but GET [env: FORGEJO_READ_ONLY, READ_ONLY; any
    /// of them set true wins].
    #[arg(long)]
    pub read_only: bool,
    /// Offer only these toolsets [env: FORGEJO_TOOLSETS, TOOLSETS].
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub toolsets: Option<Vec<String>>,
    /// Do not offer these tools [env: FORGEJO_DISABLED_TOOLS, DISABLED_TOOLS].
    #[arg(long, value_name = "X,Y", value_delimiter = ',')]
    pub disabled_tools: Option<Vec<String>>,
    /// Whole-request timeout towards the forge, in seconds [env: FORGELENS_TIMEOUT] [default: 30].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Most requests in flight to the forge at once; more wait their turn
    /// [env: FORGELENS_MAX_UPSTREAM_REQUESTS] [default: 64].
    #[arg(long, value_name = "N")]
    pub max_upstream_requests: Option<u64>,
    /// Log filter, e.g. `info` or `forgelens=debug` (overrides RUST_LOG); logs go to stderr.
    #[arg(long, value_name = "FILTER")]
    pub log_level: Option<String>,
    /// Also serve the tools of this generated catalog [env: FORGELENS_CATALOG].
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<PathBuf>,
    /// Also serve a catalog generated from the instance's own /swagger.v1.json, cached on disk
    /// for a day [env: FORGELENS_CATALOG_FROM_INSTANCE].
    #[arg(long)]
    pub catalog_from_instance: bool,
    /// Where --catalog-from-instance keeps the instance's spec [env: FORGELENS_CACHE_DIR]
    /// [default: $XDG_CACHE_HOME/forgelens or ~/.cache/forgelens].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Reuse answers of mutable resources (issues, labels…) for this many milliseconds; they
    /// may then be that much out of date [env: FORGELENS_CACHE_TTL_MS] [default: 0, never].
    /// Immutable answers (a commit by full sha) are always reused.
    #[arg(long, value_name = "MS")]
    pub cache_ttl_ms: Option<u64>,
    /// Which tools tools/list shows: `core` (a small set plus search_tools, describe_tools,
    /// call_read_tool, call_write_tool and read_resource, which reach every other tool) or
    /// `full` (every tool) [env: FORGELENS_TOOL_SURFACE] [default: core].
    #[arg(long, value_name = "core|full")]
    pub tool_surface: Option<String>,
    /// Announce the `sudo` argument of every tool (it needs an admin token; it is accepted
    /// either way) [env: FORGELENS_SUDO].
    #[arg(long)]
    pub sudo: bool,
    /// The most bytes one answer may hold; a longer one is cut and says how to get the rest
    /// [env: FORGELENS_MAX_ANSWER_BYTES] [default: 49152].
    #[arg(long, value_name = "BYTES")]
    pub max_answer_bytes: Option<usize>,
    /// Touch only these repositories: `owner/repo` or `owner/*`, comma-separated; requests about
    /// any other are not sent and lists leave them out [env: FORGELENS_ALLOW_REPOS].
    #[arg(long, value_name = "OWNER/REPO,…", value_delimiter = ',')]
    pub allow_repos: Option<Vec<String>>,
    /// On public repositories, withhold text written by accounts without write access (read
    /// it on purpose with include_untrusted) [env: FORGELENS_LOCKDOWN].
    #[arg(long)]
    pub lockdown: bool,
    #[command(flatten)]
    pub manifests: ManifestArgs,
}

impl ManifestArgs {
    /// These, with `outer` (given before the subcommand) filling what these leave out.
    fn or(self, outer: &ManifestArgs) -> ManifestArgs {
        ManifestArgs {
            resources: self.resources.or_else(|| outer.resources.clone()),
            tools: self.tools.or_else(|| outer.tools.clone()),
        }
    }
}

impl ServeArgs {
    /// These options, with `outer` (those given before the subcommand) filling what these leave
    /// out, so that an option works on either side of `read`, `call` or `serve`.
    fn or(self, outer: &ServeArgs) -> ServeArgs {
        ServeArgs {
            url: self.url.or_else(|| outer.url.clone()),
            token_file: self.token_file.or_else(|| outer.token_file.clone()),
            read_only: self.read_only || outer.read_only,
            toolsets: self.toolsets.or_else(|| outer.toolsets.clone()),
            disabled_tools: self.disabled_tools.or_else(|| outer.disabled_tools.clone()),
            timeout: self.timeout.or(outer.timeout),
            max_upstream_requests: self.max_upstream_requests.or(outer.max_upstream_requests),
            log_level: self.log_level.or_else(|| outer.log_level.clone()),
            catalog: self.catalog.or_else(|| outer.catalog.clone()),
            catalog_from_instance: self.catalog_from_instance || outer.catalog_from_instance,
            cache_dir: self.cache_dir.or_else(|| outer.cache_dir.clone()),
            cache_ttl_ms: self.cache_ttl_ms.or(outer.cache_ttl_ms),
            tool_surface: self.tool_surface.or_else(|| outer.tool_surface.clone()),
            sudo: self.sudo || outer.sudo,
            max_answer_bytes: self.max_answer_bytes.or(outer.max_answer_bytes),
            allow_repos: self.allow_repos.or_else(|| outer.allow_repos.clone()),
            lockdown: self.lockdown || outer.lockdown,
            manifests: self.manifests.or(&outer.manifests),
        }
    }

    fn flags(&self) -> Flags {
        Flags {
            url: self.url.clone(),
            token_file: self.token_file.clone(),
            read_only: self.read_only,
            toolsets: self.toolsets.clone(),
            disabled_tools: self.disabled_tools.clone(),
            timeout_secs: self.timeout,
            max_upstream_requests: self.max_upstream_requests,
            catalog: self.catalog.clone(),
            catalog_from_instance: self.catalog_from_instance,
            cache_dir: self.cache_dir.clone(),
            cache_ttl_ms: self.cache_ttl_ms,
            tool_surface: self.tool_surface.clone(),
            sudo: self.sudo,
            max_answer_bytes: self.max_answer_bytes,
            allow_repos: self.allow_repos.clone(),
            lockdown: self.lockdown,
        }
    }
}

/// Options of the server: those it shares with `read` / `call`, and those of HTTP.
#[derive(Debug, Clone, Default, Args)]
pub struct ServerArgs {
    #[command(flatten)]
    pub common: ServeArgs,
    #[command(flatten)]
    pub http: HttpArgs,
}

/// Options of the Streamable HTTP transport; they need `--http` (or `FORGELENS_HTTP`).
#[derive(Debug, Clone, Default, Args)]
pub struct HttpArgs {
    /// Serve MCP over Streamable HTTP at ADDR (e.g. 127.0.0.1:8080), path /mcp, instead of
    /// stdio [env: FORGELENS_HTTP].
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Let --http bind an address outside loopback [env: FORGELENS_ALLOW_REMOTE].
    #[arg(long)]
    pub allow_remote: bool,
    /// Refuse (401) a request without its own `Authorization` token instead of using the
    /// configured one [env: FORGELENS_REQUIRE_CLIENT_TOKEN].
    #[arg(long)]
    pub require_client_token: bool,
    /// `Host` values accepted besides the loopback names, e.g. mcp.example.com; `*` accepts
    /// any [env: FORGELENS_ALLOWED_HOSTS].
    #[arg(long, value_name = "H,H", value_delimiter = ',')]
    pub allowed_hosts: Option<Vec<String>>,
    /// Browser origins accepted besides the loopback ones, e.g. https://app.example.com
    /// [env: FORGELENS_ALLOWED_ORIGINS].
    #[arg(long, value_name = "O,O", value_delimiter = ',')]
    pub allowed_origins: Option<Vec<String>>,
    /// Largest request body, in bytes; a larger one gets 413 [env: FORGELENS_MAX_BODY_BYTES]
    /// [default: 1048576].
    #[arg(long, value_name = "BYTES")]
    pub max_body_bytes: Option<usize>,
    /// MCP requests served at once; one more gets 503 [env: FORGELENS_MAX_CONCURRENT_REQUESTS]
    /// [default: 64].
    #[arg(long, value_name = "N")]
    pub max_concurrent_requests: Option<usize>,
    /// Seconds a connection gets to send a request's headers, from its opening or its previous
    /// answer; slow and idle connections are closed after it [env: FORGELENS_HEADER_TIMEOUT]
    /// [default: 10].
    #[arg(long, value_name = "SECONDS")]
    pub header_timeout: Option<u64>,
    /// Connections open at once; more wait to be accepted. Keep it below the descriptor limit
    /// (`ulimit -n`) [env: FORGELENS_MAX_CONNECTIONS] [default: 512].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Give clients of revisions before 2026-07-28 a session held in this process (replicas
    /// then need sticky routing) [env: FORGELENS_HTTP_SESSIONS].
    #[arg(long)]
    pub sessions: bool,
}

impl HttpArgs {
    /// These options, with `outer` (given before `serve`) filling what these leave out.
    fn or(self, outer: &HttpArgs) -> HttpArgs {
        HttpArgs {
            http: self.http.or_else(|| outer.http.clone()),
            allow_remote: self.allow_remote || outer.allow_remote,
            require_client_token: self.require_client_token || outer.require_client_token,
            allowed_hosts: self.allowed_hosts.or_else(|| outer.allowed_hosts.clone()),
            allowed_origins: self
                .allowed_origins
                .or_else(|| outer.allowed_origins.clone()),
            max_body_bytes: self.max_body_bytes.or(outer.max_body_bytes),
            max_concurrent_requests: self
                .max_concurrent_requests
                .or(outer.max_concurrent_requests),
            header_timeout: self.header_timeout.or(outer.header_timeout),
            max_connections: self.max_connections.or(outer.max_connections),
            sessions: self.sessions || outer.sessions,
        }
    }

    fn flags(&self) -> HttpFlags {
        HttpFlags {
            addr: self.http.clone(),
            allow_remote: self.allow_remote,
            require_client_token: self.require_client_token,
            allowed_hosts: self.allowed_hosts.clone(),
            allowed_origins: self.allowed_origins.clone(),
            max_body_bytes: self.max_body_bytes,
            max_concurrent_requests: self.max_concurrent_requests,
            header_timeout_secs: self.header_timeout,
            max_connections: self.max_connections,
            sessions: self.sessions,
        }
    }

    /// The first HTTP option given on the command line, to refuse it without `--http`.
    fn first_given(&self) -> Option<&'static str> {
        [
            (self.allow_remote, "--allow-remote"),
            (self.require_client_token, "--require-client-token"),
            (self.allowed_hosts.is_some(), "--allowed-hosts"),
            (self.allowed_origins.is_some(), "--allowed-origins"),
            (self.max_body_bytes.is_some(), "--max-body-bytes"),
            (
                self.max_concurrent_requests.is_some(),
                "--max-concurrent-requests",
            ),
            (self.header_timeout.is_some(), "--header-timeout"),
            (self.max_connections.is_some(), "--max-connections"),
            (self.sessions, "--sessions"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

/// What `forgelens list` prints.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ListWhat {
    Tools,
    Resources,
    Toolsets,
}

#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub manifests: ManifestArgs,
    /// Also check every upstream request against this Swagger 2.0 spec (the instance's
    /// `/swagger.v1.json`): that its endpoint, its method and each of its query parameters
    /// exist.
    #[arg(long, value_name = "FILE")]
    pub swagger: Option<PathBuf>,
    /// Output format: one line per finding, or a JSON array.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Runs the command line; the exit code says how it went. A server calls `started` once its
/// catalog is compiled, before it serves: the binary's moment to have its allocator give back
/// the memory that compiling used and no longer needs.
pub fn run(cli: Cli, started: fn()) -> ExitCode {
    // Options given before the subcommand count as if given after it.
    let outer = cli.serve;
    let server_only = |command: &str| {
        let given = outer.http.http.as_ref().map(|_| "--http");
        given.or_else(|| outer.http.first_given()).map(|flag| {
            fail(
                &format!("{flag} is an option of the HTTP server, not of `{command}`"),
                2,
            )
        })
    };
    match cli.command {
        None => serve(&outer, started),
        Some(Command::Serve(args)) => serve(
            &ServerArgs {
                common: args.common.or(&outer.common),
                http: args.http.or(&outer.http),
            },
            started,
        ),
        Some(Command::Read { uri, serve }) => {
            server_only("read").unwrap_or_else(|| read(&uri, &serve.or(&outer.common)))
        }
        Some(Command::List { what, serve }) => {
            server_only("list").unwrap_or_else(|| list(what, &serve.or(&outer.common)))
        }
        Some(Command::Call { tool, args, serve }) => {
            server_only("call").unwrap_or_else(|| call(&tool, &args, &serve.or(&outer.common)))
        }
        Some(Command::ManifestLint(mut args)) => {
            args.manifests = args.manifests.or(&outer.common.manifests);
            lint::run(&args)
        }
        Some(Command::Catalog(command)) => {
            init_logging(None, "warn");
            catalog::command::run(&command)
        }
    }
}

fn init_logging(filter: Option<&str>, default: &str) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::{EnvFilter, Layer as _, filter};
    let filter = filter
        .map(str::to_owned)
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| default.to_owned());
    // rmcp logs whole messages (a tool's arguments, secrets and file contents among them) at
    // debug and trace, and client notifications at info. Whatever the filter asks for, its
    // events pass only from info up, and none that carries a message. Its warning for each
    // error answer (a request id and the whole error) goes too: forgelens logs every failed
    // read or call once, itself.
    let no_bodies = filter::filter_fn(|meta| {
        let fields = meta.fields();
        !meta.target().starts_with("rmcp")
            || (*meta.level() <= tracing::Level::INFO
                && fields.field("notification").is_none()
                && (fields.field("id").is_none() || fields.field("error").is_none()))
    });
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter::FilterExt::and(EnvFilter::new(filter), no_bodies));
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// Resolves the configuration and starts the service; on failure, the message and exit code.
fn start(args: &ServeArgs) -> Result<Service, (String, u8)> {
    let config = Config::resolve(&args.flags(), &|k| std::env::var(k).ok())
        .map_err(|e| (e.to_string(), 2))?;
    if let Some(warning) = args
        .token_file
        .as_deref()
        .and_then(config::token_file_warning)
    {
        tracing::warn!("{warning}");
    }
    for note in &config.notes {
        tracing::warn!("{note}");
    }
    let mut sources = args.manifests.sources().map_err(|e| (e, 2))?;
    sources.catalog = match &config.catalog {
        None => None,
        Some(CatalogSource::File(path)) => Some(Source::read(path).map_err(|e| {
            (
                format!("cannot read the catalog {}: {e}", path.display()),
                2,
            )
        })?),
        Some(CatalogSource::Instance { cache_dir }) => {
            Some(instance_catalog(&config, cache_dir).map_err(|e| (e, 2))?)
        }
    };
    Service::start(&config, &sources).map_err(|e| {
        let code = match e {
            StartError::Manifest(_) => 1,
            StartError::Filter(_) | StartError::Forge(_) => 2,
        };
        (e.to_string(), code)
    })
}

/// The catalog of the instance's own spec, with its summaries (the user's spec, shown to them).
fn instance_catalog(config: &Config, cache_dir: &Path) -> Result<Source, String> {
    let mut options = ClientOptions::new(config.url.clone());
    options.timeout = config.timeout;
    let client = forge::Client::new(options).map_err(|e| e.to_string())?;
    let spec = runtime()
        .block_on(catalog::instance::spec_text(
            &client,
            config.token.as_ref(),
            cache_dir,
        ))
        .map_err(|e| e.to_string())?;
    let (_, text) = catalog::generate_text(&spec, catalog::Options { summaries: true })
        .map_err(|e| format!("{}: {e}", client.swagger_url()))?;
    Ok(Source {
        name: format!("the catalog generated from {}", client.swagger_url()),
        text,
    })
}

/// The runtime of one-shot commands and of the stdio server: a single thread, since one client
/// on a pipe waits on the forge far more than it computes, and every worker thread costs memory.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime can be built")
}

/// The runtime of the HTTP server, which serves many clients at once.
fn threaded_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime can be built")
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("forgelens: {message}");
    ExitCode::from(code)
}

fn serve(args: &ServerArgs, started: fn()) -> ExitCode {
    init_logging(args.common.log_level.as_deref(), "forgelens=info,rmcp=warn");
    let http = match HttpConfig::resolve(&args.http.flags(), &|k| std::env::var(k).ok()) {
        Ok(http) => http,
        Err(e) => return fail(&e.to_string(), 2),
    };
    if let (None, Some(flag)) = (&http, args.http.first_given()) {
        return fail(
            &format!("{flag} is an option of the HTTP server; add --http ADDR"),
            2,
        );
    }
    let service = match start(&args.common) {
        Ok(s) => Arc::new(s),
        Err((message, code)) => return fail(&message, code),
    };
    started();
    let transport = if http.is_some() { "HTTP" } else { "stdio" };
    tracing::info!(
        forge = %service.instance(),
        version = env!("CARGO_PKG_VERSION"),
        resources = service.catalog().resources().len(),
        tools = service.catalog().tools().len(),
        "forgelens serving MCP on {transport}"
    );
    let served = match http {
        None => runtime()
            .block_on(mcp::serve_stdio(service))
            .map_err(|e| format!("{e:#}")),
        Some(http) => threaded_runtime()
            .block_on(mcp::http::serve(service, &http))
            .map_err(|e| e.to_string()),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message, 1),
    }
}

fn read(uri: &str, args: &ServeArgs) -> ExitCode {
    init_logging(args.log_level.as_deref(), "warn");
    let service = match start(args) {
        Ok(s) => s,
        Err((message, code)) => return fail(&message, code),
    };
    match runtime().block_on(service.read(uri, service.token())) {
        Ok(output) => {
            let text: Vec<&str> = output.blocks.iter().map(|b| b.text.as_str()).collect();
            print(&text.join("\n\n"))
        }
        Err(error) => {
            let errors = &service.catalog().errors;
            let reason = errors.reason(&error);
            fail(
                &format!(
                    "{} [{reason}, code {}]",
                    errors.message(&error),
                    errors.code(reason)
                ),
                1,
            )
        }
    }
}

/// One line per entry, tab-separated, for people and for `grep`/`cut` alike.
fn list(what: ListWhat, args: &ServeArgs) -> ExitCode {
    init_logging(args.log_level.as_deref(), "warn");
    let service = match start(args) {
        Ok(s) => s,
        Err((message, code)) => return fail(&message, code),
    };
    let catalog = service.catalog();
    let lines: Vec<String> = match what {
        ListWhat::Tools => catalog
            .tools()
            .iter()
            .map(|t| {
                let kind = match (t.annotations.read_only, t.annotations.destructive) {
                    (true, _) => "read",
                    (false, true) => "write, destructive",
                    (false, false) => "write",
                };
                format!("{}\t{}\t{kind}\t{}", t.name, t.toolset, t.title)
            })
            .collect(),
        ListWhat::Resources => catalog
            .resources()
            .iter()
            .map(|r| format!("{}\t{}", r.template.as_str(), r.title))
            .collect(),
        ListWhat::Toolsets => catalog
            .toolsets
            .keys()
            .map(|name| {
                let count = catalog
                    .tools()
                    .iter()
                    .filter(|t| &t.toolset == name)
                    .count();
                format!("{name}\t{count} tools")
            })
            .collect(),
    };
    print(&lines.join("\n"))
}

fn call(tool: &str, json: &str, args: &ServeArgs) -> ExitCode {
    init_logging(args.log_level.as_deref(), "warn");
    let arguments: Map<String, Value> = match serde_json::from_str(json) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return fail("--args must be a JSON object", 2),
        Err(e) => return fail(&format!("--args is not JSON: {e}"), 2),
    };
    let service = match start(args) {
        Ok(s) => s,
        Err((message, code)) => return fail(&message, code),
    };
    match runtime().block_on(service.call(tool, arguments, service.token())) {
        Ok(Called::Value(ToolAnswer { value, .. })) => {
            print(&serde_json::to_string_pretty(&value).expect("a JSON value serializes"))
        }
        Ok(Called::Read(output)) => {
            let text: Vec<&str> = output.blocks.iter().map(|b| b.text.as_str()).collect();
            print(&text.join("\n\n"))
        }
        Err(CallError::Failed(error) | CallError::Read { error, .. }) => {
            let errors = &service.catalog().errors;
            fail(
                &format!("{} [{}]", errors.message(&error), errors.reason(&error)),
                1,
            )
        }
        Err(other) => fail(&other.to_string(), 1),
    }
}

/// Prints to stdout; a closed pipe is not an error.
fn print(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&format!("cannot write to stdout: {e}"), 2),
    }
}
