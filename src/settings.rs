//! Every setting, declared once: its flag, what the flag takes, its environment variables, its
//! default and its words. The clap arguments take their help from here, `config` reads the
//! environment names and the defaults from here, and the settings tables of README.md and
//! docs/http-transport.md are written from here (`tests/docs.rs` checks them;
//! `FORGELENS_BLESS=1 cargo test` rewrites them).

/// One setting.
#[derive(Debug)]
pub struct Setting {
    /// The long flag, without its dashes.
    pub flag: &'static str,
    /// What the flag takes (`SECONDS`); `None` for a switch.
    pub value: Option<&'static str>,
    /// Environment variables, in the order they are read.
    pub env: &'static [&'static str],
    pub default: Default,
    /// What the setting does: the sentence `--help` gives.
    pub help: &'static str,
    /// Its name in the tables.
    pub what: &'static str,
    /// More about the default, for the tables only.
    pub note: &'static str,
}

/// A setting's default: a number the code uses, or words for what happens without it.
#[derive(Debug)]
pub enum Default {
    Number(u64),
    Words(&'static str),
}

impl Setting {
    /// The default number; a compile error where the table gives words (it is used in consts).
    pub const fn number(&self) -> u64 {
        match self.default {
            Default::Number(n) => n,
            Default::Words(_) => panic!("this setting's default is not a number"),
        }
    }

    /// The default's words; a compile error where the table gives a number.
    pub const fn words(&self) -> &'static str {
        match self.default {
            Default::Words(w) => w,
            Default::Number(_) => panic!("this setting's default is a number"),
        }
    }

    /// `--flag VALUE`, as the tables and messages write it.
    pub fn usage(&self) -> String {
        match self.value {
            Some(value) => format!("--{} {value}", self.flag),
            None => format!("--{}", self.flag),
        }
    }

    /// `--flag`, as messages name it.
    pub fn name(&self) -> String {
        format!("--{}", self.flag)
    }

    /// What `--help` says: the sentence, where the environment can say it too, the default.
    pub fn help_text(&self) -> String {
        let env = match self.env {
            [] => String::new(),
            vars => format!(" [env: {}]", vars.join(", ")),
        };
        let default = match &self.default {
            Default::Number(n) => format!(" [default: {n}]"),
            Default::Words(w) => format!(" [default: {w}]"),
        };
        format!("{}{env}{default}", self.help)
    }

    fn row(&self, with_help: bool) -> String {
        let env = match self.env {
            [] => "—".to_owned(),
            [first] => format!("`{first}`"),
            [first, rest @ ..] => {
                let rest: Vec<String> = rest.iter().map(|v| format!("`{v}`")).collect();
                format!("`{first}` (also {})", rest.join(", "))
            }
        };
        let default = match &self.default {
            Default::Number(n) => n.to_string(),
            Default::Words(w) => (*w).to_owned(),
        };
        let note = match self.note {
            "" => String::new(),
            note => format!("; {note}"),
        };
        let mut cells = vec![
            self.what.to_owned(),
            format!("`{}`", self.usage()),
            env,
            format!("{default}{note}"),
        ];
        if with_help {
            cells.push(self.help.to_owned());
        }
        // A `|` inside a cell would end it.
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |", cells.join(" | "))
    }
}

/// The markdown table of `settings`; `with_help` adds what each one does.
pub fn table(settings: &[&Setting], with_help: bool) -> String {
    let mut out = match with_help {
        true => String::from(
            "| setting | flag | environment | default | what it does |\n|---|---|---|---|---|\n",
        ),
        false => String::from("| setting | flag | environment | default |\n|---|---|---|---|\n"),
    };
    for setting in settings {
        out.push_str(&setting.row(with_help));
        out.push('\n');
    }
    out
}

pub const URL: Setting = Setting {
    flag: "url",
    value: Some("URL"),
    env: &["FORGEJO_URL", "GITEA_URL", "GITEA_HOST"],
    default: Default::Words("https://codeberg.org"),
    help: "The instance URL; one without a scheme is taken as https, a trailing /api/v1 is dropped.",
    what: "instance URL",
    note: "",
};

pub const TOKEN_FILE: Setting = Setting {
    flag: "token-file",
    value: Some("FILE"),
    env: &[
        "FORGEJO_TOKEN",
        "FORGEJO_ACCESS_TOKEN",
        "GITEA_TOKEN",
        "GITEA_ACCESS_TOKEN",
    ],
    default: Default::Words("none: public data only"),
    help: "Read the token from this file, the token alone on one line; the token itself is never a flag (it would show in `ps`). The variables hold the token itself.",
    what: "token",
    note: "the file should be readable by you alone (a warning says when it is not)",
};

pub const READ_ONLY: Setting = Setting {
    flag: "read-only",
    value: None,
    env: &["FORGEJO_READ_ONLY", "READ_ONLY"],
    default: Default::Words("off"),
    help: "Offer only read tools and send nothing but GET.",
    what: "read-only mode",
    note: "any of its variables set true wins",
};

pub const LOCKDOWN: Setting = Setting {
    flag: "lockdown",
    value: None,
    env: &["FORGELENS_LOCKDOWN"],
    default: Default::Words("off"),
    help: "On public repositories, withhold text written by accounts without write access (read it on purpose with include_untrusted).",
    what: "lockdown",
    note: "see docs/security.md",
};

pub const ALLOW_REPOS: Setting = Setting {
    flag: "allow-repos",
    value: Some("OWNER/REPO,…"),
    env: &["FORGELENS_ALLOW_REPOS"],
    default: Default::Words("all"),
    help: "Touch only these repositories (`owner/repo` or `owner/*`, comma-separated): requests about any other are not sent and lists leave them out. Set but empty is an error.",
    what: "repositories that may be touched",
    note: "see docs/security.md",
};

pub const TOOLSETS: Setting = Setting {
    flag: "toolsets",
    value: Some("A,B"),
    env: &["FORGEJO_TOOLSETS", "TOOLSETS"],
    default: Default::Words("all"),
    help: "Offer only these toolsets (`issue` and `issues` name the same one).",
    what: "toolsets offered",
    note: "",
};

pub const DISABLED_TOOLS: Setting = Setting {
    flag: "disabled-tools",
    value: Some("X,Y"),
    env: &["FORGEJO_DISABLED_TOOLS", "DISABLED_TOOLS"],
    default: Default::Words("none"),
    help: "Do not offer these tools.",
    what: "tools withheld",
    note: "",
};

pub const TIMEOUT: Setting = Setting {
    flag: "timeout",
    value: Some("SECONDS"),
    env: &["FORGELENS_TIMEOUT"],
    default: Default::Number(30),
    help: "Whole-request timeout towards the forge, in seconds.",
    what: "upstream timeout",
    note: "",
};

pub const MAX_UPSTREAM_REQUESTS: Setting = Setting {
    flag: "max-upstream-requests",
    value: Some("N"),
    env: &["FORGELENS_MAX_UPSTREAM_REQUESTS"],
    default: Default::Number(64),
    help: "Most requests in flight to the forge at once; more wait their turn.",
    what: "requests in flight to the forge",
    note: "",
};

pub const FORGE_RATE: Setting = Setting {
    flag: "forge-rate",
    value: Some("N/PERIOD"),
    env: &["FORGELENS_FORGE_RATE"],
    default: Default::Words("none"),
    help: "Send at most N requests per token in any PERIOD (`600/m`, `100/10s`, `5000/h`), to stay under a limit the forge or its proxy enforces; shared by every replica of a --store. A request that would wait longer than 5 s is refused with the wait.",
    what: "requests to the forge per token",
    note: "as many as come, waiting out a 429's Retry-After",
};

pub const CACHE_TTL_MS: Setting = Setting {
    flag: "cache-ttl-ms",
    value: Some("MS"),
    env: &["FORGELENS_CACHE_TTL_MS"],
    default: Default::Number(0),
    help: "Reuse answers of mutable resources (issues, labels…) for this many milliseconds; they may then be that much out of date. Immutable answers (a commit by full sha) are always reused.",
    what: "reuse of mutable answers",
    note: "never",
};

pub const TOOL_SURFACE: Setting = Setting {
    flag: "tool-surface",
    value: Some("core|full"),
    env: &["FORGELENS_TOOL_SURFACE"],
    default: Default::Words("core"),
    help: "Which tools tools/list shows: `core` (a small set plus search_tools, describe_tools, call_read_tool, call_write_tool and read_resource, which reach every other tool) or `full` (every tool).",
    what: "tools listed",
    note: "the core tools and 5 meta-tools that reach the rest (docs/tool-surface.md)",
};

pub const SUDO: Setting = Setting {
    flag: "sudo",
    value: None,
    env: &["FORGELENS_SUDO"],
    default: Default::Words("off"),
    help: "Announce the `sudo` argument of every tool (it needs an admin token; it is accepted either way).",
    what: "announce `sudo` on every tool",
    note: "",
};

pub const MAX_ANSWER_BYTES: Setting = Setting {
    flag: "max-answer-bytes",
    value: Some("BYTES"),
    env: &["FORGELENS_MAX_ANSWER_BYTES"],
    default: Default::Number(48 * 1024),
    help: "The most bytes one answer may hold, at least 4096; a longer one is cut and says how to get the rest.",
    what: "largest answer",
    note: "48 KiB",
};

pub const CATALOG: Setting = Setting {
    flag: "catalog",
    value: Some("FILE"),
    env: &["FORGELENS_CATALOG"],
    default: Default::Words("none"),
    help: "Also serve the tools of this generated catalog (`forgelens catalog generate`).",
    what: "generated tools",
    note: "see docs/catalog.md",
};

pub const CATALOG_FROM_INSTANCE: Setting = Setting {
    flag: "catalog-from-instance",
    value: None,
    env: &["FORGELENS_CATALOG_FROM_INSTANCE"],
    default: Default::Words("off"),
    help: "Also serve a catalog generated from the instance's own /swagger.v1.json, cached on disk for a day.",
    what: "generated tools of the instance",
    note: "",
};

pub const CACHE_DIR: Setting = Setting {
    flag: "cache-dir",
    value: Some("DIR"),
    env: &["FORGELENS_CACHE_DIR"],
    default: Default::Words("$XDG_CACHE_HOME/forgelens or ~/.cache/forgelens"),
    help: "Where --catalog-from-instance keeps the instance's spec.",
    what: "cache directory",
    note: "",
};

pub const RESOURCES: Setting = Setting {
    flag: "resources",
    value: Some("FILE"),
    env: &["FORGELENS_RESOURCES"],
    default: Default::Words("the built-in one"),
    help: "Resource manifest to use instead of the built-in one.",
    what: "resource manifest",
    note: "",
};

pub const TOOLS: Setting = Setting {
    flag: "tools",
    value: Some("FILE"),
    env: &["FORGELENS_TOOLS"],
    default: Default::Words("the built-in one"),
    help: "Tool manifest to use instead of the built-in one.",
    what: "tool manifest",
    note: "",
};

pub const SEARCH: Setting = Setting {
    flag: "search",
    value: Some("FILE"),
    env: &["FORGELENS_SEARCH"],
    default: Default::Words("the built-in one"),
    help: "Search vocabulary and tool keywords to use instead of the built-in ones.",
    what: "search vocabulary",
    note: "",
};

pub const LOG_LEVEL: Setting = Setting {
    flag: "log-level",
    value: Some("FILTER"),
    env: &["RUST_LOG"],
    default: Default::Words("forgelens=info,rmcp=warn"),
    help: "Log filter, e.g. `info` or `forgelens=debug`; logs go to stderr only.",
    what: "logs",
    note: "",
};

pub const HTTP: Setting = Setting {
    flag: "http",
    value: Some("ADDR"),
    env: &["FORGELENS_HTTP"],
    default: Default::Words("off (stdio)"),
    help: "Serve MCP over Streamable HTTP at this IP address and port (e.g. 127.0.0.1:8080), path /mcp, instead of stdio.",
    what: "Streamable HTTP",
    note: "",
};

pub const ALLOW_REMOTE: Setting = Setting {
    flag: "allow-remote",
    value: None,
    env: &["FORGELENS_ALLOW_REMOTE"],
    default: Default::Words("off"),
    help: "Let --http bind an address outside loopback.",
    what: "binding beyond loopback",
    note: "",
};

pub const REQUIRE_CLIENT_TOKEN: Setting = Setting {
    flag: "require-client-token",
    value: None,
    env: &["FORGELENS_REQUIRE_CLIENT_TOKEN"],
    default: Default::Words("off"),
    help: "Refuse (401) a request without its own `Authorization` token instead of using the configured one.",
    what: "a token on every request",
    note: "",
};

pub const ALLOWED_HOSTS: Setting = Setting {
    flag: "allowed-hosts",
    value: Some("H,H"),
    env: &["FORGELENS_ALLOWED_HOSTS"],
    default: Default::Words("loopback names only"),
    help: "`Host` values accepted besides localhost, 127.0.0.1 and ::1 (`name` matches any port, `name:port` one port); `*` alone accepts any.",
    what: "accepted `Host` values",
    note: "",
};

pub const ALLOWED_ORIGINS: Setting = Setting {
    flag: "allowed-origins",
    value: Some("O,O"),
    env: &["FORGELENS_ALLOWED_ORIGINS"],
    default: Default::Words("loopback origins only"),
    help: "Browser origins accepted besides http(s)://localhost, 127.0.0.1 and [::1] on any port: `https://app.example.com` (default port), `…:8443` or `…:*`.",
    what: "accepted browser origins",
    note: "",
};

pub const MAX_BODY_BYTES: Setting = Setting {
    flag: "max-body-bytes",
    value: Some("BYTES"),
    env: &["FORGELENS_MAX_BODY_BYTES"],
    default: Default::Number(1024 * 1024),
    help: "Largest request body, in bytes; a larger one gets 413.",
    what: "largest request body",
    note: "1 MiB",
};

pub const MAX_CONCURRENT_REQUESTS: Setting = Setting {
    flag: "max-concurrent-requests",
    value: Some("N"),
    env: &["FORGELENS_MAX_CONCURRENT_REQUESTS"],
    default: Default::Number(64),
    help: "MCP requests served at once; one more gets 503 with `Retry-After: 1`.",
    what: "requests served at once",
    note: "",
};

pub const MAX_CONNECTIONS: Setting = Setting {
    flag: "max-connections",
    value: Some("N"),
    env: &["FORGELENS_MAX_CONNECTIONS"],
    default: Default::Number(512),
    help: "Connections open at once. Past it, a new connection closes the one idle longest (between requests, or not yet through a request's headers); when none is idle, it waits to be accepted. Lowered at start-up, with a warning, to what the descriptor limit (`ulimit -n`) leaves once a quarter of it (at least 32) is kept for the rest of the server; a limit that leaves room for fewer than 16 connections is refused.",
    what: "connections open at once",
    note: "",
};

pub const HEADER_TIMEOUT: Setting = Setting {
    flag: "header-timeout",
    value: Some("SECONDS"),
    env: &["FORGELENS_HEADER_TIMEOUT"],
    default: Default::Number(10),
    help: "Seconds a connection gets to send a request's headers, from its opening or its previous answer; slow and idle connections are closed after it.",
    what: "time to send headers",
    note: "",
};

pub const REQUEST_TIMEOUT: Setting = Setting {
    flag: "request-timeout",
    value: Some("SECONDS"),
    env: &["FORGELENS_REQUEST_TIMEOUT"],
    default: Default::Number(30),
    help: "Seconds a request gets to arrive whole, headers and body, from the connection's opening or its previous answer; a later one gets 408 and its connection is closed.",
    what: "time to send a whole request",
    note: "",
};

pub const WRITE_TIMEOUT: Setting = Setting {
    flag: "write-timeout",
    value: Some("SECONDS"),
    env: &["FORGELENS_WRITE_TIMEOUT"],
    default: Default::Number(30),
    help: "Seconds an answer waits for the client to read more of it; a client that reads nothing for that long (an event stream's included) has its connection closed.",
    what: "time to read an answer",
    note: "",
};

pub const SESSIONS: Setting = Setting {
    flag: "sessions",
    value: None,
    env: &["FORGELENS_HTTP_SESSIONS"],
    default: Default::Words("off"),
    help: "Give clients of revisions before 2026-07-28 a session (`Mcp-Session-Id`) held in this process; replicas then need sticky routing.",
    what: "sessions for older clients",
    note: "",
};

pub const OAUTH: Setting = Setting {
    flag: "oauth",
    value: None,
    env: &["FORGELENS_OAUTH"],
    default: Default::Words("off: personal tokens"),
    help: "Sign MCP clients in with OAuth 2.1: forgelens is their authorization server and signs each user in at the forge with its OAuth2 application; every /mcp request then needs a token from that sign-in. Needs --public-url, --forge-client-id, the client secret and --oauth-key-file (docs/remote.md).",
    what: "OAuth sign-in",
    note: "",
};

pub const PUBLIC_URL: Setting = Setting {
    flag: "public-url",
    value: Some("URL"),
    env: &["FORGELENS_PUBLIC_URL"],
    default: Default::Words("none (required with --oauth)"),
    help: "The address clients reach this server at, an origin without a path (https://mcp.example.com; http only on a loopback host): the issuer, the resource (its /mcp) and every OAuth address are built from it, never from a request's Host.",
    what: "public address",
    note: "",
};

pub const FORGE_CLIENT_ID: Setting = Setting {
    flag: "forge-client-id",
    value: Some("ID"),
    env: &["FORGELENS_FORGE_CLIENT_ID"],
    default: Default::Words("none (required with --oauth)"),
    help: "The client ID of the OAuth2 application registered on the forge for forgelens (a confidential client whose redirect URI is the public URL's /callback).",
    what: "forge OAuth2 application",
    note: "",
};

pub const FORGE_CLIENT_SECRET_FILE: Setting = Setting {
    flag: "forge-client-secret-file",
    value: Some("FILE"),
    env: &["FORGELENS_FORGE_CLIENT_SECRET"],
    default: Default::Words("none (required with --oauth)"),
    help: "Read that application's client secret from this file; the secret is never a flag. The variable holds the secret itself.",
    what: "its client secret",
    note: "",
};

pub const OAUTH_KEY_FILE: Setting = Setting {
    flag: "oauth-key-file",
    value: Some("FILE"),
    env: &["FORGELENS_OAUTH_KEY_FILE"],
    default: Default::Words("none (required with --oauth)"),
    help: "A file of at least 32 random bytes (`head -c 32 /dev/urandom`): the keys that sign forgelens's tokens and seal the forge's tokens in the store are derived from it. Replacing it ends every sign-in.",
    what: "signing and sealing key",
    note: "",
};

pub const STORE: Setting = Setting {
    flag: "store",
    value: Some("FILE|URL"),
    env: &["FORGELENS_STORE"],
    default: Default::Words("forgelens-store.json beside the key file"),
    help: "Where what outlives a request is kept: a file (with --oauth: registered clients, codes, sign-ins with their sealed forge tokens; written owner-only, read back on restart) for one process; or redis://HOST:PORT/DB (rediss:// for TLS), a Redis or Valkey server every replica shares, which then also holds the read cache's shared tier and the forge's request budget.",
    what: "store",
    note: "",
};

pub const STORE_PASSWORD_FILE: Setting = Setting {
    flag: "store-password-file",
    value: Some("FILE"),
    env: &["FORGELENS_STORE_PASSWORD"],
    default: Default::Words("none"),
    help: "Read the shared store's password from this file; never in the URL or a flag. The variable holds the password itself.",
    what: "its password",
    note: "",
};

pub const STORE_CA_FILE: Setting = Setting {
    flag: "store-ca-file",
    value: Some("FILE"),
    env: &["FORGELENS_STORE_CA_FILE"],
    default: Default::Words("the public roots"),
    help: "Trust the certificates in this PEM file, instead of the public roots, for a rediss:// store: a store whose certificate a private authority signed.",
    what: "its certificate authority",
    note: "",
};

pub const STORE_TIMEOUT_MS: Setting = Setting {
    flag: "store-timeout-ms",
    value: Some("MS"),
    env: &["FORGELENS_STORE_TIMEOUT_MS"],
    default: Default::Number(1000),
    help: "Milliseconds one call to the shared store may take; past it a sign-in is refused with 503 and a personal-token request goes on without the shared cache and budget, rather than either waiting.",
    what: "shared store timeout",
    note: "",
};

pub const OAUTH_SCOPES: Setting = Setting {
    flag: "oauth-scopes",
    value: Some("S,S"),
    env: &["FORGELENS_OAUTH_SCOPES"],
    default: Default::Words(
        "every read and write scope but admin; read scopes only with --read-only",
    ),
    help: "The forge scopes a sign-in may ask for (read:repository, write:issue, …); a client asking for none gets all of these, and the forge is always asked for them by name.",
    what: "scopes offered",
    note: "",
};

pub const OAUTH_LOOPBACK_CLIENTS: Setting = Setting {
    flag: "oauth-loopback-clients",
    value: None,
    env: &["FORGELENS_OAUTH_LOOPBACK_CLIENTS"],
    default: Default::Words("off"),
    help: "Also accept client ID metadata documents served over http from this machine (127.0.0.1, localhost): for local development and tests, never for a shared server.",
    what: "clients on this machine",
    note: "",
};

/// The settings of the server, `read`, `call` and `list`, in the README's order.
pub const SERVE: &[&Setting] = &[
    &URL,
    &TOKEN_FILE,
    &READ_ONLY,
    &LOCKDOWN,
    &ALLOW_REPOS,
    &TOOLSETS,
    &DISABLED_TOOLS,
    &TIMEOUT,
    &MAX_UPSTREAM_REQUESTS,
    &FORGE_RATE,
    &CACHE_TTL_MS,
    &TOOL_SURFACE,
    &SUDO,
    &MAX_ANSWER_BYTES,
    &CATALOG,
    &CATALOG_FROM_INSTANCE,
    &CACHE_DIR,
    &RESOURCES,
    &TOOLS,
    &SEARCH,
    &LOG_LEVEL,
];

/// The settings of the Streamable HTTP server; each needs `--http`.
pub const SERVER: &[&Setting] = &[
    &HTTP,
    &ALLOW_REMOTE,
    &REQUIRE_CLIENT_TOKEN,
    &ALLOWED_HOSTS,
    &ALLOWED_ORIGINS,
    &MAX_BODY_BYTES,
    &MAX_CONCURRENT_REQUESTS,
    &MAX_CONNECTIONS,
    &HEADER_TIMEOUT,
    &REQUEST_TIMEOUT,
    &WRITE_TIMEOUT,
    &SESSIONS,
];

/// The settings of the OAuth sign-in (docs/remote.md); each needs `--http`, and all but
/// `--oauth` need `--oauth`.
pub const SIGN_IN: &[&Setting] = &[
    &OAUTH,
    &PUBLIC_URL,
    &FORGE_CLIENT_ID,
    &FORGE_CLIENT_SECRET_FILE,
    &OAUTH_KEY_FILE,
    &OAUTH_SCOPES,
    &OAUTH_LOOPBACK_CLIENTS,
];

/// The settings of the store (with `--http`): the sign-ins' file, or the store replicas share.
pub const STORE_SETTINGS: &[&Setting] = &[
    &STORE,
    &STORE_PASSWORD_FILE,
    &STORE_CA_FILE,
    &STORE_TIMEOUT_MS,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_and_variable_is_declared_once() {
        let all: Vec<&Setting> = SERVE
            .iter()
            .chain(SERVER)
            .chain(SIGN_IN)
            .chain(STORE_SETTINGS)
            .copied()
            .collect();
        let mut flags: Vec<&str> = all.iter().map(|s| s.flag).collect();
        let mut vars: Vec<&str> = all.iter().flat_map(|s| s.env.iter().copied()).collect();
        let (nflags, nvars) = (flags.len(), vars.len());
        flags.sort_unstable();
        flags.dedup();
        vars.sort_unstable();
        vars.dedup();
        assert_eq!((flags.len(), vars.len()), (nflags, nvars));
    }

    #[test]
    fn help_names_the_variables_and_the_default() {
        assert_eq!(
            TIMEOUT.help_text(),
            "Whole-request timeout towards the forge, in seconds. [env: FORGELENS_TIMEOUT] [default: 30]"
        );
        assert_eq!(
            table(&[&TOOL_SURFACE], false).lines().nth(2),
            Some(
                "| tools listed | `--tool-surface core\\|full` | `FORGELENS_TOOL_SURFACE` | core; the core tools and 5 meta-tools that reach the rest (docs/tool-surface.md) |"
            ),
            "a `|` in a cell is escaped"
        );
    }
}
