//! Errors of a read or a call, and the one table that turns them into wire errors.
//!
//! Every failure resolves to one [`Reason`]. Which upstream status gives which reason, which
//! JSON-RPC code each reason has on the wire, and the hint shown with it are declared in the
//! `errors:` block of `resources.yaml` and compiled into an [`ErrorTable`]; only `mcp/` turns the
//! result into protocol types.

use std::collections::HashMap;
use std::fmt;

use thiserror::Error;

use serde_json::Value;

use super::request::ExpandError;
use super::schema::Violation;
use super::untrusted::{Rendering, neutralize};
use super::uri::UriError;
use crate::forge::ForgeError;

/// What went wrong, in the five words clients can rely on (`data.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    InvalidParams,
    Forbidden,
    NotFound,
    RateLimited,
    UpstreamError,
}

impl Reason {
    pub const ALL: [Reason; 5] = [
        Reason::InvalidParams,
        Reason::Forbidden,
        Reason::NotFound,
        Reason::RateLimited,
        Reason::UpstreamError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::InvalidParams => "invalid_params",
            Reason::Forbidden => "forbidden",
            Reason::NotFound => "not_found",
            Reason::RateLimited => "rate_limited",
            Reason::UpstreamError => "upstream_error",
        }
    }

    pub fn parse(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed read or call.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// The caller's mistake, found before any upstream request.
    #[error(transparent)]
    InvalidParams(Box<Invalid>),
    /// The forge failed or refused.
    #[error(transparent)]
    Forge(#[from] ForgeError),
    /// The forge answered, but not with the entity asked for (a parent check failed).
    #[error("{0}")]
    NotFound(String),
    /// A read was assembled without an answer it planned: a caller that skipped
    /// [`Read::follow_up`](super::resource::Read::follow_up), not the forge.
    #[error("the read is missing the answer to {0}")]
    Unanswered(&'static str),
}

/// What the caller got wrong; every kind says how to put it right.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Invalid {
    #[error("invalid URI `{}`: {why}", echo(.uri))]
    Uri { uri: String, why: UriError },
    #[error("no resource matches `{}`; the nearest URI templates: {nearest}", echo(.uri))]
    NoResource { uri: String, nearest: String },
    #[error("resource `{resource}` is not offered here: {why}")]
    Withheld { resource: String, why: String },
    #[error("`{name}`: {why}")]
    Encoding { name: String, why: UriError },
    #[error("unknown query parameter `{name}` for {template}; accepted: {accepted}")]
    UnknownQuery {
        name: String,
        template: String,
        accepted: String,
    },
    #[error("`{name}` {why}; got `{value}` (template {template})")]
    Variable {
        name: String,
        why: Violation,
        value: String,
        template: String,
    },
    #[error("cannot build the upstream request: {0}")]
    Request(ExpandError),
    #[error("end_line {end} is before start_line {start}")]
    Backwards { start: u64, end: u64 },
    #[error("start_line {start} is past the end: the text has {total} lines")]
    PastTheEnd { start: u64, total: u64 },
    #[error("start_byte {byte} is past the end of line {line}, which has {len} bytes")]
    PastTheLine { byte: u64, line: u64, len: usize },
    #[error("the diff has no file `{wanted}`; its files: {files}")]
    NoSuchFile { wanted: String, files: String },
    #[error("argument `sudo` must be a user name (letters, digits, `_`, `.`, `-`), not {0}")]
    Sudo(Value),
    #[error("argument `{name}` must be {range}, not {value}")]
    Paging {
        name: &'static str,
        range: String,
        value: Value,
    },
    #[error("unknown argument `{name}` for {tool}; it takes: {takes}")]
    UnknownArgument {
        name: String,
        tool: String,
        takes: String,
    },
    #[error("missing required argument `{0}`")]
    MissingArgument(String),
    #[error(
        "argument `{arg}`: {missing} is not {what}, so the forge left it out.{there} The call went through without it: the answer holds {held}"
    )]
    Unconfirmed {
        arg: String,
        missing: String,
        what: String,
        there: String,
        held: String,
    },
    #[error("argument `{name}` is given twice (once as `{alias}`); give it once")]
    ArgumentTwice { name: String, alias: String },
    #[error("argument `{name}` {why}")]
    Argument { name: String, why: Violation },
    #[error("argument `{name}` is not base64: {why}")]
    NotBase64 { name: String, why: String },
    #[error("argument {0}")]
    ArgumentRequest(ExpandError),
    /// The manifest's words for an answer that shows the wrong target was given (a file's path
    /// to a directory listing).
    #[error("{0}")]
    WrongTarget(String),
    #[error("markdown of {resource} failed: {why}")]
    Markdown {
        resource: String,
        why: crate::engine::render::TemplateError,
    },
    #[error("the arguments of {tool} {why}")]
    MetaArguments { tool: String, why: Violation },
    #[error("describe_tools takes 1 to {max} names, not {given}")]
    DescribeCount { max: usize, given: usize },
}

impl From<Invalid> for Error {
    fn from(invalid: Invalid) -> Error {
        // Boxed: the kinds carry text, and every `Result` of the engine carries an `Error`.
        Error::InvalidParams(Box::new(invalid))
    }
}

impl Error {
    /// The upstream status behind the error, when there is one.
    pub fn upstream_status(&self) -> Option<u16> {
        match self {
            Error::Forge(e) => e.status(),
            _ => None,
        }
    }
}

/// The most bytes of an error's own text (the forge's message, the caller's value) a message
/// shows; the hint comes after. Far below the smallest answer budget (4 KiB).
pub const MAX_ERROR_TEXT: usize = 1500;

/// `text` cut to at most `max` bytes on a character boundary, saying how much it had.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [cut: {} bytes in all]", &text[..end], text.len())
}

/// A caller's value as a message may repeat it: control characters escaped, at most
/// [`MAX_ECHO`] bytes.
pub fn echo(text: &str) -> String {
    crate::forge::printable(&cut(text, MAX_ECHO))
}

/// The most bytes of a caller's value a message repeats.
pub const MAX_ECHO: usize = 200;

/// Where an error happened, for the hint that fits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Situation {
    /// A tool call (the arguments were wrong), rather than a read (the URI was).
    pub tool: bool,
    pub token: TokenFrom,
}

/// Whose token a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenFrom {
    /// The server's configured token (`FORGEJO_TOKEN`, `--token-file`).
    #[default]
    Configured,
    /// An HTTP client's own `Authorization`.
    Client,
    /// None at all.
    None,
}

/// A situation a hint may be written for, in the manifest's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    Tool,
    Resource,
    ClientToken,
    ConfiguredToken,
    NoToken,
    /// The forge could not be reached at all (no answer, a name that does not resolve).
    Unreachable,
}

impl Case {
    pub const NAMES: &'static [&'static str] = &[
        "tool",
        "resource",
        "client_token",
        "configured_token",
        "no_token",
        "unreachable",
    ];

    pub fn parse(name: &str) -> Option<Case> {
        Some(match name {
            "tool" => Case::Tool,
            "resource" => Case::Resource,
            "client_token" => Case::ClientToken,
            "configured_token" => Case::ConfiguredToken,
            "no_token" => Case::NoToken,
            "unreachable" => Case::Unreachable,
            _ => return None,
        })
    }

    fn fits(self, error: &Error, situation: Situation) -> bool {
        match self {
            Case::Tool => situation.tool,
            Case::Resource => !situation.tool,
            Case::ClientToken => situation.token == TokenFrom::Client,
            Case::ConfiguredToken => situation.token == TokenFrom::Configured,
            Case::NoToken => situation.token == TokenFrom::None,
            Case::Unreachable => matches!(error, Error::Forge(ForgeError::Connect { .. })),
        }
    }
}

/// The hints of one reason: one for each situation, and one for the rest.
#[derive(Debug, Clone, Default)]
pub struct Hints {
    pub default: Option<String>,
    pub cases: Vec<(Case, String)>,
}

/// The compiled `errors:` block.
#[derive(Debug, Clone)]
pub struct ErrorTable {
    exact: HashMap<u16, Reason>,
    /// By status class (index 4 for 4xx, 5 for 5xx).
    classes: [Option<Reason>; 6],
    codes: HashMap<Reason, i32>,
    hints: HashMap<Reason, Hints>,
}

impl ErrorTable {
    pub fn new(
        exact: HashMap<u16, Reason>,
        classes: [Option<Reason>; 6],
        codes: HashMap<Reason, i32>,
        hints: HashMap<Reason, Hints>,
    ) -> ErrorTable {
        ErrorTable {
            exact,
            classes,
            codes,
            hints,
        }
    }

    /// The reason of an error.
    pub fn reason(&self, error: &Error) -> Reason {
        match error {
            Error::InvalidParams(_) => Reason::InvalidParams,
            Error::NotFound(_) => Reason::NotFound,
            Error::Forge(ForgeError::Status { status, .. }) => self.reason_for_status(*status),
            Error::Forge(ForgeError::Budget { .. }) => self.reason_for_status(429),
            Error::Forge(
                ForgeError::ReadOnly { .. }
                | ForgeError::NotAllowed { .. }
                | ForgeError::Scope { .. },
            ) => Reason::Forbidden,
            Error::Forge(_) | Error::Unanswered(_) => Reason::UpstreamError,
        }
    }

    /// The reason of an upstream status: exact entry, else its class, else `upstream_error`.
    pub fn reason_for_status(&self, status: u16) -> Reason {
        self.exact
            .get(&status)
            .copied()
            .or_else(|| {
                self.classes
                    .get(usize::from(status / 100))
                    .copied()
                    .flatten()
            })
            .unwrap_or(Reason::UpstreamError)
    }

    /// The JSON-RPC code of a reason.
    pub fn code(&self, reason: Reason) -> i32 {
        self.codes.get(&reason).copied().unwrap_or(-32603)
    }

    /// The code sent for a reason: the table's, except that a request of the 2026-07-28
    /// revision or later (`modern`) never gets one of the legacy codes (-32000 to -32019)
    /// that revision retired: it gets -32602 (invalid params), as that revision answers a
    /// resource it cannot serve. `data.reason` still says which it was.
    pub fn wire_code(&self, reason: Reason, modern: bool) -> i32 {
        match self.code(reason) {
            -32019..=-32000 if modern => -32602,
            code => code,
        }
    }

    /// The message shown for an error: what happened, then what to do about it. What the
    /// forge or the caller wrote in it is made visible like any text of the forge and cut to
    /// [`MAX_ERROR_TEXT`] bytes, so that an error is never larger than an answer may be.
    pub fn message(&self, error: &Error) -> String {
        self.message_in(error, Situation::default())
    }

    /// [`ErrorTable::message`] with the hint that fits where the error happened.
    pub fn message_in(&self, error: &Error, situation: Situation) -> String {
        let reason = self.reason(error);
        let text = error.to_string();
        let text = neutralize(&text, Rendering::Plain, "");
        let mut message = cut(text.trim_end_matches('.'), MAX_ERROR_TEXT);
        if let Error::Forge(
            ForgeError::Status {
                retry_after: Some(wait),
                ..
            }
            | ForgeError::Budget { wait, .. },
        ) = error
        {
            message.push_str(&format!(". Retry after {} seconds", wait.as_secs().max(1)));
        }
        // forgelens's own refusals say what to do; the forge's hints would mislead there.
        let own = matches!(
            error,
            Error::Forge(
                ForgeError::ReadOnly { .. }
                    | ForgeError::NotAllowed { .. }
                    | ForgeError::Scope { .. }
                    | ForgeError::Budget { .. }
            )
        );
        let hint = self.hints.get(&reason).filter(|_| !own).and_then(|hints| {
            hints
                .cases
                .iter()
                .find(|(case, _)| case.fits(error, situation))
                .map(|(_, text)| text)
                .or(hints.default.as_ref())
        });
        if let Some(hint) = hint {
            message.push_str(". ");
            message.push_str(hint);
        }
        message
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn table() -> ErrorTable {
        let exact = HashMap::from([
            (401, Reason::Forbidden),
            (404, Reason::NotFound),
            (429, Reason::RateLimited),
        ]);
        let mut classes = [None; 6];
        classes[4] = Some(Reason::UpstreamError);
        let codes = HashMap::from([(Reason::NotFound, -32003), (Reason::Forbidden, -32002)]);
        let hints = HashMap::from([
            (
                Reason::RateLimited,
                Hints {
                    default: Some("Slow down.".to_owned()),
                    cases: Vec::new(),
                },
            ),
            (
                Reason::Forbidden,
                Hints {
                    default: Some("Set FORGEJO_TOKEN.".to_owned()),
                    cases: vec![(Case::ClientToken, "Send another token.".to_owned())],
                },
            ),
        ]);
        ErrorTable::new(exact, classes, codes, hints)
    }

    fn status(status: u16, retry_after: Option<Duration>) -> Error {
        Error::Forge(ForgeError::Status {
            status,
            request: "GET /x".into(),
            message: "m".into(),
            retry_after,
        })
    }

    #[test]
    fn statuses_map_exact_then_class() {
        let t = table();
        let cases = [
            (401, Reason::Forbidden),
            (404, Reason::NotFound),
            (409, Reason::UpstreamError),
            (503, Reason::UpstreamError),
        ];
        for (s, r) in cases {
            assert_eq!(t.reason(&status(s, None)), r, "{s}");
        }
        assert_eq!(t.code(Reason::NotFound), -32003);
        assert_eq!(
            t.code(Reason::UpstreamError),
            -32603,
            "a reason without a code is an internal error"
        );
    }

    #[test]
    fn a_huge_error_is_cut_and_its_hidden_text_shown() {
        let huge = Error::Forge(ForgeError::Status {
            status: 500,
            request: "GET /x".into(),
            message: format!("a\u{202e}b{}", "x".repeat(60_000)),
            retry_after: None,
        });
        let m = table().message(&huge);
        assert!(m.len() < 2048, "{} bytes", m.len());
        assert!(
            m.contains("a\\u{202e}b") && m.contains("[cut: "),
            "{}",
            &m[..200]
        );
    }

    #[test]
    fn the_hint_fits_the_situation() {
        let t = table();
        let client = Situation {
            tool: true,
            token: TokenFrom::Client,
        };
        assert!(
            t.message_in(&status(401, None), client)
                .ends_with("Send another token.")
        );
        assert!(
            t.message(&status(401, None))
                .ends_with("Set FORGEJO_TOKEN.")
        );
    }

    #[test]
    fn rate_limit_message_says_when() {
        let m = table().message(&status(429, Some(Duration::from_secs(30))));
        assert_eq!(
            m,
            "the forge answered 429 to GET /x: m. Retry after 30 seconds. Slow down."
        );
    }
}
