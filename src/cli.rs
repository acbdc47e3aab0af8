//! The command line: what each subcommand takes, and the function that runs each.
//!
//! `forgelens` alone (or `serve`) is the stdio server; `read` and `call` run one read or call
//! through the same service the server uses; `manifest-lint` checks the manifests; `catalog`
//! generates and checks tool catalogs from a swagger. Exit codes: 0 success, 1 findings (or a
//! stale catalog, or a failed read/call), 2 usage, configuration or unreadable input.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};

use crate::config::{CatalogSource, Config, Flags};
use crate::forge::{self, ClientOptions};
use crate::manifest::{FileId, Source, Sources};
use crate::service::{CallError, Service, StartError};
use crate::{catalog, lint, mcp};

/// Serve a Forgejo or Gitea instance to AI agents over MCP.
#[derive(Debug, Parser)]
#[command(
    name = "forgelens",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio (the default).
    Serve(ServeArgs),
    /// Read one resource and print its content blocks.
    Read {
        /// A forgejo:// URI.
        uri: String,
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
    #[arg(long, value_name = "FILE", env = "FORGELENS_RESOURCES")]
    pub resources: Option<PathBuf>,
    /// Tool manifest to use instead of the built-in one.
    #[arg(long, value_name = "FILE", env = "FORGELENS_TOOLS")]
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
    /// Offer only read tools and send nothing but GET [env: FORGEJO_READ_ONLY, READ_ONLY].
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
    #[command(flatten)]
    pub manifests: ManifestArgs,
}

impl ServeArgs {
    fn flags(&self) -> Flags {
        Flags {
            url: self.url.clone(),
            token_file: self.token_file.clone(),
            read_only: self.read_only,
            toolsets: self.toolsets.clone(),
            disabled_tools: self.disabled_tools.clone(),
            timeout_secs: self.timeout,
            catalog: self.catalog.clone(),
            catalog_from_instance: self.catalog_from_instance,
            cache_dir: self.cache_dir.clone(),
        }
    }
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
    /// Output format: one line per finding, or a JSON array.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Runs the command line; the exit code says how it went.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        None => serve(&cli.serve),
        Some(Command::Serve(args)) => serve(&args),
        Some(Command::Read { uri, serve }) => read(&uri, &serve),
        Some(Command::Call { tool, args, serve }) => call(&tool, &args, &serve),
        Some(Command::ManifestLint(args)) => lint::run(&args),
        Some(Command::Catalog(command)) => {
            init_logging(None, "warn");
            catalog::command::run(&command)
        }
    }
}

fn init_logging(filter: Option<&str>, default: &str) {
    let filter = filter
        .map(str::to_owned)
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| default.to_owned());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Resolves the configuration and starts the service; on failure, the message and exit code.
fn start(args: &ServeArgs) -> Result<Service, (String, u8)> {
    let config = Config::resolve(&args.flags(), &|k| std::env::var(k).ok())
        .map_err(|e| (e.to_string(), 2))?;
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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime can be built")
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("forgelens: {message}");
    ExitCode::from(code)
}

fn serve(args: &ServeArgs) -> ExitCode {
    init_logging(args.log_level.as_deref(), "forgelens=info,rmcp=warn");
    let service = match start(args) {
        Ok(s) => Arc::new(s),
        Err((message, code)) => return fail(&message, code),
    };
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        resources = service.catalog().resources().len(),
        tools = service.catalog().tools().len(),
        "forgelens serving MCP on stdio"
    );
    match runtime().block_on(mcp::serve_stdio(service)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&format!("{e:#}"), 1),
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
        Ok(value) => print(&serde_json::to_string_pretty(&value).expect("a JSON value serializes")),
        Err(CallError::Failed(error)) => {
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
