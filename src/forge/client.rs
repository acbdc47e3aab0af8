//! The HTTP client: the only code that talks to the forge.
//!
//! Rules it enforces for every request:
//!
//! - `Authorization: token …` (marked sensitive) when a token is given; `Sudo` when asked.
//! - In read-only mode, anything but GET is refused before it is sent.
//! - Redirects are followed by hand: only for GET, at most [`MAX_REDIRECTS`] hops, and only
//!   within the forge's API, each hop held to the allow-list; one leaving the API is an error
//!   (so credentials never travel elsewhere, and the forge cannot point this server at any
//!   address its network reaches).
//! - GETs are retried on 429 (when `Retry-After` fits the budget) and on 500/502/503/504, with
//!   exponential backoff and jitter; other methods are never retried.
//! - Each request waits for the token's [`Budget`] (`--forge-rate`, and the `Retry-After` of
//!   a `429`, shared by replicas through the store) when that wait fits the same bound;
//!   otherwise it is not sent, and the error says how long until it may be.
//! - Bodies are read in chunks and refused past the size cap, without buffering the rest.
//! - At most `max_in_flight` requests are in flight at once; the others wait, none is dropped.
//! - Identical GETs (same URL, token, `Accept` and `Sudo`) in flight at the same time are sent
//!   once; every caller gets the one answer. The request is dropped when its last caller is.
//! - Errors name the instance and the request, never a credential.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt as _;
use futures::future::{BoxFuture, Shared, WeakShared};

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::allow::AllowList;
use super::budget::{Admission, Budget, Rate};
use super::scope::Need;
use super::{
    Accept, Body, ForgeError, FormPart, FormValue, Method, Payload, Request, Response, Token,
};
use crate::store::redis::RedisStore;

/// Most redirect hops followed for one GET.
pub const MAX_REDIRECTS: usize = 5;
/// How much of an error body is kept for the message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// Longest excerpt of an unexpected body quoted in an error.
const EXCERPT_CHARS: usize = 200;

/// Settings of the client; the defaults are the documented ones.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The instance, e.g. `https://codeberg.org` (without `/api/v1`).
    pub base_url: Url,
    pub connect_timeout: Duration,
    /// Whole-request timeout: headers and body.
    pub timeout: Duration,
    /// Largest response body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Extra attempts for a retryable GET.
    pub max_retries: u32,
    /// First backoff delay; doubled on each retry, plus up to as much jitter.
    pub backoff: Duration,
    /// Longest `Retry-After` honoured by waiting; a longer one fails at once.
    pub max_retry_after: Duration,
    /// Refuse every method but GET.
    pub read_only: bool,
    /// Most requests in flight to the forge at once; more wait their turn.
    pub max_in_flight: usize,
    /// The repositories requests may be about (`--allow-repos`); `None` for all.
    pub allow: Option<AllowList>,
    /// Most requests per token and period (`--forge-rate`); `None`: as many as come.
    pub rate: Option<Rate>,
    /// The store replicas share, which keeps the budget for all of them.
    pub store: Option<Arc<RedisStore>>,
}

impl ClientOptions {
    pub fn new(base_url: Url) -> ClientOptions {
        ClientOptions {
            base_url,
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body_bytes: 8 * 1024 * 1024,
            max_retries: 2,
            backoff: Duration::from_millis(200),
            max_retry_after: Duration::from_secs(5),
            read_only: false,
            max_in_flight: 64,
            allow: None,
            rate: None,
            store: None,
        }
    }
}

/// The forge client: one connection pool per instance; cheap to clone.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    api: Url,
    options: ClientOptions,
    /// One permit per request in flight, so an agent cannot flood the forge.
    in_flight: Arc<tokio::sync::Semaphore>,
    /// The GETs in flight, for callers asking the same to join. Weak, so that a request whose
    /// callers all gave up is dropped rather than kept alive by this map.
    gets: Arc<Mutex<HashMap<GetKey, WeakShared<SharedGet>>>>,
    budget: Arc<Budget>,
}

type SharedGet = BoxFuture<'static, Result<Response, ForgeError>>;

/// What makes two GETs the same request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct GetKey {
    token: Option<Token>,
    path: String,
    query: Vec<(String, String)>,
    accept: Accept,
    sudo: Option<String>,
    /// Two readers of the same GET share its answer only when they read the same part of it:
    /// subsets are compared by identity (each endpoint's is built once).
    reads: Option<usize>,
}

/// One caller's part in a GET: its handle on the shared request. When the caller is done or
/// gives up, the GET leaves the in-flight map if it is answered or nobody else waits for it.
struct Waiting<'a> {
    gets: &'a Mutex<HashMap<GetKey, WeakShared<SharedGet>>>,
    key: GetKey,
    get: Option<Shared<SharedGet>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        // The handle goes first: when it was the last one, the request is dropped with it.
        drop(self.get.take());
        let mut gets = self.gets.lock().unwrap_or_else(|p| p.into_inner());
        let finished = gets
            .get(&self.key)
            .is_some_and(|weak| weak.upgrade().is_none_or(|get| get.peek().is_some()));
        if finished {
            gets.remove(&self.key);
        }
    }
}

impl Client {
    pub fn new(options: ClientOptions) -> Result<Client, ForgeError> {
        // TLS uses ring; a provider the embedding program installed first is kept (hence the
        // ignored result).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut default_headers = HeaderMap::new();
        default_headers.insert(
            header::USER_AGENT,
            HeaderValue::from_static(concat!("forgelens/", env!("CARGO_PKG_VERSION"))),
        );
        let mut builder = reqwest::Client::builder();
        // The platform's trust store costs milliseconds to load; a forge served over plain
        // HTTP never asks for it (requests go to its origin, and redirects are refused).
        if options.base_url.scheme() == "http" {
            builder = builder.tls_certs_only([]);
        }
        let http = builder
            .default_headers(default_headers)
            .connect_timeout(options.connect_timeout)
            .timeout(options.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| ForgeError::Connect {
                url: options.base_url.to_string(),
                detail: error_chain(&e),
            })?;
        let api = api_root(&options.base_url);
        let in_flight = Arc::new(tokio::sync::Semaphore::new(options.max_in_flight.max(1)));
        let mut budget = Budget::new(options.rate);
        if let Some(store) = &options.store {
            budget.share(store.clone());
        }
        Ok(Client {
            http,
            api,
            options,
            in_flight,
            gets: Arc::default(),
            budget: Arc::new(budget),
        })
    }

    /// The instance URL, for messages.
    pub fn instance(&self) -> &Url {
        &self.options.base_url
    }

    /// Whether only GET requests are sent (`--read-only`).
    pub fn read_only(&self) -> bool {
        self.options.read_only
    }

    /// The connection pool, for the forge's OAuth endpoints ([`super::oauth`]).
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends `request`, retrying a GET where that is safe; a GET identical to one in flight
    /// joins it instead.
    pub async fn send(
        &self,
        request: &Request,
        token: Option<&Token>,
    ) -> Result<Response, ForgeError> {
        if let Some(why) = self
            .options
            .allow
            .as_ref()
            .and_then(|a| a.request_refusal(request))
        {
            return Err(ForgeError::NotAllowed {
                request: request.describe(),
                why,
            });
        }
        let need = Need::of(request.method, &request.path);
        if let (Some(granted), Some(need)) = (token.and_then(Token::scopes), need)
            && !granted.allows(need)
        {
            return Err(ForgeError::Scope {
                request: request.describe(),
                needed: need.name(),
            });
        }
        if request.method != Method::Get {
            if self.options.read_only {
                return Err(ForgeError::ReadOnly {
                    request: request.describe(),
                });
            }
            return self.send_retrying(request, token).await;
        }
        let key = GetKey {
            token: token.cloned(),
            path: request.path.clone(),
            query: request.query.clone(),
            accept: request.accept,
            sudo: request.sudo.clone(),
            reads: request.reads.as_ref().map(|r| Arc::as_ptr(r) as usize),
        };
        let get = {
            let mut gets = self.gets.lock().unwrap_or_else(|p| p.into_inner());
            let joined = gets
                .get(&key)
                .and_then(WeakShared::upgrade)
                .filter(|get| get.peek().is_none());
            match joined {
                Some(get) => {
                    tracing::debug!(request = %request.describe(), "joined the same GET in flight");
                    get
                }
                None => {
                    let client = self.clone();
                    let (request, token) = (request.clone(), token.cloned());
                    let get: Shared<SharedGet> =
                        async move { client.send_retrying(&request, token.as_ref()).await }
                            .boxed()
                            .shared();
                    let weak = get
                        .downgrade()
                        .expect("a new shared future is not finished");
                    gets.insert(key.clone(), weak);
                    get
                }
            }
        };
        let mut waiting = Waiting {
            gets: &self.gets,
            key,
            get: Some(get),
        };
        let get = waiting.get.as_mut().expect("set just above");
        get.await
    }

    /// Sends `request` on its own, retrying a GET where that is safe.
    async fn send_retrying(
        &self,
        request: &Request,
        token: Option<&Token>,
    ) -> Result<Response, ForgeError> {
        let mut attempt = 0;
        let mut waited = Duration::ZERO;
        loop {
            self.wait_for_budget(request, token, &mut waited).await?;
            let result = {
                // Held for one attempt only: a retry's wait leaves room to others.
                let _permit = self
                    .in_flight
                    .acquire()
                    .await
                    .expect("the semaphore is never closed");
                self.send_once(request, token).await
            };
            let Err(error) = &result else { return result };
            let held = match error {
                ForgeError::Status {
                    status: 429,
                    retry_after: Some(wait),
                    ..
                } => self.budget.hold(token, *wait).await,
                _ => false,
            };
            let Some(delay) = self.retry_delay(request, error, attempt, waited) else {
                return result;
            };
            // A hold is waited out by the budget before the next attempt, for every request.
            let delay = if held { Duration::ZERO } else { delay };
            tracing::debug!(request = %request.describe(), attempt, ?delay, "retrying");
            tokio::time::sleep(delay).await;
            waited += delay;
            attempt += 1;
        }
    }

    /// Waits until the token's budget admits `request`, adding the wait to `waited`; a wait
    /// longer than `Retry-After` may take refuses it instead.
    async fn wait_for_budget(
        &self,
        request: &Request,
        token: Option<&Token>,
        waited: &mut Duration,
    ) -> Result<(), ForgeError> {
        loop {
            let admission = self.budget.admit(token).await;
            let wait = admission.wait();
            if wait.is_zero() {
                return Ok(());
            }
            if *waited + wait > self.options.max_retry_after {
                let why = match (admission, self.budget.rate()) {
                    (Admission::Spent(_), Some(rate)) => format!(
                        "this token sent the {} requests per {} s that --forge-rate allows",
                        rate.count,
                        rate.period.as_secs()
                    ),
                    _ => "the forge answered 429 for this token and asked every request to wait"
                        .to_owned(),
                };
                return Err(ForgeError::Budget {
                    request: request.describe(),
                    why,
                    wait,
                });
            }
            tracing::debug!(request = %request.describe(), ?wait, "waiting for the forge's budget");
            tokio::time::sleep(wait).await;
            *waited += wait;
        }
    }

    /// How long to wait before retrying, or `None` when the error is final.
    fn retry_delay(
        &self,
        request: &Request,
        error: &ForgeError,
        attempt: u32,
        waited: Duration,
    ) -> Option<Duration> {
        if request.method != Method::Get || attempt >= self.options.max_retries {
            return None;
        }
        match error {
            ForgeError::Status {
                status: 429,
                retry_after,
                ..
            } => {
                let wait = retry_after.unwrap_or(self.options.backoff);
                (waited + wait <= self.options.max_retry_after).then_some(wait)
            }
            ForgeError::Status {
                status: 500 | 502 | 503 | 504,
                ..
            } => {
                let base = self.options.backoff * 2u32.pow(attempt);
                Some(base + jitter(base))
            }
            _ => None,
        }
    }

    async fn send_once(
        &self,
        request: &Request,
        token: Option<&Token>,
    ) -> Result<Response, ForgeError> {
        let started = Instant::now();
        let mut url = self.url_for(request);
        for _ in 0..=MAX_REDIRECTS {
            let mut builder = self
                .http
                .request(reqwest_method(request.method), url.clone());
            builder = builder.header(
                header::ACCEPT,
                match request.accept {
                    Accept::Json => "application/json",
                    Accept::Text => "text/plain, */*",
                    Accept::Binary => "*/*",
                    Accept::Any => "application/json, text/plain;q=0.9, */*;q=0.8",
                },
            );
            if let Some(token) = token {
                builder = builder.header(header::AUTHORIZATION, self.authorization(token)?);
            }
            if let Some(sudo) = &request.sudo {
                builder = builder.header("Sudo", sudo.as_str());
            }
            builder = match &request.body {
                None => builder,
                Some(Payload::Json(body)) => builder.json(body),
                Some(Payload::Text(text)) => builder
                    .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
                    .body(text.clone()),
                // A form is consumed by sending, so each attempt builds its own.
                Some(Payload::Multipart(parts)) => builder.multipart(form(parts)),
            };
            let response = builder
                .send()
                .await
                .map_err(|e| self.transport_error(request, &e, token))?;
            let status = response.status();
            if status.is_redirection() {
                let raw = response
                    .headers()
                    .get(header::LOCATION)
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                    .unwrap_or_default();
                // What the forge (or a proxy) wrote there may carry the token back, or
                // credentials of its own: neither may reach a message or a log.
                let location = shown_location(&raw, token);
                let refuse = |why| ForgeError::Redirect {
                    request: request.describe(),
                    location: location.clone(),
                    why,
                };
                if request.method != Method::Get {
                    return Err(refuse("only GET requests follow redirects"));
                }
                let next = url
                    .join(&raw)
                    .map_err(|_| refuse("the location is not a URL"))?;
                // Followed only within the forge's API, each hop held to the allow-list like
                // any request: an API answer that moved elsewhere is not the forge's, and
                // following it would let the forge (or a proxy) make this server fetch any
                // address its network reaches.
                let Some(path) = self.api_path(&next) else {
                    return Err(refuse(
                        "redirects are followed only within the forge's API, and this one leaves it",
                    ));
                };
                if let Some(why) = self.options.allow.as_ref().and_then(|a| a.refusal(&path)) {
                    return Err(ForgeError::NotAllowed {
                        request: request.describe(),
                        why: format!("the forge redirected it to {location}, and {why}"),
                    });
                }
                url = next;
                continue;
            }
            let result = self.read(request, response, token).await;
            tracing::debug!(
                request = %request.describe(),
                status = status.as_u16(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "forge answered"
            );
            return result;
        }
        Err(ForgeError::Redirect {
            request: request.describe(),
            location: shown_location(url.as_str(), token),
            why: "too many redirects",
        })
    }

    /// The `Authorization` header of `token`, marked sensitive so no log shows it.
    fn authorization(&self, token: &Token) -> Result<HeaderValue, ForgeError> {
        let mut value =
            HeaderValue::from_str(&token.header_value()).map_err(|_| ForgeError::Connect {
                url: self.instance().to_string(),
                detail: "the token contains characters a header cannot carry".into(),
            })?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// Where the instance serves its API description: `{instance}/swagger.v1.json`.
    pub fn swagger_url(&self) -> Url {
        let mut url = self.options.base_url.clone();
        let path = format!("{}/swagger.v1.json", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url.set_query(None);
        url.set_fragment(None);
        url
    }

    /// Fetches a document outside the API (the API description) as text: one GET, redirects
    /// refused, the size cap and status classification as for API calls. The token goes only
    /// to the instance's own origin.
    pub async fn get_document(
        &self,
        url: &Url,
        token: Option<&Token>,
    ) -> Result<String, ForgeError> {
        let mut request = Request::get(url.path());
        request.accept = Accept::Text;
        let mut builder = self.http.get(url.clone());
        if let Some(token) = token.filter(|_| url.origin() == self.api.origin()) {
            builder = builder.header(header::AUTHORIZATION, self.authorization(token)?);
        }
        let response = builder
            .send()
            .await
            .map_err(|e| self.transport_error(&request, &e, token))?;
        if response.status().is_redirection() {
            return Err(ForgeError::Redirect {
                request: url.to_string(),
                location: response
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned(),
                why: "documents are fetched without following redirects",
            });
        }
        match self.read(&request, response, token).await?.body {
            Body::Text(text) => Ok(text),
            Body::Json(value) => Ok(value.to_string()),
            Body::Empty => Ok(String::new()),
        }
    }

    /// The path of `url` below the API root (`/repos/…`), when it is the forge's API.
    fn api_path(&self, url: &Url) -> Option<String> {
        if url.origin() != self.api.origin() {
            return None;
        }
        let root = self.api.path().trim_end_matches('/');
        let rest = url.path().strip_prefix(root)?;
        rest.starts_with('/').then(|| rest.to_owned())
    }

    fn url_for(&self, request: &Request) -> Url {
        let mut url = self.api.clone();
        // The path is already encoded segment by segment; appending keeps that encoding.
        let joined = format!("{}{}", url.path().trim_end_matches('/'), request.path);
        url.set_path(&joined);
        if !request.query.is_empty() {
            url.query_pairs_mut().extend_pairs(request.query.iter());
        }
        url
    }

    /// Reads an answer. Whatever the forge sends is scrubbed of the token the request carried
    /// before anything else sees it: a proxy or forge that echoes `Authorization` into a body
    /// must not hand the token to the agent, an error or a log.
    async fn read(
        &self,
        request: &Request,
        mut response: reqwest::Response,
        token: Option<&Token>,
    ) -> Result<Response, ForgeError> {
        let status = response.status();
        let headers = response.headers().clone();
        if !status.is_success() {
            let bytes = read_capped(&mut response, ERROR_BODY_LIMIT, true)
                .await
                .unwrap_or_default();
            let bytes = scrub(bytes, token);
            return Err(ForgeError::Status {
                status: status.as_u16(),
                request: request.describe(),
                message: error_message(status, &bytes),
                retry_after: retry_after(&headers),
            });
        }
        let limit = self.options.max_body_bytes;
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(ForgeError::TooLarge {
                request: request.describe(),
                limit,
            });
        }
        let bytes = read_capped(&mut response, limit, false)
            .await
            .map_err(|e| match e {
                ReadError::TooLarge => ForgeError::TooLarge {
                    request: request.describe(),
                    limit,
                },
                ReadError::Transport(e) => self.transport_error(request, &e, token),
            })?;
        let bytes = scrub(bytes, token);
        let body = if bytes.is_empty() || status == StatusCode::NO_CONTENT {
            Body::Empty
        } else {
            match request.accept {
                Accept::Json => {
                    Body::Json(
                        json_of(&bytes, request).map_err(|e| ForgeError::Unreadable {
                            request: request.describe(),
                            status: status.as_u16(),
                            detail: format!(
                                "expected JSON, got {} ({e}): {}",
                                content_type(&headers),
                                excerpt(&bytes)
                            ),
                        })?,
                    )
                }
                Accept::Text => Body::Text(String::from_utf8_lossy(&bytes).into_owned()),
                Accept::Binary => Body::Text(BASE64.encode(&bytes)),
                Accept::Any if content_type(&headers).contains("json") => Body::Json(
                    json_of(&bytes, request).map_err(|e| ForgeError::Unreadable {
                        request: request.describe(),
                        status: status.as_u16(),
                        detail: format!("its JSON does not parse ({e}): {}", excerpt(&bytes)),
                    })?,
                ),
                Accept::Any => Body::Text(String::from_utf8_lossy(&bytes).into_owned()),
            }
        };
        Ok(Response {
            status: status.as_u16(),
            total_count: headers
                .get("x-total-count")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse().ok()),
            has_next: link_has_next(&headers),
            body,
        })
    }

    /// What went wrong on the way, in words that name no credential: the error's causes name
    /// the URL asked, which after a redirect is the forge's choice and may carry the token.
    fn transport_error(
        &self,
        request: &Request,
        error: &reqwest::Error,
        token: Option<&Token>,
    ) -> ForgeError {
        let chain = |e: &reqwest::Error| scrub_text(&error_chain(e), token);
        let url = self.instance().to_string();
        if error.is_timeout() {
            ForgeError::Timeout {
                url,
                request: request.describe(),
                seconds: self.options.timeout.as_secs(),
            }
        } else if error.is_connect() {
            let mut detail = chain(error);
            // What rustls says when it reads a plain-HTTP answer as TLS.
            if url.starts_with("https:") && detail.contains("InvalidContentType") {
                detail.push_str(" (the forge seems to speak plain HTTP here: use an http:// URL)");
            }
            ForgeError::Connect { url, detail }
        } else {
            ForgeError::Broken {
                request: request.describe(),
                detail: chain(error),
            }
        }
    }
}

enum ReadError {
    TooLarge,
    Transport(reqwest::Error),
}

/// Reads the body chunk by chunk; past `limit` it stops (or, when `truncate`, keeps the start).
async fn read_capped(
    response: &mut reqwest::Response,
    limit: usize,
    truncate: bool,
) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Transport)? {
        if bytes.len() + chunk.len() > limit {
            if truncate {
                bytes.extend_from_slice(&chunk[..limit - bytes.len()]);
                return Ok(bytes);
            }
            return Err(ReadError::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// `https://host/prefix` → `https://host/prefix/api/v1`.
fn api_root(base: &Url) -> Url {
    let mut api = base.clone();
    let path = format!("{}/api/v1", base.path().trim_end_matches('/'));
    api.set_path(&path);
    api.set_query(None);
    api.set_fragment(None);
    api
}

/// The multipart form of `parts`, files with their names and a generic content type.
fn form(parts: &[FormPart]) -> reqwest::multipart::Form {
    parts
        .iter()
        .fold(reqwest::multipart::Form::new(), |form, part| {
            match &part.value {
                FormValue::Text(text) => form.text(part.name.clone(), text.clone()),
                FormValue::File { bytes, filename } => form.part(
                    part.name.clone(),
                    reqwest::multipart::Part::bytes(bytes.clone()).file_name(filename.clone()),
                ),
            }
        })
}

fn reqwest_method(method: Method) -> reqwest::Method {
    match method {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
    }
}

/// `bytes` with every occurrence of the token replaced by `***`: written as it is, or with any
/// of its characters escaped as JSON (`\u0067`, `\/`), percent-encoded (`%67`) or written as an
/// HTML character reference (`&#x67;`, `&#103;`), so that no way of echoing it hands it on.
pub(crate) fn scrub(bytes: Vec<u8>, token: Option<&Token>) -> Vec<u8> {
    let Some(secret) = token.map(Token::secret).map(str::as_bytes) else {
        return bytes;
    };
    let Some(&first) = secret.first() else {
        return bytes;
    };
    // Only a byte that can start the secret, plain or escaped, is looked at; memchr skips to
    // the next one, since most bodies hold no candidate for long stretches.
    let after = |from: usize, next: &dyn Fn(&[u8]) -> Option<usize>| {
        next(&bytes[from..]).map_or(bytes.len(), |at| from + at)
    };
    let plain = |rest: &[u8]| memchr::memchr(first, rest);
    let escape = |rest: &[u8]| memchr::memchr3(b'\\', b'%', b'&', rest);
    let (mut next_plain, mut next_escape) = (after(0, &plain), after(0, &escape));
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    loop {
        let at = next_plain.min(next_escape);
        if at >= bytes.len() {
            break;
        }
        let resume = match encoded_at(&bytes, at, secret) {
            Some(end) => {
                let out = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
                out.extend_from_slice(&bytes[copied..at]);
                out.extend_from_slice(b"***");
                copied = end;
                end
            }
            None => at + 1,
        };
        if next_plain < resume {
            next_plain = after(resume, &plain);
        }
        if next_escape < resume {
            next_escape = after(resume, &escape);
        }
    }
    match out {
        Some(mut out) => {
            out.extend_from_slice(&bytes[copied..]);
            out
        }
        None => bytes,
    }
}

/// Where the secret, each of its characters written plainly or escaped, ends when it starts at
/// `start`.
fn encoded_at(bytes: &[u8], start: usize, secret: &[u8]) -> Option<usize> {
    let mut at = start;
    for &wanted in secret {
        at += one_char_at(&bytes[at..], wanted)?;
    }
    Some(at)
}

/// How many bytes at the start of `rest` spell the character `wanted`, if they do.
fn one_char_at(rest: &[u8], wanted: u8) -> Option<usize> {
    let first = *rest.first()?;
    if first.eq(&wanted) {
        return Some(1);
    }
    let hex = |digits: &[u8]| -> Option<u32> {
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let is = |code: Option<u32>| code == Some(u32::from(wanted));
    match first {
        b'\\' if rest.get(1) == Some(&b'u') && rest.len() >= 6 && is(hex(&rest[2..6])) => Some(6),
        b'\\' if rest.get(1) == Some(&wanted) && wanted == b'/' => Some(2),
        b'%' if rest.len() >= 3 && is(hex(&rest[1..3])) => Some(3),
        b'&' if rest.get(1) == Some(&b'#') => {
            let (digits_at, radix) = match rest.get(2) {
                Some(b'x' | b'X') => (3, 16),
                _ => (2, 10),
            };
            let len = rest[digits_at..]
                .iter()
                .take(8)
                .take_while(|b| match radix {
                    16 => b.is_ascii_hexdigit(),
                    _ => b.is_ascii_digit(),
                })
                .count();
            let digits = std::str::from_utf8(&rest[digits_at..digits_at + len]).ok()?;
            let code = u32::from_str_radix(digits, radix).ok();
            let end = digits_at + len;
            (len > 0 && rest.get(end) == Some(&b';') && is(code)).then_some(end + 1)
        }
        _ => None,
    }
}

/// `text` with the token scrubbed as [`scrub`] does.
fn scrub_text(text: &str, token: Option<&Token>) -> String {
    String::from_utf8_lossy(&scrub(text.as_bytes().to_vec(), token)).into_owned()
}

/// A `Location` as messages may show it: the token scrubbed and credentials dropped.
fn shown_location(location: &str, token: Option<&Token>) -> String {
    let scrubbed = scrub(location.as_bytes().to_vec(), token);
    let text = String::from_utf8_lossy(&scrubbed);
    let text = match Url::parse(&text) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        _ => text.into_owned(),
    };
    super::printable(&text)
}

/// The forge's own message from an error body (`{"message": …}` and friends), else an excerpt;
/// control characters escaped, so a newline in it cannot start a fake log line.
fn error_message(status: StatusCode, bytes: &[u8]) -> String {
    super::printable(&raw_error_message(status, bytes))
}

fn raw_error_message(status: StatusCode, bytes: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) {
        let mut parts = Vec::new();
        if let Some(m) = value
            .get("message")
            .and_then(|m| m.as_str())
            .filter(|m| !m.is_empty())
        {
            parts.push(m.to_owned());
        }
        if let Some(errors) = value.get("errors").and_then(|e| e.as_array()) {
            for e in errors {
                match e {
                    serde_json::Value::String(s) if !s.is_empty() => parts.push(s.clone()),
                    serde_json::Value::Object(_) => parts.push(e.to_string()),
                    _ => {}
                }
            }
        }
        if !parts.is_empty() {
            return parts.join("; ");
        }
    }
    if bytes.is_empty() {
        status.canonical_reason().unwrap_or("no message").to_owned()
    } else {
        excerpt(bytes)
    }
}

/// The first characters of a body, whitespace folded and control characters escaped; a body
/// that is not text is described, not quoted.
fn excerpt(bytes: &[u8]) -> String {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => text,
        _ => return format!("{} bytes that are not text", bytes.len()),
    };
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = folded.chars().take(EXCERPT_CHARS).collect();
    if folded.chars().count() > EXCERPT_CHARS {
        out.push('…');
    }
    super::printable(&out)
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no content type")
        .to_owned()
}

/// `Retry-After` as seconds or as an HTTP date (a date in the past is no wait at all).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(text).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Whether the `Link` header has a `rel="next"` link; `None` without a `Link` header.
fn link_has_next(headers: &HeaderMap) -> Option<bool> {
    let mut seen = false;
    for value in headers.get_all(header::LINK) {
        seen = true;
        let Ok(text) = value.to_str() else { continue };
        for link in text.split(',') {
            let has_next = link.split(';').skip(1).any(|param| {
                let param = param.trim().to_ascii_lowercase();
                param == "rel=\"next\"" || param == "rel=next"
            });
            if has_next {
                return Some(true);
            }
        }
    }
    seen.then_some(false)
}

/// Up to `base` of pseudo-random extra delay, so retries of many callers spread out.
fn jitter(base: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    base.mul_f64(f64::from(nanos % 1000) / 1000.0)
}

/// An error and its causes on one line (reqwest's own message hides the useful cause).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(e) = source {
        let s = e.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        source = e.source();
    }
    parts.join(": ")
}

/// A successful answer's JSON: the part of it the request's reader uses when it says, else all.
fn json_of(bytes: &[u8], request: &Request) -> serde_json::Result<serde_json::Value> {
    let reads = request
        .reads
        .as_deref()
        .unwrap_or(&super::subset::Subset::Whole);
    super::subset::parse(bytes, reads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_root_keeps_a_path_prefix() {
        let cases = [
            ("https://codeberg.org", "https://codeberg.org/api/v1"),
            ("https://example.com/git/", "https://example.com/git/api/v1"),
            ("http://127.0.0.1:3000/", "http://127.0.0.1:3000/api/v1"),
        ];
        for (base, api) in cases {
            assert_eq!(api_root(&Url::parse(base).unwrap()).as_str(), api, "{base}");
        }
    }

    #[test]
    fn link_header_next() {
        let mut h = HeaderMap::new();
        assert_eq!(link_has_next(&h), None);
        h.insert(
            header::LINK,
            HeaderValue::from_static("<https://x/api/v1/a?page=1>; rel=\"first\""),
        );
        assert_eq!(link_has_next(&h), Some(false));
        h.append(
            header::LINK,
            HeaderValue::from_static(
                "<https://x/api/v1/a?page=3>; rel=\"next\",<https://x/a?page=9>; rel=\"last\"",
            ),
        );
        assert_eq!(link_has_next(&h), Some(true));
    }

    #[test]
    fn error_messages_come_from_the_forge() {
        let cases: &[(&[u8], &str)] = &[
            (br#"{"message":"token does not have at least one of required scope(s): [read:repository]","url":"x"}"#,
             "token does not have at least one of required scope(s): [read:repository]"),
            (br#"{"message":"","errors":["title is required"]}"#, "title is required"),
            (b"<html><body>Bad   Gateway</body></html>", "<html><body>Bad Gateway</body></html>"),
            (b"", "Not Found"),
        ];
        for (body, expected) in cases {
            assert_eq!(error_message(StatusCode::NOT_FOUND, body), *expected);
        }
    }

    #[test]
    fn the_token_is_scrubbed_however_it_is_written() {
        let token = Token::new("good-token-01").unwrap();
        let cases: &[(&str, &str)] = &[
            ("x good-token-01 y", "x *** y"),
            (r#"{"t":"\u0067ood-token-01"}"#, r#"{"t":"***"}"#),
            ("a=%67%6F%6fd%2Dtoken-01&b", "a=***&b"),
            ("&#x67;ood-token-&#48;1.", "***."),
            ("good-token-0", "good-token-0"),
            (r"\n\u0067 %zz &#;", r"\n\u0067 %zz &#;"),
        ];
        for (text, expected) in cases {
            let scrubbed = scrub(text.as_bytes().to_vec(), Some(&token));
            assert_eq!(String::from_utf8(scrubbed).unwrap(), *expected, "{text}");
        }
        assert_eq!(
            shown_location("https://u:p@evil.example/x?t=good-token-01", Some(&token)),
            "https://evil.example/x?t=***"
        );
    }

    /// The scrub as first written: every byte offset tried in turn.
    fn scrub_at_every_offset(bytes: &[u8], secret: &[u8]) -> Vec<u8> {
        let (mut out, mut i) = (Vec::new(), 0);
        while i < bytes.len() {
            match encoded_at(bytes, i, secret) {
                Some(end) => {
                    out.extend_from_slice(b"***");
                    i = end;
                }
                None => {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn skipping_to_candidates_scrubs_what_every_offset_would(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "tok", "t", "o", "k", "%74", "%6F", "\\u0074", "&#116;", "&#x6b;", "\\", "%",
                    "&", "&#", "x", " ", "tt", "%7",
                ]),
                0..40,
            ),
        ) {
            let body = pieces.concat();
            let token = Token::new("tok").unwrap();
            proptest::prop_assert_eq!(
                scrub(body.as_bytes().to_vec(), Some(&token)),
                scrub_at_every_offset(body.as_bytes(), b"tok")
            );
        }
    }

    #[test]
    fn urls_keep_segment_encoding() {
        let client = Client::new(ClientOptions::new(
            Url::parse("http://127.0.0.1:1/x").unwrap(),
        ))
        .unwrap();
        let mut request = Request::get("/repos/a%2Fb/r%20s/raw/docs/a%3F.md");
        request.query = vec![("ref".into(), "feature/x y".into())];
        assert_eq!(
            client.url_for(&request).as_str(),
            "http://127.0.0.1:1/x/api/v1/repos/a%2Fb/r%20s/raw/docs/a%3F.md?ref=feature%2Fx+y"
        );
    }
}
