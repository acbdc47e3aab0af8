//! Configuration: flags first, then environment variables (with the aliases other Forgejo and
//! Gitea servers use), then defaults. A malformed value is an error, never a silent default.
//!
//! [`Config`] is what every front end needs (the forge, the token, the tool filters);
//! [`HttpConfig`] is what only the Streamable HTTP server needs (where to listen, and its
//! safety limits).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use reqwest::Url;
use thiserror::Error;

use crate::forge::Token;
use crate::forge::allow::AllowList;
use crate::forge::budget::Rate;
use crate::forge::scope::Scopes;
use crate::manifest::{FileId, Source, Sources};
use crate::settings as S;

/// The instance used when none is configured.
pub const DEFAULT_URL: &str = S::URL.words();

/// Whole-request timeout towards the forge when none is configured, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = S::TIMEOUT.number();
/// Requests in flight to the forge at once when no cap is configured.
pub const DEFAULT_MAX_UPSTREAM_REQUESTS: u64 = S::MAX_UPSTREAM_REQUESTS.number();
/// Largest MCP request body accepted over HTTP when none is configured (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = S::MAX_BODY_BYTES.number() as usize;
/// MCP requests served at once over HTTP when no limit is configured.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = S::MAX_CONCURRENT_REQUESTS.number() as usize;
/// Seconds an HTTP connection gets to send a request's headers, from its opening or from its
/// previous answer: slow senders and idle keep-alive connections are closed after it.
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = S::HEADER_TIMEOUT.number();
/// Seconds an HTTP request gets to arrive whole, headers and body, counted like the header
/// timeout: a slow body cannot hold its connection longer.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = S::REQUEST_TIMEOUT.number();
/// Seconds an HTTP answer waits for the client to read more of it before the connection is
/// closed: a client that never reads cannot hold its connection either.
pub const DEFAULT_WRITE_TIMEOUT_SECS: u64 = S::WRITE_TIMEOUT.number();
/// HTTP connections open at once when no cap is configured; well below the usual descriptor
/// limit of 1024, so that upstream connections and files still get descriptors.
pub const DEFAULT_MAX_CONNECTIONS: usize = S::MAX_CONNECTIONS.number() as usize;
/// The fewest HTTP connections worth serving: the descriptor limit must leave room for this
/// many, or the server does not start (a handful of idle sockets would shut everyone out).
pub const MIN_CONNECTIONS: usize = 16;
/// The fewest descriptors kept for everything but the HTTP connections: the dozen the process
/// holds whatever the load (stdio, the runtime's poller and waker, the signal pipe, the
/// listener) and a score of connections to the forge.
pub const MIN_SPARE_DESCRIPTORS: usize = 32;
/// `Host` names always accepted: the loopback names, so a local client keeps working whatever
/// else is allowed. A page of another site cannot make a browser send them (DNS rebinding
/// changes the address a name resolves to, not the name in `Host`).
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];
/// Browser origins always accepted: pages served from this machine, on any port (the MCP
/// Inspector, for one, runs on localhost).
pub const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The largest answer (the text an agent reads) when no budget is configured: 48 KiB.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = S::MAX_ANSWER_BYTES.number() as usize;
/// The smallest budget accepted: below it, a page envelope and its continuation hardly fit.
pub const MIN_MAX_ANSWER_BYTES: usize = 4 * 1024;

/// Which tools `tools/list` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Surface {
    /// The core tools the manifest names, and the meta-tools that find and run the rest.
    #[default]
    Core,
    /// Every tool the filters leave.
    Full,
}

impl Surface {
    pub const NAMES: [&str; 2] = ["core", "full"];

    pub fn parse(text: &str) -> Option<Surface> {
        match text.trim().to_ascii_lowercase().as_str() {
            "core" => Some(Surface::Core),
            "full" => Some(Surface::Full),
            _ => None,
        }
    }
}

/// Where the manifests come from.
#[derive(Debug, Clone, Default, Args)]
pub struct ManifestArgs {
    #[arg(long = S::RESOURCES.flag, value_name = S::RESOURCES.value, env = S::RESOURCES.env[0],
        hide_env_values = true, help = S::RESOURCES.help)]
    pub resources: Option<PathBuf>,
    #[arg(long = S::TOOLS.flag, value_name = S::TOOLS.value, env = S::TOOLS.env[0],
        hide_env_values = true, help = S::TOOLS.help)]
    pub tools: Option<PathBuf>,
    #[arg(long = S::SEARCH.flag, value_name = S::SEARCH.value, env = S::SEARCH.env[0],
        hide_env_values = true, help = S::SEARCH.help)]
    pub search: Option<PathBuf>,
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
            search: read(self.search.as_ref(), FileId::Search)?,
            catalog: None,
        })
    }
}

impl ManifestArgs {
    /// These, with `outer` (given before the subcommand) filling what these leave out.
    pub(crate) fn or(self, outer: &ManifestArgs) -> ManifestArgs {
        ManifestArgs {
            resources: self.resources.or_else(|| outer.resources.clone()),
            tools: self.tools.or_else(|| outer.tools.clone()),
            search: self.search.or_else(|| outer.search.clone()),
        }
    }
}

/// What the command line says; `None` means "not given" (the environment may still say). Each
/// field's flag, help, variables and default are its entry in [`settings`](crate::settings).
#[derive(Debug, Clone, Default, Args)]
pub struct Flags {
    #[arg(long = S::URL.flag, value_name = S::URL.value, help = S::URL.help_text())]
    pub url: Option<String>,
    #[arg(long = S::TOKEN_FILE.flag, value_name = S::TOKEN_FILE.value, help = S::TOKEN_FILE.help_text())]
    pub token_file: Option<PathBuf>,
    #[arg(long = S::READ_ONLY.flag, help = S::READ_ONLY.help_text())]
    pub read_only: bool,
    #[arg(long = S::TOOLSETS.flag, value_name = S::TOOLSETS.value, value_delimiter = ',',
        help = S::TOOLSETS.help_text())]
    pub toolsets: Option<Vec<String>>,
    #[arg(long = S::DISABLED_TOOLS.flag, value_name = S::DISABLED_TOOLS.value,
        value_delimiter = ',', help = S::DISABLED_TOOLS.help_text())]
    pub disabled_tools: Option<Vec<String>>,
    #[arg(long = S::TIMEOUT.flag, value_name = S::TIMEOUT.value, help = S::TIMEOUT.help_text())]
    pub timeout: Option<u64>,
    #[arg(long = S::MAX_UPSTREAM_REQUESTS.flag, value_name = S::MAX_UPSTREAM_REQUESTS.value,
        help = S::MAX_UPSTREAM_REQUESTS.help_text())]
    pub max_upstream_requests: Option<u64>,
    #[arg(long = S::FORGE_RATE.flag, value_name = S::FORGE_RATE.value, help = S::FORGE_RATE.help_text())]
    pub forge_rate: Option<String>,
    #[arg(long = S::CATALOG.flag, value_name = S::CATALOG.value, help = S::CATALOG.help_text())]
    pub catalog: Option<PathBuf>,
    #[arg(long = S::CATALOG_FROM_INSTANCE.flag, help = S::CATALOG_FROM_INSTANCE.help_text())]
    pub catalog_from_instance: bool,
    #[arg(long = S::CACHE_DIR.flag, value_name = S::CACHE_DIR.value, help = S::CACHE_DIR.help_text())]
    pub cache_dir: Option<PathBuf>,
    /// How long mutable answers are reused, in milliseconds (0: not at all).
    #[arg(long = S::CACHE_TTL_MS.flag, value_name = S::CACHE_TTL_MS.value,
        help = S::CACHE_TTL_MS.help_text())]
    pub cache_ttl_ms: Option<u64>,
    #[arg(long = S::TOOL_SURFACE.flag, value_name = S::TOOL_SURFACE.value,
        help = S::TOOL_SURFACE.help_text())]
    pub tool_surface: Option<String>,
    #[arg(long = S::SUDO.flag, help = S::SUDO.help_text())]
    pub sudo: bool,
    #[arg(long = S::MAX_ANSWER_BYTES.flag, value_name = S::MAX_ANSWER_BYTES.value,
        help = S::MAX_ANSWER_BYTES.help_text())]
    pub max_answer_bytes: Option<usize>,
    #[arg(long = S::ALLOW_REPOS.flag, value_name = S::ALLOW_REPOS.value, value_delimiter = ',',
        help = S::ALLOW_REPOS.help_text())]
    pub allow_repos: Option<Vec<String>>,
    #[arg(long = S::LOCKDOWN.flag, help = S::LOCKDOWN.help_text())]
    pub lockdown: bool,
}

impl Flags {
    /// These, with `outer` (given before the subcommand) filling what these leave out, so that
    /// a flag works on either side of `read`, `call` or `serve`.
    pub(crate) fn or(self, outer: &Flags) -> Flags {
        Flags {
            url: self.url.or_else(|| outer.url.clone()),
            token_file: self.token_file.or_else(|| outer.token_file.clone()),
            read_only: self.read_only || outer.read_only,
            toolsets: self.toolsets.or_else(|| outer.toolsets.clone()),
            disabled_tools: self.disabled_tools.or_else(|| outer.disabled_tools.clone()),
            timeout: self.timeout.or(outer.timeout),
            max_upstream_requests: self.max_upstream_requests.or(outer.max_upstream_requests),
            forge_rate: self.forge_rate.or_else(|| outer.forge_rate.clone()),
            catalog: self.catalog.or_else(|| outer.catalog.clone()),
            catalog_from_instance: self.catalog_from_instance || outer.catalog_from_instance,
            cache_dir: self.cache_dir.or_else(|| outer.cache_dir.clone()),
            cache_ttl_ms: self.cache_ttl_ms.or(outer.cache_ttl_ms),
            tool_surface: self.tool_surface.or_else(|| outer.tool_surface.clone()),
            sudo: self.sudo || outer.sudo,
            max_answer_bytes: self.max_answer_bytes.or(outer.max_answer_bytes),
            allow_repos: self.allow_repos.or_else(|| outer.allow_repos.clone()),
            lockdown: self.lockdown || outer.lockdown,
        }
    }
}

/// The resolved configuration of a server, `read` or `call`.
#[derive(Debug, Clone)]
pub struct Config {
    pub url: Url,
    pub token: Option<Token>,
    pub read_only: bool,
    /// `None`: every toolset.
    pub toolsets: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
    pub timeout: Duration,
    /// Most requests in flight to the forge at once.
    pub max_upstream: usize,
    /// Most requests per token and period (`--forge-rate`); `None`: as many as come.
    pub forge_rate: Option<Rate>,
    /// Where generated tools come from, when they are wanted.
    pub catalog: Option<CatalogSource>,
    /// How long an answer of a mutable resource is reused; `None`: never (the default).
    pub mutable_ttl: Option<Duration>,
    pub surface: Surface,
    /// Announce the `sudo` argument (it is accepted either way; only an admin token can use it).
    pub sudo: bool,
    /// The most bytes one answer may hold.
    pub max_answer_bytes: usize,
    /// The only repositories requests may be about; `None`: any.
    pub allow: Option<AllowList>,
    /// Withhold text by accounts without write access on public repositories.
    pub lockdown: bool,
    /// What the operator should hear at start-up about how the settings were read.
    pub notes: Vec<String>,
}

/// The source of the generated tools served beside the curated ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogSource {
    /// A catalog file written by `forgelens catalog generate`.
    File(PathBuf),
    /// The instance's own `/swagger.v1.json`, cached in this directory.
    Instance { cache_dir: PathBuf },
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{name}: `{value}` is not an http(s) URL")]
    Url { name: String, value: String },
    #[error("{name}: `{value}` is not a boolean (use true/false, 1/0, yes/no)")]
    Bool { name: String, value: String },
    #[error("cannot read the token file {path}: {detail}")]
    TokenFile { path: String, detail: String },
    #[error("the token file {0} is empty")]
    EmptyTokenFile(String),
    #[error("the token file {path} holds {lines} lines; it must hold the token alone, on one line")]
    TokenFileLines { path: String, lines: usize },
    #[error("{name}: `{value}` is not an IP address and port (for example 127.0.0.1:8080)")]
    Addr { name: String, value: String },
    #[error(
        "{addr} is not a loopback address: serving beyond this machine needs --allow-remote \
         (or FORGELENS_ALLOW_REMOTE=true); read the security notes in docs/http-transport.md first"
    )]
    Remote { addr: SocketAddr },
    #[error("{name}: `{value}` is not a whole number above 0")]
    Count { name: String, value: String },
    #[error(
        "the descriptor limit (ulimit -n) is {limit}: once {spare} are kept for the forge and \
         the server itself, it leaves room for {room} HTTP connections, and at least \
         {MIN_CONNECTIONS} are needed; raise it to {needed} or more (ulimit -n, or \
         LimitNOFILE= in a systemd unit)"
    )]
    Descriptors {
        limit: usize,
        spare: usize,
        room: usize,
        needed: usize,
    },
    #[error("{name}: {why}")]
    Rate { name: String, why: String },
    #[error("{name}: {why}")]
    AllowRepos {
        name: String,
        why: crate::forge::allow::BadAllowList,
    },
    #[error("{name}: `{value}` is not a tool surface; use core or full")]
    Surface { name: String, value: String },
    #[error("{name}: `{value}` is not a number of bytes of at least {MIN_MAX_ANSWER_BYTES}")]
    AnswerBytes { name: String, value: String },
    #[error("{name}: `{value}` is not a number of milliseconds (0 turns it off)")]
    Millis { name: String, value: String },
    #[error("{name}: `{value}` is not a host name or host:port (or `*` alone, for any host)")]
    Host { name: String, value: String },
    #[error(
        "{name}: `{value}` is not an origin; write scheme://host, scheme://host:port or scheme://host:*"
    )]
    Origin { name: String, value: String },
    #[error("{0}")]
    OAuth(String),
    #[error("--catalog and --catalog-from-instance both name the generated tools; keep one")]
    CatalogConflict,
    #[error(
        "--catalog-from-instance needs a cache directory: set --cache-dir, FORGELENS_CACHE_DIR, XDG_CACHE_HOME or HOME"
    )]
    NoCacheDir,
}

/// Flag first, then the first environment variable set (and not blank), then the default; a
/// malformed value is an error naming where it came from.
struct Lookup<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl Lookup<'_> {
    /// The first of `names` that is set and not blank, with its name.
    fn first(&self, names: &[&str]) -> Option<(String, String)> {
        names.iter().find_map(|n| {
            (self.env)(n)
                .filter(|v| !v.trim().is_empty())
                .map(|v| ((*n).to_owned(), v))
        })
    }

    /// The first of `names` that is set, even to nothing: for a setting where "set but empty"
    /// is a mistake to report rather than "not given".
    fn first_set(&self, names: &[&str]) -> Option<(String, String)> {
        names
            .iter()
            .find_map(|n| (self.env)(n).map(|v| ((*n).to_owned(), v)))
    }

    /// A setting that only narrows what the server may do: it is on when the flag or any of
    /// its variables says so, whichever order they come in, so a stale `false` in one alias
    /// cannot undo a `true` in another (fail closed). A malformed value is still an error.
    fn restriction(&self, flag: bool, vars: &[&str]) -> Result<bool, ConfigError> {
        let mut on = flag;
        for name in vars {
            let Some(value) = (self.env)(name).filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            on |= parse_bool(&value).ok_or_else(|| ConfigError::Bool {
                name: (*name).to_owned(),
                value,
            })?;
        }
        Ok(on)
    }

    fn flag(&self, flag: bool, vars: &[&str]) -> Result<bool, ConfigError> {
        if flag {
            return Ok(true);
        }
        match self.first(vars) {
            Some((name, value)) => parse_bool(&value).ok_or(ConfigError::Bool { name, value }),
            None => Ok(false),
        }
    }

    /// A comma-separated list and where it came from; `None` when neither flag nor variable says.
    fn list(
        &self,
        flag: &Option<Vec<String>>,
        flag_name: &str,
        vars: &[&str],
    ) -> Option<(String, Vec<String>)> {
        let (name, items) = match (flag, self.first(vars)) {
            (Some(items), _) => (flag_name.to_owned(), items.clone()),
            (None, Some((name, value))) => (name, value.split(',').map(str::to_owned).collect()),
            (None, None) => return None,
        };
        let items = items
            .iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        Some((name, items))
    }

    /// A whole number above 0.
    fn count(
        &self,
        flag: Option<u64>,
        flag_name: &str,
        vars: &[&str],
        default: u64,
    ) -> Result<u64, ConfigError> {
        match (flag, self.first(vars)) {
            (Some(0), _) => Err(ConfigError::Count {
                name: flag_name.to_owned(),
                value: "0".into(),
            }),
            (Some(n), _) => Ok(n),
            (None, Some((name, value))) => match value.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(ConfigError::Count { name, value }),
            },
            (None, None) => Ok(default),
        }
    }
}

impl Config {
    /// Resolves `flags` against the environment `env` (a function, so tests need no globals).
    pub fn resolve(
        flags: &Flags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let look = Lookup { env };
        let (url_name, url_text) = match &flags.url {
            Some(u) => ("--url".to_owned(), u.clone()),
            None => look
                .first(S::URL.env)
                .unwrap_or_else(|| ("default".into(), DEFAULT_URL.into())),
        };
        let (url, url_notes) = parse_url(&url_text).ok_or(ConfigError::Url {
            name: url_name.clone(),
            value: url_text.clone(),
        })?;
        let notes = url_notes
            .into_iter()
            .map(|note| format!("{url_name} `{}`: {note}", url_text.trim()))
            .collect();
        let token = match &flags.token_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| ConfigError::TokenFile {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                })?;
                Some(token_from_file(path, &text)?)
            }
            None => look
                .first(S::TOKEN_FILE.env)
                .and_then(|(_, v)| Token::new(&v)),
        };
        let timeout = look.count(
            flags.timeout,
            "--timeout",
            S::TIMEOUT.env,
            DEFAULT_TIMEOUT_SECS,
        )?;
        let max_upstream = look.count(
            flags.max_upstream_requests,
            "--max-upstream-requests",
            S::MAX_UPSTREAM_REQUESTS.env,
            DEFAULT_MAX_UPSTREAM_REQUESTS,
        )?;
        let forge_rate = match &flags.forge_rate {
            Some(text) => Some(("--forge-rate".to_owned(), text.clone())),
            None => look.first(S::FORGE_RATE.env),
        }
        .map(|(name, text)| Rate::parse(&text).map_err(|why| ConfigError::Rate { name, why }))
        .transpose()?;
        let cache_ttl_ms = match (flags.cache_ttl_ms, look.first(S::CACHE_TTL_MS.env)) {
            (Some(ms), _) => ms,
            (None, Some((name, value))) => value
                .trim()
                .parse::<u64>()
                .map_err(|_| ConfigError::Millis { name, value })?,
            (None, None) => 0,
        };
        let from_instance = look.flag(flags.catalog_from_instance, S::CATALOG_FROM_INSTANCE.env)?;
        let file = flags
            .catalog
            .clone()
            .or_else(|| look.first(S::CATALOG.env).map(|(_, v)| PathBuf::from(v)));
        let catalog = match (file, from_instance) {
            (Some(_), true) => return Err(ConfigError::CatalogConflict),
            (Some(path), false) => Some(CatalogSource::File(path)),
            (None, true) => {
                let cache_dir = flags
                    .cache_dir
                    .clone()
                    .or_else(|| look.first(S::CACHE_DIR.env).map(|(_, v)| PathBuf::from(v)))
                    .or_else(|| {
                        look.first(&["XDG_CACHE_HOME"])
                            .map(|(_, v)| PathBuf::from(v).join("forgelens"))
                    })
                    .or_else(|| {
                        look.first(&["HOME"])
                            .map(|(_, v)| PathBuf::from(v).join(".cache/forgelens"))
                    })
                    .ok_or(ConfigError::NoCacheDir)?;
                Some(CatalogSource::Instance { cache_dir })
            }
            (None, false) => None,
        };
        let surface = match (&flags.tool_surface, look.first(S::TOOL_SURFACE.env)) {
            (Some(text), _) => Surface::parse(text).ok_or_else(|| ConfigError::Surface {
                name: "--tool-surface".into(),
                value: text.clone(),
            })?,
            (None, Some((name, value))) => {
                Surface::parse(&value).ok_or(ConfigError::Surface { name, value })?
            }
            (None, None) => Surface::default(),
        };
        let max_answer_bytes =
            match (flags.max_answer_bytes, look.first(S::MAX_ANSWER_BYTES.env)) {
                (Some(n), _) => Some(("--max-answer-bytes".to_owned(), n.to_string())),
                (None, found) => found,
            }
            .map_or(Ok(DEFAULT_MAX_ANSWER_BYTES), |(name, value)| {
                value
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n >= MIN_MAX_ANSWER_BYTES)
                    .ok_or(ConfigError::AnswerBytes { name, value })
            })?;
        // Given but empty is a mistake, not "every repository": an allow-list fails closed.
        let allow = match (&flags.allow_repos, look.first_set(S::ALLOW_REPOS.env)) {
            (Some(items), _) => Some(("--allow-repos".to_owned(), items.join(","))),
            (None, found) => found,
        }
        .map(|(name, value)| {
            value
                .parse::<AllowList>()
                .map_err(|why| ConfigError::AllowRepos { name, why })
        })
        .transpose()?;
        Ok(Config {
            url,
            token,
            read_only: look.restriction(flags.read_only, S::READ_ONLY.env)?,
            toolsets: look
                .list(&flags.toolsets, "--toolsets", S::TOOLSETS.env)
                .map(|(_, l)| l),
            disabled_tools: look
                .list(
                    &flags.disabled_tools,
                    "--disabled-tools",
                    S::DISABLED_TOOLS.env,
                )
                .map(|(_, l)| l)
                .unwrap_or_default(),
            timeout: Duration::from_secs(timeout),
            // A semaphore counts in u32; a larger cap is no cap anyway.
            max_upstream: max_upstream.min(u64::from(u32::MAX)) as usize,
            forge_rate,
            catalog,
            mutable_ttl: (cache_ttl_ms > 0).then(|| Duration::from_millis(cache_ttl_ms)),
            surface,
            sudo: look.flag(flags.sudo, S::SUDO.env)?,
            max_answer_bytes,
            allow,
            lockdown: look.restriction(flags.lockdown, S::LOCKDOWN.env)?,
            notes,
        })
    }
}

/// What the command line says about the HTTP server; `None` / `false` means "not given". Each
/// needs `--http` (or its variable).
#[derive(Debug, Clone, Default, Args)]
pub struct HttpFlags {
    #[arg(long = S::HTTP.flag, value_name = S::HTTP.value, help = S::HTTP.help_text())]
    pub http: Option<String>,
    #[arg(long = S::ALLOW_REMOTE.flag, help = S::ALLOW_REMOTE.help_text())]
    pub allow_remote: bool,
    #[arg(long = S::REQUIRE_CLIENT_TOKEN.flag, help = S::REQUIRE_CLIENT_TOKEN.help_text())]
    pub require_client_token: bool,
    #[arg(long = S::ALLOWED_HOSTS.flag, value_name = S::ALLOWED_HOSTS.value,
        value_delimiter = ',', help = S::ALLOWED_HOSTS.help_text())]
    pub allowed_hosts: Option<Vec<String>>,
    #[arg(long = S::ALLOWED_ORIGINS.flag, value_name = S::ALLOWED_ORIGINS.value,
        value_delimiter = ',', help = S::ALLOWED_ORIGINS.help_text())]
    pub allowed_origins: Option<Vec<String>>,
    #[arg(long = S::MAX_BODY_BYTES.flag, value_name = S::MAX_BODY_BYTES.value,
        help = S::MAX_BODY_BYTES.help_text())]
    pub max_body_bytes: Option<usize>,
    #[arg(long = S::MAX_CONCURRENT_REQUESTS.flag, value_name = S::MAX_CONCURRENT_REQUESTS.value,
        help = S::MAX_CONCURRENT_REQUESTS.help_text())]
    pub max_concurrent_requests: Option<usize>,
    #[arg(long = S::HEADER_TIMEOUT.flag, value_name = S::HEADER_TIMEOUT.value,
        help = S::HEADER_TIMEOUT.help_text())]
    pub header_timeout: Option<u64>,
    #[arg(long = S::MAX_CONNECTIONS.flag, value_name = S::MAX_CONNECTIONS.value,
        help = S::MAX_CONNECTIONS.help_text())]
    pub max_connections: Option<usize>,
    #[arg(long = S::REQUEST_TIMEOUT.flag, value_name = S::REQUEST_TIMEOUT.value,
        help = S::REQUEST_TIMEOUT.help_text())]
    pub request_timeout: Option<u64>,
    #[arg(long = S::WRITE_TIMEOUT.flag, value_name = S::WRITE_TIMEOUT.value,
        help = S::WRITE_TIMEOUT.help_text())]
    pub write_timeout: Option<u64>,
    #[arg(long = S::SESSIONS.flag, help = S::SESSIONS.help_text())]
    pub sessions: bool,
    #[command(flatten)]
    pub oauth: OAuthFlags,
}

/// What the command line says about the OAuth sign-in; each needs `--http`, and all but
/// `--oauth` need `--oauth` too.
#[derive(Debug, Clone, Default, Args)]
pub struct OAuthFlags {
    #[arg(long = S::OAUTH.flag, help = S::OAUTH.help_text())]
    pub oauth: bool,
    #[arg(long = S::PUBLIC_URL.flag, value_name = S::PUBLIC_URL.value, help = S::PUBLIC_URL.help_text())]
    pub public_url: Option<String>,
    #[arg(long = S::FORGE_CLIENT_ID.flag, value_name = S::FORGE_CLIENT_ID.value,
        help = S::FORGE_CLIENT_ID.help_text())]
    pub forge_client_id: Option<String>,
    #[arg(long = S::FORGE_CLIENT_SECRET_FILE.flag, value_name = S::FORGE_CLIENT_SECRET_FILE.value,
        help = S::FORGE_CLIENT_SECRET_FILE.help_text())]
    pub forge_client_secret_file: Option<PathBuf>,
    #[arg(long = S::OAUTH_KEY_FILE.flag, value_name = S::OAUTH_KEY_FILE.value,
        help = S::OAUTH_KEY_FILE.help_text())]
    pub oauth_key_file: Option<PathBuf>,
    #[arg(long = S::STORE.flag, value_name = S::STORE.value, help = S::STORE.help_text())]
    pub store: Option<String>,
    #[arg(long = S::STORE_PASSWORD_FILE.flag, value_name = S::STORE_PASSWORD_FILE.value,
        help = S::STORE_PASSWORD_FILE.help_text())]
    pub store_password_file: Option<PathBuf>,
    #[arg(long = S::STORE_CA_FILE.flag, value_name = S::STORE_CA_FILE.value,
        help = S::STORE_CA_FILE.help_text())]
    pub store_ca_file: Option<PathBuf>,
    #[arg(long = S::STORE_TIMEOUT_MS.flag, value_name = S::STORE_TIMEOUT_MS.value,
        help = S::STORE_TIMEOUT_MS.help_text())]
    pub store_timeout_ms: Option<u64>,
    #[arg(long = S::OAUTH_SCOPES.flag, value_name = S::OAUTH_SCOPES.value,
        help = S::OAUTH_SCOPES.help_text())]
    pub oauth_scopes: Option<String>,
    #[arg(long = S::OAUTH_LOOPBACK_CLIENTS.flag, help = S::OAUTH_LOOPBACK_CLIENTS.help_text())]
    pub oauth_loopback_clients: bool,
}

impl OAuthFlags {
    fn or(self, outer: &OAuthFlags) -> OAuthFlags {
        OAuthFlags {
            oauth: self.oauth || outer.oauth,
            public_url: self.public_url.or_else(|| outer.public_url.clone()),
            forge_client_id: self
                .forge_client_id
                .or_else(|| outer.forge_client_id.clone()),
            forge_client_secret_file: self
                .forge_client_secret_file
                .or_else(|| outer.forge_client_secret_file.clone()),
            oauth_key_file: self.oauth_key_file.or_else(|| outer.oauth_key_file.clone()),
            store: self.store.or_else(|| outer.store.clone()),
            store_password_file: self
                .store_password_file
                .or_else(|| outer.store_password_file.clone()),
            store_ca_file: self.store_ca_file.or_else(|| outer.store_ca_file.clone()),
            store_timeout_ms: self.store_timeout_ms.or(outer.store_timeout_ms),
            oauth_scopes: self.oauth_scopes.or_else(|| outer.oauth_scopes.clone()),
            oauth_loopback_clients: self.oauth_loopback_clients || outer.oauth_loopback_clients,
        }
    }

    /// The first sign-in flag given besides `--oauth`.
    fn first_given(&self) -> Option<String> {
        [
            (self.public_url.is_some(), &S::PUBLIC_URL),
            (self.forge_client_id.is_some(), &S::FORGE_CLIENT_ID),
            (
                self.forge_client_secret_file.is_some(),
                &S::FORGE_CLIENT_SECRET_FILE,
            ),
            (self.oauth_key_file.is_some(), &S::OAUTH_KEY_FILE),
            (self.oauth_scopes.is_some(), &S::OAUTH_SCOPES),
            (self.oauth_loopback_clients, &S::OAUTH_LOOPBACK_CLIENTS),
        ]
        .into_iter()
        .find_map(|(given, setting)| given.then(|| setting.name()))
    }
}

/// The resolved OAuth sign-in.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// The server's public origin (`https://mcp.example.com`), without a trailing slash.
    pub public_url: String,
    pub forge_client_id: String,
    pub forge_client_secret: String,
    pub offered: Scopes,
    pub key_file: PathBuf,
    pub store: StoreConfig,
    pub loopback_clients: bool,
}

/// Where the authorization server keeps its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// The embedded store: one file, for one process.
    File(PathBuf),
    /// The store replicas share ([`HttpConfig::store`]).
    Shared,
}

/// A Redis or Valkey server that every replica shares (`--store redis://…`).
#[derive(Clone, PartialEq, Eq)]
pub struct SharedStore {
    /// `redis://host:port/db` or `rediss://…`, without credentials.
    pub url: String,
    pub password: Option<String>,
    /// PEM certificates to trust for `rediss://` instead of the public roots.
    pub ca: Option<Vec<u8>>,
    /// How long one call may take before the request that needed it goes on without it (or
    /// is refused, for a sign-in).
    pub timeout: Duration,
}

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStore")
            .field("url", &self.url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl SharedStore {
    /// The shared store `--store` names: `Some` for a `redis://` or `rediss://` URL, `None`
    /// for a file (the embedded store of `--oauth`) or nothing.
    fn resolve(flags: &OAuthFlags, look: &Lookup<'_>) -> Result<Option<SharedStore>, ConfigError> {
        let given = match &flags.store {
            Some(text) => Some(("--store".to_owned(), text.clone())),
            None => look.first(S::STORE.env),
        };
        let ca_file = flags.store_ca_file.clone().or_else(|| {
            look.first(S::STORE_CA_FILE.env)
                .map(|(_, v)| PathBuf::from(v))
        });
        let Some((name, text)) = given.filter(|(_, t)| is_store_url(t)) else {
            let password_given = flags.store_password_file.is_some()
                || look.first(S::STORE_PASSWORD_FILE.env).is_some();
            if password_given || ca_file.is_some() || flags.store_timeout_ms.is_some() {
                return Err(ConfigError::OAuth(
                    "--store-password-file, --store-ca-file and --store-timeout-ms are settings \
                     of a shared store: give --store redis://HOST:PORT/DB"
                        .into(),
                ));
            }
            return Ok(None);
        };
        let ca = match ca_file {
            None => None,
            Some(_) if !text.trim().starts_with("rediss://") => {
                return Err(ConfigError::OAuth(format!(
                    "{name}: --store-ca-file is for a store reached over TLS: write rediss://…"
                )));
            }
            Some(path) => Some(std::fs::read(&path).map_err(|e| {
                ConfigError::OAuth(format!(
                    "cannot read the store's certificate file {}: {e}",
                    path.display()
                ))
            })?),
        };
        let url = Url::parse(text.trim())
            .map_err(|e| ConfigError::OAuth(format!("{name}: `{text}` is not a URL ({e})")))?;
        if url.password().is_some() || !url.username().is_empty() {
            return Err(ConfigError::OAuth(format!(
                "{name}: put the store's password in --store-password-file or \
                 {}, not in the URL, where it would show in process listings and logs",
                S::STORE_PASSWORD_FILE.env.join(" / ")
            )));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(ConfigError::OAuth(format!(
                "{name}: `{text}` names no host: write redis://HOST:PORT/DB"
            )));
        }
        let password = match &flags.store_password_file {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .map_err(|e| {
                        ConfigError::OAuth(format!(
                            "cannot read the store password file {}: {e}",
                            path.display()
                        ))
                    })?
                    .trim()
                    .to_owned(),
            ),
            None => look
                .first(S::STORE_PASSWORD_FILE.env)
                .map(|(_, v)| v.trim().to_owned()),
        };
        let timeout_ms = look.count(
            flags.store_timeout_ms,
            "--store-timeout-ms",
            S::STORE_TIMEOUT_MS.env,
            S::STORE_TIMEOUT_MS.number(),
        )?;
        Ok(Some(SharedStore {
            url: url.to_string(),
            password: password.filter(|p| !p.is_empty()),
            ca,
            timeout: Duration::from_millis(timeout_ms),
        }))
    }
}

impl StoreConfig {
    /// Where sign-ins are kept: the shared store when there is one, else the file `--store`
    /// names (by default beside the key file).
    fn resolve(
        flags: &OAuthFlags,
        look: &Lookup<'_>,
        key_file: &Path,
        shared: bool,
    ) -> StoreConfig {
        if shared {
            return StoreConfig::Shared;
        }
        let path = match &flags.store {
            Some(text) => PathBuf::from(text),
            None => look.first(S::STORE.env).map_or_else(
                || key_file.with_file_name("forgelens-store.json"),
                |(_, v)| PathBuf::from(v),
            ),
        };
        StoreConfig::File(path)
    }
}

fn is_store_url(text: &str) -> bool {
    let text = text.trim();
    text.starts_with("redis://") || text.starts_with("rediss://")
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("public_url", &self.public_url)
            .field("forge_client_id", &self.forge_client_id)
            .field("offered", &self.offered)
            .field("key_file", &self.key_file)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// The issuer: the public origin.
    pub fn issuer(&self) -> String {
        self.public_url.clone()
    }

    /// The protected resource, the audience of every token: the public `/mcp`.
    pub fn resource(&self) -> String {
        self.endpoint(crate::mcp::http::MCP_PATH)
    }

    /// The public address of `path`.
    pub fn endpoint(&self, path: &str) -> String {
        format!("{}{path}", self.public_url)
    }

    /// Where the resource's metadata is (RFC 9728, the resource's path appended).
    pub fn resource_metadata_url(&self) -> String {
        self.endpoint("/.well-known/oauth-protected-resource/mcp")
    }

    /// The public origin, as a browser writes it in `Origin`.
    pub fn origin(&self) -> String {
        self.public_url.clone()
    }

    pub fn is_https(&self) -> bool {
        self.public_url.starts_with("https://")
    }

    /// The consent page's cookie: `__Host-` where the browser enforces it (HTTPS).
    pub fn cookie_name(&self) -> String {
        match self.is_https() {
            true => "__Host-forgelens-consent".to_owned(),
            false => "forgelens-consent".to_owned(),
        }
    }

    /// Resolves `flags` against `env`; `None` without `--oauth`.
    fn resolve(
        flags: &OAuthFlags,
        look: &Lookup<'_>,
        shared: bool,
    ) -> Result<Option<OAuthConfig>, ConfigError> {
        if !look.flag(flags.oauth, S::OAUTH.env)? {
            if !shared && (flags.store.is_some() || look.first(S::STORE.env).is_some()) {
                return Err(ConfigError::OAuth(
                    "--store FILE keeps sign-ins: add --oauth, or give --store redis://HOST:PORT/DB \
                     to share the read cache and the forge's rate budget between replicas"
                        .into(),
                ));
            }
            return match flags.first_given() {
                Some(flag) => Err(ConfigError::OAuth(format!(
                    "{flag} is a setting of the OAuth sign-in; add --oauth"
                ))),
                None => Ok(None),
            };
        }
        let needed = |setting: &crate::settings::Setting| {
            ConfigError::OAuth(format!(
                "--oauth needs {} (or {})",
                setting.usage(),
                setting.env.join(" / ")
            ))
        };
        let (url_name, url_text) = match &flags.public_url {
            Some(u) => ("--public-url".to_owned(), u.clone()),
            None => look
                .first(S::PUBLIC_URL.env)
                .ok_or_else(|| needed(&S::PUBLIC_URL))?,
        };
        let public_url = public_origin(&url_text).ok_or_else(|| {
            ConfigError::OAuth(format!(
                "{url_name}: `{url_text}` is not an origin: write https://host or https://host:port \
                 (no path; plain http only for a loopback host)"
            ))
        })?;
        let forge_client_id = match &flags.forge_client_id {
            Some(id) => id.trim().to_owned(),
            None => look
                .first(S::FORGE_CLIENT_ID.env)
                .map(|(_, v)| v.trim().to_owned())
                .ok_or_else(|| needed(&S::FORGE_CLIENT_ID))?,
        };
        let forge_client_secret = match &flags.forge_client_secret_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    ConfigError::OAuth(format!(
                        "cannot read the client secret file {}: {e}",
                        path.display()
                    ))
                })?;
                let secret = text.trim().to_owned();
                if secret.is_empty() {
                    return Err(ConfigError::OAuth(format!(
                        "the client secret file {} is empty",
                        path.display()
                    )));
                }
                secret
            }
            None => look
                .first(S::FORGE_CLIENT_SECRET_FILE.env)
                .map(|(_, v)| v.trim().to_owned())
                .ok_or_else(|| needed(&S::FORGE_CLIENT_SECRET_FILE))?,
        };
        let key_file = flags
            .oauth_key_file
            .clone()
            .or_else(|| {
                look.first(S::OAUTH_KEY_FILE.env)
                    .map(|(_, v)| PathBuf::from(v))
            })
            .ok_or_else(|| needed(&S::OAUTH_KEY_FILE))?;
        let store = StoreConfig::resolve(flags, look, &key_file, shared);
        let offered = match &flags.oauth_scopes {
            Some(text) => Some(("--oauth-scopes".to_owned(), text.clone())),
            None => look.first(S::OAUTH_SCOPES.env),
        };
        let offered = match offered {
            None => default_scopes(),
            Some((name, text)) => {
                let scopes =
                    Scopes::parse(&text).map_err(|e| ConfigError::OAuth(format!("{name}: {e}")))?;
                if scopes.is_empty() {
                    return Err(ConfigError::OAuth(format!("{name}: offers no scope")));
                }
                scopes
            }
        };
        Ok(Some(OAuthConfig {
            public_url,
            forge_client_id,
            forge_client_secret,
            offered,
            key_file,
            store,
            loopback_clients: look
                .flag(flags.oauth_loopback_clients, S::OAUTH_LOOPBACK_CLIENTS.env)?,
        }))
    }
}

/// What a sign-in may ask for by default: every scope but the instance's administration.
pub fn default_scopes() -> Scopes {
    Scopes::parse(
        "write:activitypub write:issue write:misc write:notification write:organization \
         write:package write:repository write:user",
    )
    .expect("the default scopes are the forge's")
}

/// `text` as a public origin without a trailing slash: https, or http on a loopback host; no
/// path, query, fragment or credentials.
fn public_origin(text: &str) -> Option<String> {
    let url = Url::parse(text.trim()).ok()?;
    let loopback = match url.host()? {
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
        url::Host::Domain(name) => name == "localhost",
    };
    let scheme_ok = url.scheme() == "https" || (url.scheme() == "http" && loopback);
    let bare = url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none();
    (scheme_ok && bare).then(|| url.origin().ascii_serialization())
}

impl HttpFlags {
    /// These, with `outer` (given before `serve`) filling what these leave out.
    pub(crate) fn or(self, outer: &HttpFlags) -> HttpFlags {
        HttpFlags {
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
            request_timeout: self.request_timeout.or(outer.request_timeout),
            write_timeout: self.write_timeout.or(outer.write_timeout),
            sessions: self.sessions || outer.sessions,
            oauth: self.oauth.or(&outer.oauth),
        }
    }

    /// The first HTTP flag given besides `--http` itself, to name in an error when there is no
    /// HTTP server to apply it to.
    pub(crate) fn first_given(&self) -> Option<String> {
        [
            (self.allow_remote, &S::ALLOW_REMOTE),
            (self.require_client_token, &S::REQUIRE_CLIENT_TOKEN),
            (self.allowed_hosts.is_some(), &S::ALLOWED_HOSTS),
            (self.allowed_origins.is_some(), &S::ALLOWED_ORIGINS),
            (self.max_body_bytes.is_some(), &S::MAX_BODY_BYTES),
            (
                self.max_concurrent_requests.is_some(),
                &S::MAX_CONCURRENT_REQUESTS,
            ),
            (self.header_timeout.is_some(), &S::HEADER_TIMEOUT),
            (self.max_connections.is_some(), &S::MAX_CONNECTIONS),
            (self.request_timeout.is_some(), &S::REQUEST_TIMEOUT),
            (self.write_timeout.is_some(), &S::WRITE_TIMEOUT),
            (self.sessions, &S::SESSIONS),
            (self.oauth.oauth, &S::OAUTH),
            (self.oauth.store.is_some(), &S::STORE),
            (
                self.oauth.store_password_file.is_some(),
                &S::STORE_PASSWORD_FILE,
            ),
            (self.oauth.store_timeout_ms.is_some(), &S::STORE_TIMEOUT_MS),
        ]
        .into_iter()
        .find_map(|(given, setting)| given.then(|| setting.name()))
        .or_else(|| self.oauth.first_given())
    }
}

/// The resolved configuration of the Streamable HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    pub addr: SocketAddr,
    /// Whether the address is outside the loopback range (only with `--allow-remote`).
    pub remote: bool,
    /// Refuse requests that carry no token of their own, instead of using the configured one.
    pub require_client_token: bool,
    /// Accepted `Host` values: the loopback names plus the configured ones; empty = any host.
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values (requests without `Origin` always pass): the loopback origins
    /// plus the configured ones, each with an explicit port or `:*`.
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: usize,
    pub max_concurrent_requests: usize,
    /// How long a connection may take to send a request's headers (and may sit idle).
    pub header_timeout: Duration,
    /// How long a request may take to arrive whole, from the connection's opening or its
    /// previous answer.
    pub request_timeout: Duration,
    /// How long an answer may wait for the client to read more of it.
    pub write_timeout: Duration,
    /// Connections open at once: `--max-connections`, or less when the descriptor limit
    /// leaves room for fewer. Past it, a new connection takes the place of an idle one, or
    /// waits in the listen queue.
    pub max_connections: usize,
    /// Set when the descriptor limit lowered `--max-connections`, for the start-up warning.
    pub lowered: Option<Lowered>,
    /// Give clients of the revisions before 2026-07-28 a session (`Mcp-Session-Id`), which
    /// then lives in this process only; without it every request stands alone.
    pub sessions: bool,
    /// The OAuth sign-in (`--oauth`); `None`: personal tokens, as without HTTP.
    pub oauth: Option<OAuthConfig>,
    /// The store replicas share (`--store redis://…`): sign-ins, the read cache's shared
    /// tier and the forge's rate budget.
    pub store: Option<SharedStore>,
}

impl HttpConfig {
    /// Resolves `flags` against the environment `env`; `None` when neither `--http` nor
    /// `FORGELENS_HTTP` asks for HTTP (the server then speaks stdio).
    pub fn resolve(
        flags: &HttpFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<HttpConfig>, ConfigError> {
        let look = Lookup { env };
        let (addr_name, addr_text) = match &flags.http {
            Some(a) => ("--http".to_owned(), a.clone()),
            None => match look.first(S::HTTP.env) {
                Some(found) => found,
                None => return Ok(None),
            },
        };
        let addr: SocketAddr = addr_text.trim().parse().map_err(|_| ConfigError::Addr {
            name: addr_name,
            value: addr_text.clone(),
        })?;
        let allow_remote = look.flag(flags.allow_remote, S::ALLOW_REMOTE.env)?;
        let remote = !addr.ip().is_loopback();
        if remote && !allow_remote {
            return Err(ConfigError::Remote { addr });
        }
        let require_client_token =
            look.flag(flags.require_client_token, S::REQUIRE_CLIENT_TOKEN.env)?;
        let sessions = look.flag(flags.sessions, S::SESSIONS.env)?;
        let list = |flag: &Option<Vec<String>>, flag_name: &str, vars: &[&str]| {
            look.list(flag, flag_name, vars)
                .unwrap_or_else(|| (flag_name.to_owned(), Vec::new()))
        };
        let (hosts_name, hosts) = list(
            &flags.allowed_hosts,
            "--allowed-hosts",
            S::ALLOWED_HOSTS.env,
        );
        let allowed_hosts = if hosts.iter().any(|h| h == "*") {
            if hosts.len() > 1 {
                return Err(ConfigError::Host {
                    name: hosts_name,
                    value: hosts.join(","),
                });
            }
            Vec::new()
        } else {
            let mut all: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
            for host in hosts {
                if !is_authority(&host) {
                    return Err(ConfigError::Host {
                        name: hosts_name,
                        value: host,
                    });
                }
                all.push(host);
            }
            all
        };
        let (origins_name, origins) = list(
            &flags.allowed_origins,
            "--allowed-origins",
            S::ALLOWED_ORIGINS.env,
        );
        let mut allowed_origins: Vec<String> =
            LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()).collect();
        for origin in origins {
            allowed_origins.push(
                normalize_origin(&origin).ok_or_else(|| ConfigError::Origin {
                    name: origins_name.clone(),
                    value: origin.clone(),
                })?,
            );
        }
        let count = |flag: Option<usize>, flag_name: &str, vars: &[&str], default: usize| {
            look.count(flag.map(|n| n as u64), flag_name, vars, default as u64)
                .map(|n| n as usize)
        };
        let max_body_bytes = count(
            flags.max_body_bytes,
            "--max-body-bytes",
            S::MAX_BODY_BYTES.env,
            DEFAULT_MAX_BODY_BYTES,
        )?;
        let max_concurrent_requests = count(
            flags.max_concurrent_requests,
            "--max-concurrent-requests",
            S::MAX_CONCURRENT_REQUESTS.env,
            DEFAULT_MAX_CONCURRENT_REQUESTS,
        )?;
        let header_timeout = look.count(
            flags.header_timeout,
            "--header-timeout",
            S::HEADER_TIMEOUT.env,
            DEFAULT_HEADER_TIMEOUT_SECS,
        )?;
        let request_timeout = look.count(
            flags.request_timeout,
            "--request-timeout",
            S::REQUEST_TIMEOUT.env,
            DEFAULT_REQUEST_TIMEOUT_SECS,
        )?;
        let write_timeout = look.count(
            flags.write_timeout,
            "--write-timeout",
            S::WRITE_TIMEOUT.env,
            DEFAULT_WRITE_TIMEOUT_SECS,
        )?;
        let max_connections = count(
            flags.max_connections,
            "--max-connections",
            S::MAX_CONNECTIONS.env,
            DEFAULT_MAX_CONNECTIONS,
        )?;
        // A semaphore counts in u32; more requests than that at once is not a limit anyway.
        let max_concurrent_requests = max_concurrent_requests.min(u32::MAX as usize);
        let max_connections = max_connections.min(u32::MAX as usize);
        let (max_connections, lowered) = connection_cap(max_connections, descriptor_limit())?;
        let store = SharedStore::resolve(&flags.oauth, &look)?;
        let oauth = OAuthConfig::resolve(&flags.oauth, &look, store.is_some())?;
        Ok(Some(HttpConfig {
            addr,
            remote,
            require_client_token,
            allowed_hosts,
            allowed_origins,
            max_body_bytes,
            max_concurrent_requests,
            header_timeout: Duration::from_secs(header_timeout),
            request_timeout: Duration::from_secs(request_timeout),
            write_timeout: Duration::from_secs(write_timeout),
            max_connections,
            lowered,
            sessions,
            oauth,
            store,
        }))
    }
}

/// `--max-connections` lowered to what the descriptor limit leaves room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lowered {
    /// What `--max-connections` (or its default) asked for.
    pub asked: usize,
    /// The descriptor limit (`ulimit -n`).
    pub limit: usize,
    /// The descriptors kept for everything but the connections.
    pub spare: usize,
}

/// Descriptors kept for everything but the HTTP connections, out of a limit of `limit`. The
/// rest of the server needs them in proportion to the traffic those connections bring:
/// connections to the forge (up to `--max-upstream-requests` at once, plus the idle ones its
/// pool keeps), DNS lookups, the catalog's cache. A share grows with the deployment where a
/// fixed count would be all of a small limit and a sliver of a large one; a quarter leaves
/// 768 of the usual 1024 to clients (room for the default 512) and 256 for the forge, four
/// times its default 64 requests at once.
pub fn spare_descriptors(limit: usize) -> usize {
    (limit / 4).max(MIN_SPARE_DESCRIPTORS)
}

/// The connections served at once, `asked` lowered to what a descriptor limit of `limit`
/// leaves (each connection holds one descriptor, and accepting one never goes past the cap);
/// an error when that is fewer than [`MIN_CONNECTIONS`]. No limit known: `asked`.
pub fn connection_cap(
    asked: usize,
    limit: Option<usize>,
) -> Result<(usize, Option<Lowered>), ConfigError> {
    let Some(limit) = limit else {
        return Ok((asked, None));
    };
    let spare = spare_descriptors(limit);
    let room = limit.saturating_sub(spare);
    if room < MIN_CONNECTIONS {
        return Err(ConfigError::Descriptors {
            limit,
            spare,
            room,
            // Below four times the floor, the floor is what is kept.
            needed: MIN_CONNECTIONS + MIN_SPARE_DESCRIPTORS,
        });
    }
    if asked <= room {
        return Ok((asked, None));
    }
    Ok((
        room,
        Some(Lowered {
            asked,
            limit,
            spare,
        }),
    ))
}

/// The soft limit on open descriptors, where the system tells it (Linux's /proc).
fn descriptor_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// `host` or `host:port`, as a `Host` header carries it.
fn is_authority(text: &str) -> bool {
    !text.contains(['/', '@', '?', '#', '*'])
        && text
            .parse::<axum::http::uri::Authority>()
            .is_ok_and(|a| !a.host().is_empty())
}

/// An allowed origin with its port made explicit (`https://a.example` → `https://a.example:443`),
/// because an entry without a port would otherwise match every port.
fn normalize_origin(text: &str) -> Option<String> {
    let text = text.trim().trim_end_matches('/');
    let (base, any_port) = match text.strip_suffix(":*") {
        Some(base) => (base, true),
        None => (text, false),
    };
    let url = Url::parse(base).ok()?;
    let host = url.host_str()?;
    let plain = matches!(url.scheme(), "http" | "https")
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none();
    if !plain || (any_port && url.port().is_some()) {
        return None;
    }
    let port = if any_port {
        "*".to_owned()
    } else {
        url.port_or_known_default()?.to_string()
    };
    Some(format!("{}://{host}:{port}", url.scheme()))
}

/// The token a token file holds: one line (a final newline is fine). Anything more is refused
/// at start-up, since sending two lines as one token would fail on every request instead.
fn token_from_file(path: &std::path::Path, text: &str) -> Result<Token, ConfigError> {
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    if lines > 1 {
        return Err(ConfigError::TokenFileLines {
            path: path.display().to_string(),
            lines,
        });
    }
    Token::new(text).ok_or_else(|| ConfigError::EmptyTokenFile(path.display().to_string()))
}

/// A warning when the token file can be read by other users of the machine (Unix only): the
/// token is as safe as the file that holds it.
pub fn token_file_warning(path: &std::path::Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode();
        (mode & 0o077 != 0).then(|| {
            format!(
                "the token file {} can be read by other users (mode {:o}); `chmod 600` it",
                path.display(),
                mode & 0o777
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The instance URL of `text`, and what was assumed or corrected to get it, for the operator.
fn parse_url(text: &str) -> Option<(Url, Vec<&'static str>)> {
    let text = text.trim();
    let mut notes = Vec::new();
    // GITEA_HOST is sometimes a bare host name.
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        notes.push(
            "no scheme, so https:// is assumed; write http:// if the forge speaks plain HTTP",
        );
        format!("https://{text}")
    };
    let mut url = Url::parse(&with_scheme).ok()?;
    if !(matches!(url.scheme(), "http" | "https") && url.host().is_some()) {
        return None;
    }
    // forgelens adds `/api/v1` itself; kept, every request would go to `/api/v1/api/v1/…`.
    let path = url.path().trim_end_matches('/');
    if let Some(base) = path.strip_suffix("/api/v1") {
        let base = if base.is_empty() { "/" } else { base }.to_owned();
        url.set_path(&base);
        notes.push(
            "the API path /api/v1 is dropped: give the instance's address, forgelens adds it",
        );
    }
    Some((url, notes))
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn resolve(flags: &Flags, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        Config::resolve(flags, &|k| map.get(k).cloned())
    }

    #[test]
    fn defaults() {
        let c = resolve(&Flags::default(), &[]).unwrap();
        assert_eq!(c.url.as_str(), "https://codeberg.org/");
        assert!(
            c.token.is_none()
                && !c.read_only
                && c.toolsets.is_none()
                && c.disabled_tools.is_empty()
        );
        assert_eq!(c.timeout, Duration::from_secs(30));
        assert_eq!(
            (c.surface, c.sudo, c.max_answer_bytes),
            (Surface::Core, false, DEFAULT_MAX_ANSWER_BYTES)
        );
    }

    #[test]
    fn the_surface_and_the_budget_come_from_a_flag_or_the_environment() {
        let env = [
            ("FORGELENS_TOOL_SURFACE", "Full"),
            ("FORGELENS_MAX_ANSWER_BYTES", "8192"),
            ("FORGELENS_SUDO", "yes"),
        ];
        let c = resolve(&Flags::default(), &env).unwrap();
        assert_eq!(
            (c.surface, c.max_answer_bytes, c.sudo),
            (Surface::Full, 8192, true)
        );
        let flags = Flags {
            tool_surface: Some("core".into()),
            max_answer_bytes: Some(4096),
            ..Flags::default()
        };
        let c = resolve(&flags, &env).unwrap();
        assert_eq!((c.surface, c.max_answer_bytes), (Surface::Core, 4096));
        for (key, value) in [
            ("FORGELENS_TOOL_SURFACE", "most"),
            ("FORGELENS_MAX_ANSWER_BYTES", "4095"),
        ] {
            assert!(
                resolve(&Flags::default(), &[(key, value)]).is_err(),
                "{key}={value}"
            );
        }
    }

    #[test]
    fn flags_win_then_env_in_alias_order() {
        let env = [
            ("GITEA_URL", "https://gitea.example"),
            ("GITEA_HOST", "other.example"),
            ("GITEA_TOKEN", "t1"),
        ];
        let c = resolve(&Flags::default(), &env).unwrap();
        assert_eq!(c.url.as_str(), "https://gitea.example/");
        assert_eq!(c.token, Token::new("t1"));
        let flags = Flags {
            url: Some("http://127.0.0.1:3000".into()),
            ..Flags::default()
        };
        assert_eq!(
            resolve(&flags, &env).unwrap().url.as_str(),
            "http://127.0.0.1:3000/"
        );
        let host_only = resolve(&Flags::default(), &[("GITEA_HOST", "git.example.org")]).unwrap();
        assert_eq!(host_only.url.as_str(), "https://git.example.org/");
    }

    #[test]
    fn lists_and_booleans() {
        let env = [
            ("TOOLSETS", "labels, commits,"),
            ("FORGEJO_READ_ONLY", "yes"),
            ("DISABLED_TOOLS", "a"),
        ];
        let c = resolve(&Flags::default(), &env).unwrap();
        assert_eq!(
            c.toolsets,
            Some(vec!["labels".to_string(), "commits".to_string()])
        );
        assert!(c.read_only);
        assert_eq!(c.disabled_tools, ["a"]);
    }

    #[test]
    fn any_alias_asking_for_read_only_wins() {
        for env in [
            [("FORGEJO_READ_ONLY", "false"), ("READ_ONLY", "true")],
            [("FORGEJO_READ_ONLY", "true"), ("READ_ONLY", "false")],
        ] {
            assert!(
                resolve(&Flags::default(), &env).unwrap().read_only,
                "{env:?}"
            );
        }
        let off = [("FORGEJO_READ_ONLY", "false"), ("READ_ONLY", "0")];
        assert!(!resolve(&Flags::default(), &off).unwrap().read_only);
        // A malformed alias is an error even when another one already said true.
        assert!(matches!(
            resolve(
                &Flags::default(),
                &[("FORGEJO_READ_ONLY", "true"), ("READ_ONLY", "maybe")]
            ),
            Err(ConfigError::Bool { .. })
        ));
    }

    #[test]
    fn a_token_file_holds_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let flags = Flags {
            token_file: Some(path.clone()),
            ..Flags::default()
        };
        std::fs::write(&path, "abc123\n").unwrap();
        assert_eq!(resolve(&flags, &[]).unwrap().token, Token::new("abc123"));
        std::fs::write(&path, "abc123\nsecond\n").unwrap();
        let error = resolve(&flags, &[]).unwrap_err();
        assert!(matches!(
            error,
            ConfigError::TokenFileLines { lines: 2, .. }
        ));
        assert!(!error.to_string().contains("abc123"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_others_can_read_is_warned_about() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "abc123").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(token_file_warning(&path), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let warning = token_file_warning(&path).unwrap();
        assert!(
            warning.contains("mode 644") && warning.contains("chmod 600"),
            "{warning}"
        );
    }

    #[test]
    fn malformed_values_are_errors() {
        assert!(matches!(
            resolve(&Flags::default(), &[("READ_ONLY", "maybe")]),
            Err(ConfigError::Bool { .. })
        ));
        assert!(matches!(
            resolve(&Flags::default(), &[("FORGEJO_URL", "ftp://x")]),
            Err(ConfigError::Url { .. })
        ));
        assert!(matches!(
            resolve(&Flags::default(), &[("FORGELENS_TIMEOUT", "soon")]),
            Err(ConfigError::Count { .. })
        ));
    }

    #[test]
    fn mutable_answers_are_reused_only_when_asked() {
        assert_eq!(resolve(&Flags::default(), &[]).unwrap().mutable_ttl, None);
        let env = [("FORGELENS_CACHE_TTL_MS", "1500")];
        assert_eq!(
            resolve(&Flags::default(), &env).unwrap().mutable_ttl,
            Some(Duration::from_millis(1500))
        );
        let off = Flags {
            cache_ttl_ms: Some(0),
            ..Flags::default()
        };
        assert_eq!(
            resolve(&off, &env).unwrap().mutable_ttl,
            None,
            "the flag wins"
        );
        assert!(matches!(
            resolve(&Flags::default(), &[("FORGELENS_CACHE_TTL_MS", "1s")]),
            Err(ConfigError::Millis { .. })
        ));
    }

    #[test]
    fn catalog_sources() {
        let c = resolve(&Flags::default(), &[("FORGELENS_CATALOG", "/c.yaml")]).unwrap();
        assert_eq!(c.catalog, Some(CatalogSource::File("/c.yaml".into())));
        let from_instance = Flags {
            catalog_from_instance: true,
            ..Flags::default()
        };
        let c = resolve(&from_instance, &[("HOME", "/home/u")]).unwrap();
        assert_eq!(
            c.catalog,
            Some(CatalogSource::Instance {
                cache_dir: "/home/u/.cache/forgelens".into()
            })
        );
        let c = resolve(
            &Flags::default(),
            &[
                ("FORGELENS_CATALOG_FROM_INSTANCE", "1"),
                ("XDG_CACHE_HOME", "/x"),
                ("FORGELENS_CACHE_DIR", "/c"),
            ],
        )
        .unwrap();
        assert_eq!(
            c.catalog,
            Some(CatalogSource::Instance {
                cache_dir: "/c".into()
            })
        );
        assert_eq!(
            resolve(&from_instance, &[("FORGELENS_CATALOG", "/c.yaml")]).unwrap_err(),
            ConfigError::CatalogConflict
        );
        assert_eq!(
            resolve(&from_instance, &[]).unwrap_err(),
            ConfigError::NoCacheDir
        );
        assert!(resolve(&Flags::default(), &[]).unwrap().catalog.is_none());
    }

    #[test]
    fn token_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "abc\n").unwrap();
        let flags = Flags {
            token_file: Some(path),
            ..Flags::default()
        };
        let c = resolve(&flags, &[("FORGEJO_TOKEN", "ignored")]).unwrap();
        assert_eq!(c.token, Token::new("abc"));
    }

    fn http(flags: &HttpFlags, env: &[(&str, &str)]) -> Result<Option<HttpConfig>, ConfigError> {
        let map: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        HttpConfig::resolve(flags, &|k| map.get(k).cloned())
    }

    fn http_flags(addr: &str) -> HttpFlags {
        HttpFlags {
            http: Some(addr.into()),
            ..HttpFlags::default()
        }
    }

    #[test]
    fn the_oauth_sign_in_needs_its_settings_and_an_origin() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "s3cr3t\n").unwrap();
        let key = dir.path().join("key").display().to_string();
        let secret = secret.display().to_string();
        let mut flags = http_flags("127.0.0.1:8080");
        flags.oauth.oauth = true;
        let error = http(&flags, &[]).unwrap_err().to_string();
        assert!(error.contains("--oauth needs --public-url URL"), "{error}");
        let env = [
            ("FORGELENS_PUBLIC_URL", "https://mcp.example.com/"),
            ("FORGELENS_FORGE_CLIENT_ID", "app"),
            ("FORGELENS_FORGE_CLIENT_SECRET", "from-env"),
            ("FORGELENS_OAUTH_KEY_FILE", key.as_str()),
        ];
        let oauth = http(&flags, &env).unwrap().unwrap().oauth.unwrap();
        assert_eq!(oauth.issuer(), "https://mcp.example.com");
        assert_eq!(oauth.resource(), "https://mcp.example.com/mcp");
        assert_eq!(oauth.forge_client_secret, "from-env");
        assert_eq!(oauth.offered, default_scopes());
        assert_eq!(
            oauth.store,
            StoreConfig::File(dir.path().join("forgelens-store.json"))
        );
        assert_eq!(oauth.cookie_name(), "__Host-forgelens-consent");
        assert!(
            !format!("{oauth:?}").contains("from-env"),
            "the secret never prints"
        );
        flags.oauth.forge_client_secret_file = Some(secret.clone().into());
        flags.oauth.oauth_scopes = Some("read:issue,read:repository".into());
        let oauth = http(&flags, &env).unwrap().unwrap().oauth.unwrap();
        assert_eq!(oauth.forge_client_secret, "s3cr3t", "the file wins");
        assert_eq!(oauth.offered.to_text(), "read:issue read:repository");
        for (url, why) in [
            ("http://mcp.example.com", "not an origin"),
            ("https://mcp.example.com/forgelens", "not an origin"),
        ] {
            let env = [("FORGELENS_PUBLIC_URL", url), env[1], env[2], env[3]];
            let error = http(&flags, &env).unwrap_err().to_string();
            assert!(error.contains(why), "{url}: {error}");
        }
        let local = [
            ("FORGELENS_PUBLIC_URL", "http://127.0.0.1:8080"),
            env[1],
            env[2],
            env[3],
        ];
        assert!(
            http(&flags, &local).unwrap().unwrap().oauth.is_some(),
            "http on loopback"
        );
        flags.oauth.oauth_scopes = Some("read:issue openid".into());
        let error = http(&flags, &env).unwrap_err().to_string();
        assert!(error.contains("`openid` is not a forge scope"), "{error}");
        let mut lone = http_flags("127.0.0.1:8080");
        lone.oauth.public_url = Some("https://mcp.example.com".into());
        let error = http(&lone, &[]).unwrap_err().to_string();
        assert!(
            error.contains("--public-url is a setting of the OAuth sign-in; add --oauth"),
            "{error}"
        );
    }

    #[test]
    fn a_shared_store_is_a_redis_url_with_its_password_kept_apart() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key").display().to_string();
        let password = dir.path().join("password");
        std::fs::write(&password, "hunter2\n").unwrap();
        let mut flags = http_flags("127.0.0.1:8080");
        flags.oauth.oauth = true;
        let env = [
            ("FORGELENS_PUBLIC_URL", "https://mcp.example.com"),
            ("FORGELENS_FORGE_CLIENT_ID", "app"),
            ("FORGELENS_FORGE_CLIENT_SECRET", "s"),
            ("FORGELENS_OAUTH_KEY_FILE", key.as_str()),
            ("FORGELENS_STORE", "redis://cache.internal:6379/2"),
        ];
        let store = |flags: &HttpFlags, env: &[(&str, &str)]| {
            http(flags, env).map(|c| {
                let c = c.unwrap();
                (c.oauth.unwrap().store, c.store)
            })
        };
        assert_eq!(
            store(&flags, &env),
            Ok((
                StoreConfig::Shared,
                Some(SharedStore {
                    url: "redis://cache.internal:6379/2".into(),
                    password: None,
                    ca: None,
                    timeout: Duration::from_millis(1000),
                })
            ))
        );
        flags.oauth.store_password_file = Some(password);
        flags.oauth.store_timeout_ms = Some(250);
        flags.oauth.store = Some("rediss://cache.internal/0".into());
        let (_, shared) = store(&flags, &env).unwrap();
        let shared = shared.unwrap();
        assert_eq!(
            shared,
            SharedStore {
                url: "rediss://cache.internal/0".into(),
                password: Some("hunter2".into()),
                ca: None,
                timeout: Duration::from_millis(250),
            }
        );
        assert!(!format!("{shared:?}").contains("hunter2"), "{shared:?}");
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\n").unwrap();
        flags.oauth.store_ca_file = Some(ca);
        let (_, shared) = store(&flags, &env).unwrap();
        assert_eq!(
            shared.unwrap().ca.as_deref(),
            Some(&b"-----BEGIN CERTIFICATE-----\n"[..])
        );
        flags.oauth.store = Some("redis://cache.internal/0".into());
        let error = store(&flags, &env).unwrap_err().to_string();
        assert!(error.contains("write rediss://"), "{error}");
        flags.oauth.store_ca_file = None;
        flags.oauth.store = Some("redis://:hunter2@cache.internal/0".into());
        let error = store(&flags, &env).unwrap_err().to_string();
        assert!(error.contains("--store-password-file"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
        flags.oauth.store = Some(dir.path().join("s.json").display().to_string());
        let error = store(&flags, &env).unwrap_err().to_string();
        assert!(error.contains("settings of a shared store"), "{error}");

        // Without --oauth, a shared store still shares the cache and the rate budget; a file
        // holds only sign-ins, so it needs --oauth.
        let mut plain = http_flags("127.0.0.1:8080");
        plain.oauth.store = Some("redis://cache.internal/1".into());
        let c = http(&plain, &[]).unwrap().unwrap();
        assert_eq!(
            (c.oauth, c.store.map(|s| s.url)),
            (None, Some("redis://cache.internal/1".into()))
        );
        plain.oauth.store = Some("/var/lib/forgelens/store.json".into());
        let error = http(&plain, &[]).unwrap_err().to_string();
        assert!(
            error.contains("add --oauth, or give --store redis://"),
            "{error}"
        );
    }

    #[test]
    fn http_is_off_unless_asked_and_defaults_are_safe() {
        assert_eq!(http(&HttpFlags::default(), &[]), Ok(None));
        let c = http(&HttpFlags::default(), &[("FORGELENS_HTTP", "127.0.0.1:0")])
            .unwrap()
            .unwrap();
        assert_eq!(c.addr, "127.0.0.1:0".parse().unwrap());
        assert!(!c.remote && !c.require_client_token && !c.sessions);
        assert_eq!(c.allowed_hosts, LOOPBACK_HOSTS);
        assert_eq!(c.allowed_origins, LOOPBACK_ORIGINS);
        assert_eq!(c.max_body_bytes, DEFAULT_MAX_BODY_BYTES);
        assert_eq!(c.max_concurrent_requests, DEFAULT_MAX_CONCURRENT_REQUESTS);
        let ipv6 = http(&http_flags("[::1]:8080"), &[]).unwrap().unwrap();
        assert!(!ipv6.remote);
    }

    #[test]
    fn the_request_and_write_deadlines_are_settings() {
        let c = http(&http_flags("127.0.0.1:0"), &[]).unwrap().unwrap();
        assert_eq!(
            (c.request_timeout, c.write_timeout),
            (Duration::from_secs(30), Duration::from_secs(30))
        );
        let env = [
            ("FORGELENS_REQUEST_TIMEOUT", "5"),
            ("FORGELENS_WRITE_TIMEOUT", "7"),
        ];
        let c = http(&http_flags("127.0.0.1:0"), &env).unwrap().unwrap();
        assert_eq!(
            (c.request_timeout, c.write_timeout),
            (Duration::from_secs(5), Duration::from_secs(7))
        );
        let flags = HttpFlags {
            request_timeout: Some(1),
            ..http_flags("127.0.0.1:0")
        };
        let c = http(&flags, &env).unwrap().unwrap();
        assert_eq!(c.request_timeout, Duration::from_secs(1));
        let zero = HttpFlags {
            write_timeout: Some(0),
            ..http_flags("127.0.0.1:0")
        };
        assert!(matches!(
            http(&zero, &[]),
            Err(ConfigError::Count { name, .. }) if name == "--write-timeout"
        ));
        assert_eq!(
            HttpFlags {
                request_timeout: Some(3),
                ..HttpFlags::default()
            }
            .first_given(),
            Some("--request-timeout".to_owned())
        );
    }

    #[test]
    fn the_descriptor_limit_bounds_the_connections() {
        assert_eq!(connection_cap(512, None).unwrap(), (512, None));
        assert_eq!(connection_cap(512, Some(1024)).unwrap(), (512, None));
        assert_eq!(connection_cap(512, Some(1 << 20)).unwrap(), (512, None));
        // A quarter kept: 768 of 1024 would do for 700.
        assert_eq!(connection_cap(700, Some(1024)).unwrap(), (700, None));
        assert_eq!(
            connection_cap(800, Some(1024)).unwrap(),
            (
                768,
                Some(Lowered {
                    asked: 800,
                    limit: 1024,
                    spare: 256
                })
            )
        );
        // Below 128 the floor of 32 is kept.
        assert_eq!(
            connection_cap(512, Some(128)).unwrap(),
            (
                96,
                Some(Lowered {
                    asked: 512,
                    limit: 128,
                    spare: 32
                })
            )
        );
        assert_eq!(connection_cap(512, Some(48)).unwrap().0, MIN_CONNECTIONS);
        for limit in [47, 40, 10, 0] {
            let error = connection_cap(4, Some(limit)).unwrap_err();
            assert!(
                matches!(error, ConfigError::Descriptors { needed: 48, .. }),
                "{limit}: {error:?}"
            );
        }
        let message = connection_cap(512, Some(40)).unwrap_err().to_string();
        assert!(
            message.contains("(ulimit -n) is 40")
                && message.contains("room for 8 HTTP connections")
                && message.contains("raise it to 48"),
            "{message}"
        );
    }

    #[test]
    fn a_non_loopback_address_needs_an_explicit_opt_in() {
        assert!(matches!(
            http(&http_flags("0.0.0.0:8080"), &[]),
            Err(ConfigError::Remote { .. })
        ));
        let flags = HttpFlags {
            allow_remote: true,
            ..http_flags("0.0.0.0:8080")
        };
        assert!(http(&flags, &[]).unwrap().unwrap().remote);
        let by_env = http(
            &http_flags("192.0.2.1:80"),
            &[("FORGELENS_ALLOW_REMOTE", "yes")],
        );
        assert!(by_env.unwrap().unwrap().remote);
    }

    #[test]
    fn http_flags_win_then_env() {
        let env = [
            ("FORGELENS_HTTP", "127.0.0.1:1"),
            ("FORGELENS_MAX_BODY_BYTES", "2048"),
            ("FORGELENS_MAX_CONCURRENT_REQUESTS", "3"),
            ("FORGELENS_REQUIRE_CLIENT_TOKEN", "true"),
            ("FORGELENS_HTTP_SESSIONS", "1"),
            ("FORGELENS_ALLOWED_HOSTS", "mcp.example.com, proxy:8080"),
            (
                "FORGELENS_ALLOWED_ORIGINS",
                "https://app.example.com,http://[::1]:*",
            ),
        ];
        let c = http(&HttpFlags::default(), &env).unwrap().unwrap();
        assert_eq!(c.addr.port(), 1);
        assert_eq!((c.max_body_bytes, c.max_concurrent_requests), (2048, 3));
        assert!(c.require_client_token && c.sessions);
        assert_eq!(
            &c.allowed_hosts[LOOPBACK_HOSTS.len()..],
            ["mcp.example.com", "proxy:8080"]
        );
        assert_eq!(
            &c.allowed_origins[LOOPBACK_ORIGINS.len()..],
            ["https://app.example.com:443", "http://[::1]:*"]
        );
        let flags = HttpFlags {
            max_body_bytes: Some(10),
            allowed_hosts: Some(vec!["other.example".into()]),
            ..http_flags("127.0.0.1:2")
        };
        let c = http(&flags, &env).unwrap().unwrap();
        assert_eq!((c.addr.port(), c.max_body_bytes), (2, 10));
        assert_eq!(c.allowed_hosts.last().unwrap(), "other.example");
        let any = HttpFlags {
            allowed_hosts: Some(vec!["*".into()]),
            ..http_flags("127.0.0.1:2")
        };
        assert!(http(&any, &[]).unwrap().unwrap().allowed_hosts.is_empty());
    }

    #[test]
    fn malformed_http_values_are_errors() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "FORGELENS_HTTP",
                "localhost:8080",
                "not an IP address and port",
            ),
            ("FORGELENS_HTTP", "8080", "not an IP address and port"),
            (
                "FORGELENS_MAX_BODY_BYTES",
                "0",
                "not a whole number above 0",
            ),
            (
                "FORGELENS_MAX_CONCURRENT_REQUESTS",
                "many",
                "not a whole number",
            ),
            ("FORGELENS_REQUIRE_CLIENT_TOKEN", "sure", "not a boolean"),
            (
                "FORGELENS_ALLOWED_HOSTS",
                "https://x.example",
                "not a host name",
            ),
            ("FORGELENS_ALLOWED_HOSTS", "*,x.example", "not a host name"),
            (
                "FORGELENS_ALLOWED_ORIGINS",
                "app.example.com",
                "not an origin",
            ),
            (
                "FORGELENS_ALLOWED_ORIGINS",
                "https://a.example/path",
                "not an origin",
            ),
            (
                "FORGELENS_ALLOWED_ORIGINS",
                "ftp://a.example",
                "not an origin",
            ),
        ];
        for (name, value, expected) in cases {
            let mut env = vec![(*name, *value)];
            if *name != "FORGELENS_HTTP" {
                env.push(("FORGELENS_HTTP", "127.0.0.1:0"));
            }
            let error = http(&HttpFlags::default(), &env).unwrap_err().to_string();
            assert!(
                error.starts_with(&format!("{name}: `{value}`")) && error.contains(expected),
                "{name}={value}: {error}"
            );
        }
        let zero = HttpFlags {
            max_concurrent_requests: Some(0),
            ..http_flags("127.0.0.1:0")
        };
        assert!(matches!(
            http(&zero, &[]),
            Err(ConfigError::Count { name, .. }) if name == "--max-concurrent-requests"
        ));
    }
}
