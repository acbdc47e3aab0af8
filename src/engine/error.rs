//! Errors of a read or a call, and the one table that turns them into wire errors.
//!
//! Every failure resolves to one [`Reason`]. Which upstream status gives which reason, which
//! JSON-RPC code each reason has on the wire, and the hint shown with it are declared in the
//! `errors:` block of `resources.yaml` and compiled into an [`ErrorTable`]; only `mcp/` turns the
//! result into protocol types.

use std::collections::HashMap;
use std::fmt;

use thiserror::Error;

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
    #[error("{0}")]
    InvalidParams(String),
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

impl Error {
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidParams(message.into())
    }

    /// The upstream status behind the error, when there is one.
    pub fn upstream_status(&self) -> Option<u16> {
        match self {
            Error::Forge(e) => e.status(),
            _ => None,
        }
    }
}

/// The compiled `errors:` block.
#[derive(Debug, Clone)]
pub struct ErrorTable {
    exact: HashMap<u16, Reason>,
    /// By status class (index 4 for 4xx, 5 for 5xx).
    classes: [Option<Reason>; 6],
    codes: HashMap<Reason, i32>,
    hints: HashMap<Reason, String>,
}

impl ErrorTable {
    pub fn new(
        exact: HashMap<u16, Reason>,
        classes: [Option<Reason>; 6],
        codes: HashMap<Reason, i32>,
        hints: HashMap<Reason, String>,
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
            Error::Forge(ForgeError::ReadOnly { .. } | ForgeError::NotAllowed { .. }) => {
                Reason::Forbidden
            }
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

    /// The message shown for an error: what happened, then what to do about it.
    pub fn message(&self, error: &Error) -> String {
        let reason = self.reason(error);
        let mut message = error.to_string().trim_end_matches('.').to_owned();
        if let Error::Forge(ForgeError::Status {
            retry_after: Some(wait),
            ..
        }) = error
        {
            message.push_str(&format!(". Retry after {} seconds", wait.as_secs().max(1)));
        }
        // forgelens's own refusals say what to do; the forge's hints would mislead there.
        let own = matches!(
            error,
            Error::Forge(ForgeError::ReadOnly { .. } | ForgeError::NotAllowed { .. })
        );
        if let Some(hint) = self.hints.get(&reason).filter(|_| !own) {
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
        let hints = HashMap::from([(Reason::RateLimited, "Slow down.".to_owned())]);
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
    fn rate_limit_message_says_when() {
        let m = table().message(&status(429, Some(Duration::from_secs(30))));
        assert_eq!(
            m,
            "the forge answered 429 to GET /x: m. Retry after 30 seconds. Slow down."
        );
    }
}
