//! The forge: requests to a Forgejo or Gitea instance's `/api/v1`, and what comes back.
//!
//! The data types here ([`Request`], [`Response`], [`ForgeError`]) are what the engine plans and
//! reads; [`Client`] is the one place that speaks HTTP: authentication, `Sudo`, timeouts,
//! retries, redirects, the response-size cap and status classification. Nothing here knows MCP
//! or the manifests.

pub mod allow;
pub mod budget;
mod client;
pub mod oauth;
pub mod scope;
pub mod subset;
mod token;

use std::time::Duration;

pub use client::{Client, ClientOptions};
use serde_json::Value;
use thiserror::Error;
pub use token::Token;

/// HTTP methods the manifests may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn parse(s: &str) -> Option<Method> {
        Some(match s {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// How the body of a response is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Accept {
    #[default]
    Json,
    /// Raw text (a file's content, a diff, a log).
    Text,
    /// Any bytes (an archive), returned base64-encoded as text.
    Binary,
    /// JSON when the answer says it is JSON, text otherwise.
    Any,
}

/// What a request sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A JSON document (`application/json`).
    Json(Value),
    /// Plain text (`text/plain`).
    Text(String),
    /// A `multipart/form-data` form.
    Multipart(Vec<FormPart>),
}

/// One part of a multipart form.
#[derive(Debug, Clone, PartialEq)]
pub struct FormPart {
    pub name: String,
    pub value: FormValue,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FormValue {
    Text(String),
    /// A file upload: its bytes and the file name the form gives it.
    File {
        bytes: Vec<u8>,
        filename: String,
    },
}

/// One upstream request, fully expanded: the path is encoded and relative to `/api/v1`.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: Method,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub body: Option<Payload>,
    pub accept: Accept,
    /// Act as this user (`Sudo` header; needs an admin token).
    pub sudo: Option<String>,
    /// The caller chose the path freely (a generated tool, the escape hatch): with a
    /// repository allow-list, only a listed repository's path may be sent.
    pub free_path: bool,
    /// The part of a JSON answer that its reader uses ([`subset`]); `None` for all of it.
    pub reads: Option<std::sync::Arc<subset::Subset>>,
}

impl Request {
    pub fn get(path: impl Into<String>) -> Request {
        Request {
            method: Method::Get,
            path: path.into(),
            query: Vec::new(),
            body: None,
            accept: Accept::Json,
            sudo: None,
            free_path: false,
            reads: None,
        }
    }

    /// `GET /path?query` as shown in messages and logs (never with credentials).
    pub fn describe(&self) -> String {
        let mut s = format!("{} {}", self.method.as_str(), self.path);
        for (i, (k, v)) in self.query.iter().enumerate() {
            s.push(if i == 0 { '?' } else { '&' });
            s.push_str(&printable(k));
            s.push('=');
            s.push_str(&printable(v));
        }
        s
    }
}

/// A successful upstream answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    /// `X-Total-Count`, when the forge sent it.
    pub total_count: Option<u64>,
    /// Whether a `Link` header had `rel="next"`; `None` when there was no `Link` header.
    pub has_next: Option<bool>,
    pub body: Body,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Json(Value),
    Text(String),
    /// 204 and other bodiless answers.
    Empty,
}

impl Body {
    /// The body as JSON (`null` when empty; a string when it was text).
    pub fn into_json(self) -> Value {
        match self {
            Body::Json(v) => v,
            Body::Text(t) => Value::String(t),
            Body::Empty => Value::Null,
        }
    }

    /// The body as JSON without taking it; only text is copied.
    pub fn as_json(&self) -> std::borrow::Cow<'_, Value> {
        match self {
            Body::Json(v) => std::borrow::Cow::Borrowed(v),
            Body::Text(t) => std::borrow::Cow::Owned(Value::String(t.clone())),
            Body::Empty => std::borrow::Cow::Owned(Value::Null),
        }
    }
}

/// Why an upstream request failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ForgeError {
    /// The forge answered with an error status.
    #[error("the forge answered {status} to {request}: {message}")]
    Status {
        status: u16,
        request: String,
        /// The forge's own message (from its JSON error body) or a short excerpt of the body.
        message: String,
        /// How long the forge asked us to wait (429), when it said.
        retry_after: Option<Duration>,
    },
    #[error("could not reach the forge at {url}: {detail}")]
    Connect { url: String, detail: String },
    #[error("the forge at {url} did not answer {request} within {seconds}s")]
    Timeout {
        url: String,
        request: String,
        seconds: u64,
    },
    #[error("the forge's answer to {request} is larger than the {limit}-byte cap")]
    TooLarge { request: String, limit: usize },
    #[error("unexpected response to {request} (status {status}): {detail}")]
    Unreadable {
        request: String,
        status: u16,
        detail: String,
    },
    /// The connection failed after it was made (reset, broken body): no status to report.
    #[error("the connection to the forge broke during {request}: {detail}")]
    Broken { request: String, detail: String },
    #[error("the forge redirected {request} to {location}; {why}")]
    Redirect {
        request: String,
        location: String,
        why: &'static str,
    },
    #[error("read-only mode: {request} was not sent (only GET requests leave the process)")]
    ReadOnly { request: String },
    #[error("{request} was not sent: {why}")]
    NotAllowed { request: String, why: String },
    #[error(
        "{request} was not sent: it needs the scope {needed}, which this sign-in was not granted; sign in again asking for it"
    )]
    Scope { request: String, needed: String },
    /// The token's budget is spent (`--forge-rate`, or the forge asked every replica to
    /// wait): nothing was sent.
    #[error("{request} was not sent: {why}")]
    Budget {
        request: String,
        why: String,
        wait: Duration,
    },
}

impl ForgeError {
    /// The upstream status, when the forge answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ForgeError::Status { status, .. } | ForgeError::Unreadable { status, .. } => {
                Some(*status)
            }
            _ => None,
        }
    }
}

/// `text` with each control character written as an escape (`\n`, `\u{1b}`).
pub(crate) fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| match c {
            c if c.is_control() => c.escape_default().collect(),
            c => c.to_string(),
        })
        .collect()
}
