//! The command line: what each subcommand takes, and the function that runs each.
//!
//! `forgelens` alone (or `serve`) is the stdio server, or with `--http ADDR` the Streamable HTTP
//! server; `read` and `call` run one read or call through the same service the server uses;
//! `manifest-lint` checks the manifests; `catalog` generates and checks tool catalogs from a
//! swagger. Exit codes: 0 success, 1 findings (or a stale catalog, or a failed read/call), 2
//! usage, configuration or unreadable input.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};

use crate::catalog::command::CatalogCommand;
use crate::config::{self, CatalogSource, Config, Flags, HttpConfig, HttpFlags, ManifestArgs};
use crate::engine::{
    self,
    error::{Situation, TokenFrom},
};
use crate::forge::{self, ClientOptions};
use crate::lint::LintArgs;
use crate::manifest::Source;
use crate::service::{CallError, Called, Listing, Service, StartError, ToolAnswer};
use crate::store::redis::RedisStore;
use crate::{catalog, lint, mcp, settings};

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
    Serve(Box<ServerArgs>),
    /// Read one resource and print its content blocks.
    Read {
        /// A forgejo:// URI.
        uri: String,
        #[command(flatten)]
        serve: ServeArgs,
    },
    /// Print what the server offers with the options given: the tools a client's `tools/list`
    /// shows (meta-tools included; `--all` for every tool reachable, with the meta-tool that
    /// runs each one not listed), the resource templates, or the toolsets.
    List {
        #[arg(value_enum)]
        what: ListWhat,
        /// With `tools`: every tool reachable, not only those `tools/list` shows.
        #[arg(long)]
        all: bool,
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
    /// Checks `resources.yaml`, `tools.yaml` and `search.yaml` in the working directory, or the
    /// files --resources / --tools / --search name; any one absent is replaced by the built-in
    /// copy. The
    /// summary line names each file read and marks a built-in copy `(built-in)`.
    ManifestLint(LintArgs),
    /// Generate or check a catalog of tools from a Forgejo or Gitea swagger.
    #[command(subcommand)]
    Catalog(CatalogCommand),
}

/// Options of the server and of `read` / `call` / `list`.
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub flags: Flags,
    #[arg(long = settings::LOG_LEVEL.flag, value_name = settings::LOG_LEVEL.value,
        help = settings::LOG_LEVEL.help_text())]
    pub log_level: Option<String>,
    #[command(flatten)]
    pub manifests: ManifestArgs,
}

impl ServeArgs {
    /// These options, with `outer` (those given before the subcommand) filling what these leave
    /// out, so that an option works on either side of `read`, `call` or `serve`.
    fn or(self, outer: &ServeArgs) -> ServeArgs {
        ServeArgs {
            flags: self.flags.or(&outer.flags),
            log_level: self.log_level.or_else(|| outer.log_level.clone()),
            manifests: self.manifests.or(&outer.manifests),
        }
    }
}

/// Options of the server: those it shares with `read` / `call`, and those of HTTP.
#[derive(Debug, Clone, Default, Args)]
pub struct ServerArgs {
    #[command(flatten)]
    pub common: ServeArgs,
    #[command(flatten)]
    pub http: HttpFlags,
}

/// What `forgelens list` prints.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ListWhat {
    Tools,
    Resources,
    Toolsets,
}

/// Runs the command line; the exit code says how it went. A server calls `started` once its
/// catalog is compiled, before it serves: the binary's moment to have its allocator give back
/// the memory that compiling used and no longer needs.
pub fn run(cli: Cli, started: fn()) -> ExitCode {
    // Options given before the subcommand count as if given after it.
    let outer = cli.serve;
    let server_only = |command: &str| {
        let given = outer.http.http.as_ref().map(|_| settings::HTTP.name());
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
        Some(Command::List { what, all, serve }) => {
            server_only("list").unwrap_or_else(|| list(what, all, &serve.or(&outer.common)))
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

/// The service the stdio server runs for `args` (a command line without the program's name),
/// with its settings read from `env` instead of the process environment: what `forgelens`
/// serves, for a caller that serves it on streams of its own (the tests' in-process servers).
pub fn stdio_service(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Service, String> {
    let cli = Cli::try_parse_from(std::iter::once("forgelens".to_owned()).chain(args.to_vec()))
        .map_err(|e| e.to_string())?;
    let args = match cli.command {
        None => cli.serve,
        Some(Command::Serve(args)) => ServerArgs {
            common: args.common.or(&cli.serve.common),
            http: args.http.or(&cli.serve.http),
        },
        Some(_) => return Err("only the server's options are served".into()),
    };
    if let Some(flag) = args.http.http.as_ref().map(|_| settings::HTTP.name()) {
        return Err(format!("{flag}: this serves stdio only"));
    }
    start(&args.common, env, None).map_err(|(message, _)| message)
}

/// Resolves the configuration and starts the service (its cache and forge budget kept in
/// `shared`, when given); on failure, the message and exit code.
fn start(
    args: &ServeArgs,
    env: &dyn Fn(&str) -> Option<String>,
    shared: Option<Arc<RedisStore>>,
) -> Result<Service, (String, u8)> {
    let config = Config::resolve(&args.flags, env).map_err(|e| (e.to_string(), 2))?;
    if let Some(warning) = args
        .flags
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
    Service::start(&config, &sources, shared).map_err(|e| {
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

/// A setting from the process environment.
fn process_env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("forgelens: {message}");
    ExitCode::from(code)
}

fn serve(args: &ServerArgs, started: fn()) -> ExitCode {
    init_logging(args.common.log_level.as_deref(), "forgelens=info,rmcp=warn");
    let mut http = match HttpConfig::resolve(&args.http, &process_env) {
        Ok(http) => http,
        Err(e) => return fail(&e.to_string(), 2),
    };
    if let (None, Some(flag)) = (&http, args.http.first_given()) {
        return fail(
            &format!("{flag} is an option of the HTTP server; add --http ADDR"),
            2,
        );
    }
    let runtime = match http {
        None => runtime(),
        Some(_) => threaded_runtime(),
    };
    // The shared store's connection task is spawned on the runtime that will serve.
    let _entered = runtime.enter();
    let shared = match http
        .as_ref()
        .and_then(|h| h.store.as_ref())
        .map(RedisStore::new)
    {
        None => None,
        Some(Ok(store)) => Some(Arc::new(store)),
        Some(Err(e)) => return fail(&e.to_string(), 2),
    };
    let service = match start(&args.common, &process_env, shared) {
        Ok(s) => Arc::new(s),
        Err((message, code)) => return fail(&message, code),
    };
    // A read-only server signs users in for reading only: the forge is asked for no more.
    if let Some(oauth) = http.as_mut().and_then(|h| h.oauth.as_mut())
        && service.forge().read_only()
    {
        oauth.offered = oauth.offered.read_only();
    }
    started();
    // Over HTTP the server says so once it is bound: a port already taken fails before.
    if http.is_none() {
        mcp::announce(&service, "stdio");
    }
    let served = match http {
        None => runtime
            .block_on(mcp::serve_stdio(service))
            .map_err(|e| format!("{e:#}")),
        Some(http) => runtime
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
    let service = match start(args, &process_env, None) {
        Ok(s) => s,
        Err((message, code)) => return fail(&message, code),
    };
    match runtime().block_on(service.read(uri, service.token())) {
        Ok(output) => {
            let text: Vec<&str> = output.blocks.iter().map(|b| b.text.as_str()).collect();
            print(&text.join("\n\n"))
        }
        Err(error) => failed(&service, &error, false),
    }
}

/// A failed read or call as the command line says it: the message with the hint that fits,
/// then the reason and the JSON-RPC code the failure has as a read, alike for both.
fn failed(service: &Service, error: &engine::Error, tool: bool) -> ExitCode {
    let errors = &service.catalog().errors;
    let reason = errors.reason(error);
    let situation = Situation {
        tool,
        token: match service.token() {
            Some(_) => TokenFrom::Configured,
            None => TokenFrom::None,
        },
    };
    fail(
        &format!(
            "{} [{reason}, code {}]",
            errors.message_in(error, situation),
            errors.code(reason)
        ),
        1,
    )
}

/// One line per entry, tab-separated, for people and for `grep`/`cut` alike.
fn list(what: ListWhat, all: bool, args: &ServeArgs) -> ExitCode {
    init_logging(args.log_level.as_deref(), "warn");
    let service = match start(args, &process_env, None) {
        Ok(s) => s,
        Err((message, code)) => return fail(&message, code),
    };
    let catalog = service.catalog();
    let kind = |a: crate::engine::Annotations| match (a.read_only, a.destructive) {
        (true, _) => "read",
        (false, true) => "write, destructive",
        (false, false) => "write",
    };
    let lines: Vec<String> = match what {
        ListWhat::Tools => {
            let listed: Vec<Listing> = match all {
                false => service.listed(),
                true => service
                    .listed()
                    .into_iter()
                    .filter(|l| matches!(l, Listing::Meta(_)))
                    .chain(catalog.tools().iter().map(Listing::Tool))
                    .collect(),
            };
            listed
                .into_iter()
                .map(|entry| match entry {
                    Listing::Meta(m) => {
                        format!(
                            "{}\tmeta\t{}\t{}",
                            m.name(),
                            kind(m.annotations()),
                            m.title()
                        )
                    }
                    Listing::Tool(t) => {
                        let via = t.via.map_or(String::new(), |v| format!("\tthrough {v}"));
                        format!(
                            "{}\t{}\t{}\t{}{via}",
                            t.name,
                            t.toolset,
                            kind(t.annotations),
                            t.title
                        )
                    }
                })
                .collect()
        }
        ListWhat::Resources => catalog
            .resources()
            .iter()
            .filter(|r| r.offered())
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
    let service = match start(args, &process_env, None) {
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
        Err(CallError::Failed(error)) => failed(&service, &error, true),
        Err(CallError::Read { error, .. }) => failed(&service, &error, false),
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
