//! The Streamable HTTP transport: rmcp's server transport at `/mcp`, wrapped in what a shared
//! deployment needs, beside `/healthz` and `/readyz`.
//!
//! A request to `/mcp` passes, outermost first:
//!
//! 1. the log layer: one line per request (method, MCP method, status, duration, where its
//!    token came from), never a header's value;
//! 2. the guard: the concurrency limit (POSTs only), the credentials, the body-size limit;
//! 3. rmcp's `StreamableHttpService`: the `Host`/`Origin` checks against DNS rebinding, the
//!    protocol (stateless 2026-07-28 requests, and the older revisions with or without
//!    sessions), and finally the same [`Server`] handler stdio uses.
//!
//! Credentials never outlive their request: the guard reads `Authorization` with
//! [`client_token`] and stores its verdict, a [`RequestToken`], in that request's extensions;
//! rmcp hands the request's `http::request::Parts` to the handler through the request context,
//! and the handler uses that token, and no other, for that request's upstream calls.
//!
//! Each connection holds a slot ([`slots`]) and gets three deadlines: hyper's header timeout,
//! the request deadline (a request's headers and body must arrive within it, or it gets 408)
//! and the write deadline (an answer the client reads nothing of closes the connection), the
//! last two in [`deadline`]. At the cap, a new connection makes the one idle longest give way.
//!
//! Shutdown (SIGTERM or ctrl-c) stops accepting connections, waits for the requests in flight
//! (at most [`SHUTDOWN_GRACE`]), then ends rmcp's event streams and sessions.

mod authority;
mod deadline;
mod door;
mod slots;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::StreamExt;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use thiserror::Error;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use self::deadline::{Arriving, LateBody, WriteDeadline};
use self::door::Door;
use self::slots::{GiveWay, InProgress, Slot, Slots, Tracker};
use super::Server;
use super::convert::{self, Refusal};
use crate::config::{HttpConfig, LOOPBACK_HOSTS};
use crate::forge::Token;
use crate::oauth::Authority;
use crate::service::Service;
use crate::store::Store as _;

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";
/// How long the requests in flight get to finish after SIGTERM or ctrl-c.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// How long one answer of the forge to `GET /version` keeps `/readyz` green.
pub const READY_FRESH: Duration = Duration::from_secs(30);
/// Longest wait for the forge during a readiness probe; probes of load balancers time out
/// in seconds, and a late "yes" is worth no more than a "no".
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the HTTP server stopped or never started.
#[derive(Debug, Error)]
pub enum HttpError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
    #[error("the OAuth sign-in cannot start: {0}")]
    OAuth(#[from] crate::oauth::StartError),
}

/// Why a request's credentials were refused (401).
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum AuthError {
    #[error("the Authorization header must be `token <T>` or `Bearer <T>`")]
    Malformed,
    #[error("a request may carry one Authorization header, not several")]
    Repeated,
    #[error("this server requires a token of your own: send `Authorization: Bearer <forge token>`")]
    Missing,
}

/// The token a request's `Authorization` header carries: `token <T>` or `Bearer <T>`, the
/// scheme in any case; `None` without the header. Anything else is refused rather than
/// ignored: falling back to the configured token would act with someone else's rights.
pub fn client_token(headers: &HeaderMap) -> Result<Option<Token>, AuthError> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(AuthError::Repeated);
    }
    let text = value.to_str().map_err(|_| AuthError::Malformed)?;
    let (scheme, rest) = text
        .trim()
        .split_once([' ', '\t'])
        .ok_or(AuthError::Malformed)?;
    if !scheme.eq_ignore_ascii_case("token") && !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::Malformed);
    }
    let rest = rest.trim();
    if rest.contains(char::is_whitespace) {
        return Err(AuthError::Malformed);
    }
    Token::new(rest).map(Some).ok_or(AuthError::Malformed)
}

/// The token settled for one HTTP request; the guard puts it in the request's extensions and
/// the handler takes it from there.
#[derive(Debug, Clone)]
pub(crate) struct RequestToken {
    token: Option<Token>,
    source: TokenSource,
    /// What the handler found out about a signed-in request's token, for the guard to answer
    /// with the right status and challenge.
    outcome: Arc<std::sync::OnceLock<Outcome>>,
}

/// Why a signed-in request's answer is a challenge rather than a plain answer.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    /// It needed this scope, which the sign-in lacks: `403 insufficient_scope`.
    Scope(String),
    /// The forge refused the user's token (`401`): the sign-in is over.
    ForgeRefused,
}

impl RequestToken {
    fn new(token: Option<Token>, source: TokenSource) -> RequestToken {
        RequestToken {
            token,
            source,
            outcome: Arc::default(),
        }
    }

    pub(crate) fn token(&self) -> Option<&Token> {
        self.token.as_ref()
    }

    /// Tells the guard how the request ended, when it was signed in through OAuth.
    pub(crate) fn note(&self, outcome: Outcome) {
        if matches!(self.source, TokenSource::SignedIn) {
            let _ = self.outcome.set(outcome);
        }
    }

    /// Whose token it is, for the hint an error gives.
    pub(crate) fn from(&self) -> crate::engine::error::TokenFrom {
        use crate::engine::error::TokenFrom;
        match self.source {
            TokenSource::Client | TokenSource::SignedIn => TokenFrom::Client,
            TokenSource::Configured => TokenFrom::Configured,
            TokenSource::Anonymous => TokenFrom::None,
        }
    }
}

/// Where a request's token came from, for the log line.
#[derive(Debug, Clone, Copy)]
enum TokenSource {
    /// The request's own `Authorization` header.
    Client,
    /// The server's configured token.
    Configured,
    /// No token at all.
    Anonymous,
    /// A forgelens access token of an OAuth sign-in, standing for the user's forge token.
    SignedIn,
}

impl TokenSource {
    fn as_str(self) -> &'static str {
        match self {
            TokenSource::Client => "client",
            TokenSource::Configured => "configured",
            TokenSource::Anonymous => "anonymous",
            TokenSource::SignedIn => "oauth",
        }
    }
}

/// What the guard learned about a request, handed to the log layer on the response.
#[derive(Debug, Clone)]
struct Trace {
    mcp_method: String,
    auth: &'static str,
}

/// Serves MCP over Streamable HTTP until SIGTERM or ctrl-c, then drains and returns.
pub async fn serve(service: Arc<Service>, config: &HttpConfig) -> Result<(), HttpError> {
    let bind_error = |source| HttpError::Bind {
        addr: config.addr,
        source,
    };
    let listener = door::bind(config.addr).map_err(bind_error)?;
    let local = listener.local_addr().map_err(HttpError::Serve)?;
    let door = Door::new(listener).map_err(HttpError::Serve)?;
    let streams = CancellationToken::new();
    let permits = Arc::new(Semaphore::new(config.max_concurrent_requests));
    let authority = match &config.oauth {
        Some(oauth) => Some(Arc::new(
            Authority::start(
                oauth,
                service.forge().clone(),
                service.shared_store().cloned(),
            )
            .map_err(HttpError::OAuth)?,
        )),
        None => None,
    };
    let app = router(
        service.clone(),
        config,
        streams.clone(),
        permits.clone(),
        authority,
    );
    warn_about_exposure(config, &service);
    warn_about_descriptors(config);
    // Printed whatever the log filter says: scripts and tests read the bound port here.
    eprintln!("forgelens: listening on http://{local}{MCP_PATH}");
    super::announce(&service, &format!("HTTP at http://{local}{MCP_PATH}"));
    let stopping = CancellationToken::new();
    tokio::spawn(drain_on_signal(
        stopping.clone(),
        streams,
        permits,
        config.max_concurrent_requests,
    ));
    let slots = Slots::new(config.max_connections);
    let mut http1 = hyper::server::conn::http1::Builder::new();
    // One timer covers a slow sender and an idle keep-alive connection: it runs whenever the
    // server waits for a request's headers, from the connection's opening or its last answer.
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout);
    let app = TowerToHyperService::new(app);
    // The listener still looks ready after an accept, until one finds its queue empty. Until
    // then a newcomer may or may not be waiting, so only a connection idle since before that
    // accept may give way: at worst one that has waited a while goes with nobody behind it,
    // never one that just answered or just came.
    let mut unconfirmed = None;
    loop {
        let knocked = tokio::select! {
            knocked = door.knocked() => knocked,
            () = stopping.cancelled() => break,
        };
        if let Err(error) = knocked {
            tracing::warn!("cannot watch the listening socket: {error}");
            tokio::time::sleep(ACCEPT_BACKOFF).await;
            continue;
        }
        // Before the slot is taken: the connection it holds counts as idle since then.
        let accepting = tokio::time::Instant::now();
        // A slot first, then the connection: at the cap, it stays in the listen queue, taking
        // no descriptor, while an idle connection gives way (or, none idle, until one frees).
        let Some(slot) = slots.take() else {
            slots.make_room(unconfirmed);
            tokio::select! {
                () = slots.changed() => {}
                () = stopping.cancelled() => break,
            }
            continue;
        };
        let stream = match door.accept().await {
            None => {
                unconfirmed = None;
                continue;
            }
            Some(Ok(stream)) => stream,
            Some(Err(error)) => {
                // Out of descriptors, most likely: back off instead of spinning.
                tracing::warn!("cannot accept a connection: {error}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        unconfirmed = Some(accepting);
        let io = TokioIo::new(WriteDeadline::new(stream, config.write_timeout));
        let service = ConnectionService {
            app: app.clone(),
            tracker: slot.tracker(),
            request_timeout: config.request_timeout,
        };
        let connection = http1.serve_connection(io, service);
        tokio::spawn(run_connection(connection, slot, stopping.clone()));
    }
    drop(door);
    tokio::select! {
        () = all_closed(&slots) => {}
        () = past_deadline(stopping) => {
            tracing::warn!("connections still open after the grace period; stopping anyway");
        }
    }
    tracing::info!("stopped");
    Ok(())
}

/// How long to wait after a failed `accept` before the next one.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// How long a connection that gave way, having answered before, gets to flush that answer
/// before its socket is dropped: enough for a client that reads, short for the one waiting.
const EVICT_GRACE: Duration = Duration::from_secs(1);

/// A connection as hyper serves it, over its write deadline.
type HttpConnection = hyper::server::conn::http1::Connection<
    TokioIo<WriteDeadline<tokio::net::TcpStream>>,
    ConnectionService,
>;

/// Serves one connection, then frees its slot, once its socket is closed.
async fn run_connection(connection: HttpConnection, slot: Slot, stopping: CancellationToken) {
    drive(connection, &slot, stopping).await;
    drop(slot);
}

/// Drives one connection until it ends, gives way to a newcomer, or shutdown closes it.
async fn drive(connection: HttpConnection, slot: &Slot, stopping: CancellationToken) {
    let mut connection = std::pin::pin!(connection);
    // One go first: a request already sent is then in progress, before the connection could
    // be taken for idle.
    if let Poll::Ready(ended) = futures::poll!(connection.as_mut()) {
        return log_end(ended);
    }
    slot.mark_read();
    let (mut evicted, mut stopped) = (false, false);
    let mut cut_at = None;
    loop {
        tokio::select! {
            ended = connection.as_mut() => return log_end(ended),
            () = slot.evicted(), if !evicted => {
                evicted = true;
                match slot.give_way() {
                    GiveWay::Now => return,
                    GiveWay::AfterFlush => {
                        connection.as_mut().graceful_shutdown();
                        cut_at = Some(tokio::time::Instant::now() + EVICT_GRACE);
                    }
                    GiveWay::AfterRequest => connection.as_mut().graceful_shutdown(),
                }
            }
            () = stopping.cancelled(), if !stopped => {
                stopped = true;
                connection.as_mut().graceful_shutdown();
            }
            () = sleep_until(cut_at) => return,
        }
    }
}

fn log_end(ended: hyper::Result<()>) {
    if let Err(error) = ended {
        tracing::debug!("connection ended: {error}");
    }
}

/// Resolves at `at`; never without one.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Resolves once every connection is closed.
async fn all_closed(slots: &Slots) {
    while slots.open() > 0 {
        slots.changed().await;
    }
}

/// Says at start-up that the descriptor limit lowered `--max-connections`.
fn warn_about_descriptors(config: &HttpConfig) {
    if let Some(lowered) = config.lowered {
        tracing::warn!(
            "--max-connections {} is beyond what the descriptor limit ({}, ulimit -n) leaves \
             once {} are kept for the forge and the server itself; serving at most {} \
             connections",
            lowered.asked,
            lowered.limit,
            lowered.spare,
            config.max_connections
        );
    }
}

/// The service of one connection: the application, with the connection's slot told when a
/// request starts and when its answer is finished, and the request deadline on the body.
#[derive(Clone)]
struct ConnectionService {
    app: TowerToHyperService<Router>,
    tracker: Tracker,
    request_timeout: Duration,
}

impl hyper::service::Service<Request<Incoming>> for ConnectionService {
    type Response = Response<Answer>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Answer>, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let (in_progress, since) = self.tracker.start();
        // From the connection's opening or its previous answer, as the header timeout runs.
        let deadline = since + self.request_timeout;
        if deadline <= tokio::time::Instant::now() {
            let late = too_late(self.request_timeout);
            return Box::pin(std::future::ready(Ok(Answer::wrap(late, in_progress))));
        }
        let request = request.map(|body| Body::new(Arriving::new(body, deadline)));
        let answered = hyper::service::Service::call(&self.app, request);
        Box::pin(async move {
            let response = answered.await?;
            Ok(Answer::wrap(response, in_progress))
        })
    }
}

/// A response body that keeps its connection busy until it is finished or dropped.
struct Answer {
    body: Body,
    in_progress: Option<InProgress>,
}

impl Answer {
    fn wrap(response: Response, in_progress: InProgress) -> Response<Answer> {
        response.map(|body| Answer {
            body,
            in_progress: Some(in_progress),
        })
    }
}

impl hyper::body::Body for Answer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            self.in_progress = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The whole application: `/mcp` behind the guard, the probes, and the log layer over all.
fn router(
    service: Arc<Service>,
    config: &HttpConfig,
    streams: CancellationToken,
    permits: Arc<Semaphore>,
    authority: Option<Arc<Authority>>,
) -> Router {
    let transport = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(config.sessions)
        // A plain JSON answer to a plain request: proxies need not understand event streams.
        .with_json_response(true)
        // rmcp reads an empty list as "any host", which is what `--allowed-hosts '*'` means.
        .with_allowed_hosts(config.allowed_hosts.clone())
        .with_allowed_origins(config.allowed_origins.clone())
        .enforce_origin_validation()
        // The guard enforces the limit first, with its own message; this is the backstop.
        .with_max_request_body_bytes(config.max_body_bytes)
        .with_cancellation_token(streams);
    let handler = Server::new(service.clone());
    let mcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        transport,
    );
    let guard = Guard {
        service: service.clone(),
        require_client_token: config.require_client_token,
        max_body_bytes: config.max_body_bytes,
        max_concurrent_requests: config.max_concurrent_requests,
        request_timeout: config.request_timeout,
        permits,
        body_budget: Arc::new(Semaphore::new(body_budget(config))),
        authority: authority.clone(),
    };
    let readiness = Arc::new(Readiness {
        service,
        signs_in: authority.is_some(),
        last_answer: Mutex::new(None),
    });
    let sign_in = authority.map(|a| a.routes()).unwrap_or_default();
    Router::new()
        .route_service(MCP_PATH, mcp)
        // `route_layer` covers the routes added so far: `/mcp` only, not the probes.
        .route_layer(middleware::from_fn_with_state(guard, guard_mcp))
        .merge(sign_in)
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move || {
                let readiness = readiness.clone();
                async move { readiness.answer().await }
            }),
        )
        .layer(middleware::from_fn(log_request))
}

/// Bytes of request bodies held in memory at once: as many whole bodies as requests are
/// served at once (64 MiB by default). Bodies are read before a request counts as in progress,
/// so this, and not the concurrency limit, bounds what slow senders make the server hold.
fn body_budget(config: &HttpConfig) -> usize {
    config
        .max_concurrent_requests
        .saturating_mul(config.max_body_bytes)
        .min(Semaphore::MAX_PERMITS)
}

/// What the guard needs to know.
#[derive(Clone)]
struct Guard {
    service: Arc<Service>,
    require_client_token: bool,
    max_body_bytes: usize,
    max_concurrent_requests: usize,
    request_timeout: Duration,
    permits: Arc<Semaphore>,
    /// Bytes of request bodies in memory, received or waiting for their handler.
    body_budget: Arc<Semaphore>,
    /// The OAuth sign-in (`--oauth`): every request's token is checked by it.
    authority: Option<Arc<Authority>>,
}

impl Guard {
    /// The token this request acts with: its own, else the configured one unless a token of
    /// the client's own is required. With OAuth, only a valid forgelens access token, which
    /// stands for its user's forge token.
    async fn settle(&self, headers: &HeaderMap) -> Result<RequestToken, Response> {
        if let Some(authority) = &self.authority {
            let bearer = client_token(headers).map_err(|_| {
                authority::challenge_response(authority, &crate::oauth::Refused::Forged)
            })?;
            let signed = authority
                .verify(bearer.as_ref().map(Token::secret))
                .await
                .map_err(|refused| authority::challenge_response(authority, &refused))?;
            tracing::debug!(user = %signed.subject, "signed-in request");
            return Ok(RequestToken::new(Some(signed.token), TokenSource::SignedIn));
        }
        let unauthorized = |error: AuthError| {
            refusal(
                StatusCode::UNAUTHORIZED,
                format!("Unauthorized: {error}"),
                Some((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"forgelens\""),
                )),
            )
        };
        match client_token(headers).map_err(unauthorized)? {
            Some(token) => Ok(RequestToken::new(Some(token), TokenSource::Client)),
            None if self.require_client_token => Err(unauthorized(AuthError::Missing)),
            None => Ok(match self.service.token() {
                Some(token) => RequestToken::new(Some(token.clone()), TokenSource::Configured),
                None => RequestToken::new(None, TokenSource::Anonymous),
            }),
        }
    }
}

async fn guard_mcp(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    if let Err(why) = one_target(&request) {
        return refusal(StatusCode::BAD_REQUEST, format!("Bad Request: {why}"), None);
    }
    let settled = match guard.settle(request.headers()).await {
        Ok(settled) => settled,
        Err(refused) => return refused,
    };
    let auth = settled.source.as_str();
    let modern = is_modern(request.headers());
    let (mut parts, body) = request.into_parts();
    let mut mcp_method = "-".to_owned();
    // Held until the handler is done with the body, so bodies in memory stay within budget.
    let mut buffered = None;
    let body = if parts.method == Method::POST {
        match read_capped(
            &parts.headers,
            body,
            guard.max_body_bytes,
            &guard.body_budget,
        )
        .await
        {
            Ok((bytes, _)) if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err() => {
                return parse_error();
            }
            Ok((bytes, held)) => {
                mcp_method = peek_method(&bytes);
                // The stateless revision has no `initialize`: its request is for a method this
                // server does not serve, which that revision answers with 404.
                if modern && mcp_method == "initialize" {
                    return method_not_found(request_id(&bytes), "initialize");
                }
                buffered = held;
                Body::from(bytes)
            }
            Err(BodyError::TooLarge) => {
                return refusal(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "Payload Too Large: the request body is larger than the {}-byte limit \
                         (--max-body-bytes)",
                        guard.max_body_bytes
                    ),
                    None,
                );
            }
            Err(BodyError::Late) => return too_late(guard.request_timeout),
            Err(BodyError::OverBudget) => return over_budget(),
            Err(BodyError::Unreadable(detail)) => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    format!("Bad Request: the request body could not be read: {detail}"),
                    None,
                );
            }
        }
    } else {
        body
    };
    // Only a POST makes the server work, and only once its body is in: one still arriving is
    // bounded by the request deadline and the body budget, not by this limit, so slow senders
    // cannot take every place. A GET is an event stream that may stay open for minutes
    // (sessions only) and would pin a place doing nothing.
    let permit = if parts.method == Method::POST {
        match guard.permits.clone().try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) => return busy(&guard),
        }
    } else {
        None
    };
    let outcome = settled.outcome.clone();
    let granted = settled.token.as_ref().and_then(Token::scopes);
    let bearer = client_token(&parts.headers).ok().flatten();
    parts.extensions.insert(settled);
    let deleting = parts.method == Method::DELETE;
    let mut response = next.run(Request::from_parts(parts, body)).await;
    drop(buffered);
    if let (Some(authority), Some(outcome)) = (&guard.authority, outcome.get()) {
        authority::after(authority, outcome, granted, bearer.as_ref(), &mut response).await;
    }
    // rmcp answers a session's DELETE with 202, which clients of the older revisions (both
    // Python SDKs among them) read as a failure: the session is gone, so say 204.
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    // A method the stateless revision does not have is a 404 there, said in one form.
    if modern && !MODERN_METHODS.contains(&mcp_method.as_str()) {
        response = as_method_not_found(response).await;
    }
    let mut response = match permit {
        Some(permit) => hold_until_sent(response, permit),
        None => response,
    };
    response.extensions_mut().insert(Trace { mcp_method, auth });
    response
}

/// What the 2026-07-28 revision's requests may ask of this server; any other method is one it
/// does not serve.
const MODERN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
];

/// Whether a request speaks the stateless revision (2026-07-28 or later), by its
/// `MCP-Protocol-Version` header.
fn is_modern(headers: &HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|version| version.trim() >= MODERN_REVISION)
}

/// The first revision whose requests stand alone.
const MODERN_REVISION: &str = "2026-07-28";

/// The id of a JSON-RPC request body, `null` when it has none.
fn request_id(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(serde_json::Value::Null)
}

/// The 404 a stateless request for a method this server does not serve gets.
fn method_not_found(id: serde_json::Value, method: &str) -> Response {
    let refusal = Refusal::MethodNotFound(method.to_owned());
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": refusal.to_json()});
    let mut response = (StatusCode::NOT_FOUND, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An answer that is a JSON-RPC `-32601` made a 404, its message in the one form; any other
/// answer unchanged. Read whole: such an answer is one small JSON object.
async fn as_method_not_found(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error: the answer could not be read".into(),
            None,
        );
    };
    let mut answer: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(answer) => answer,
        Err(_) => return Response::from_parts(parts, Body::from(bytes)),
    };
    let Some(error) = answer.get_mut("error").filter(|e| e["code"] == -32601) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    if let Some(message) = error["message"].as_str() {
        error["message"] =
            serde_json::Value::String(convert::method_not_found_message(message).into_owned());
    }
    parts.status = StatusCode::NOT_FOUND;
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(answer.to_string()))
}

/// Refuses a request whose target is ambiguous: the `Host`/`Origin` checks against DNS
/// rebinding read one `Host` and one `Origin`, so a second of either, or an absolute-form
/// target naming another authority than `Host` (which a server must prefer to `Host`), would
/// let a request past them that it was not meant for.
fn one_target(request: &Request) -> Result<(), &'static str> {
    let headers = request.headers();
    if headers.get_all(header::HOST).iter().nth(1).is_some() {
        return Err("a request carries one Host header, not several");
    }
    if headers.get_all(header::ORIGIN).iter().nth(1).is_some() {
        return Err("a request carries at most one Origin header");
    }
    if let Some(authority) = request.uri().authority() {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        if !host.is_some_and(|h| h.eq_ignore_ascii_case(authority.as_str())) {
            return Err("the request target names another host than the Host header");
        }
    }
    Ok(())
}

/// The 503 of a POST over `--max-concurrent-requests`. Its body was read first: answering
/// before it arrived and then closing would reset the connection under the client's retry.
fn busy(guard: &Guard) -> Response {
    refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "Service Unavailable: {} requests are already in progress \
             (--max-concurrent-requests); retry shortly",
            guard.max_concurrent_requests
        ),
        Some((header::RETRY_AFTER, HeaderValue::from_static("1"))),
    )
}

/// The 503 of a body that would take the bodies being received past their budget; the rest
/// of it is not read, so the connection is closed.
fn over_budget() -> Response {
    let mut response = refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "Service Unavailable: the request bodies being received already fill their memory \
         budget (--max-concurrent-requests times --max-body-bytes); retry shortly"
            .to_owned(),
        Some((header::RETRY_AFTER, HeaderValue::from_static("1"))),
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The 408 of a request that did not arrive whole within `--request-timeout`. The connection
/// is closed after it: the rest of that request may still be on its way.
fn too_late(timeout: Duration) -> Response {
    refusal(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "Request Timeout: the request did not arrive whole within {}s (--request-timeout)",
            timeout.as_secs()
        ),
        Some((header::CONNECTION, HeaderValue::from_static("close"))),
    )
}

/// A body that is not JSON: 400 with JSON-RPC's parse error, which a client can read whatever
/// it made of the request.
fn parse_error() -> Response {
    let refusal = Refusal::Parse("the request body is not JSON".into());
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": refusal.to_json()});
    let mut response = (StatusCode::BAD_REQUEST, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A plain-text refusal, so a person reading a proxy log or a curl output sees what to do.
fn refusal(
    status: StatusCode,
    message: String,
    extra: Option<(header::HeaderName, HeaderValue)>,
) -> Response {
    let mut response = (status, format!("{message}\n")).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if let Some((name, value)) = extra {
        response.headers_mut().insert(name, value);
    }
    response
}

/// Keeps the concurrency slot until the response body is sent (or dropped): an answer sent
/// as an event stream is still work in progress after its headers leave.
fn hold_until_sent(response: Response, permit: OwnedSemaphorePermit) -> Response {
    let (parts, body) = response.into_parts();
    let stream = body.into_data_stream().map(move |chunk| {
        let _slot = &permit;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

enum BodyError {
    TooLarge,
    /// The request deadline passed first.
    Late,
    /// The bodies being received would go past their budget.
    OverBudget,
    Unreadable(String),
}

/// Reads a body of at most `limit` bytes, refusing a larger one without reading it all. Each
/// chunk takes its size from `budget`, which the returned permit holds until dropped.
async fn read_capped(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    budget: &Arc<Semaphore>,
) -> Result<(Bytes, Option<OwnedSemaphorePermit>), BodyError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    let mut collected = Vec::new();
    let mut held: Option<OwnedSemaphorePermit> = None;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            let e = e.into_inner();
            match e.is::<LateBody>() {
                true => BodyError::Late,
                false => BodyError::Unreadable(e.to_string()),
            }
        })?;
        if chunk.len() > limit - collected.len() {
            return Err(BodyError::TooLarge);
        }
        let size = u32::try_from(chunk.len()).map_err(|_| BodyError::TooLarge)?;
        let taken = budget
            .clone()
            .try_acquire_many_owned(size)
            .map_err(|_| BodyError::OverBudget)?;
        match &mut held {
            Some(held) => held.merge(taken),
            None => held = Some(taken),
        }
        collected.extend_from_slice(&chunk);
    }
    Ok((Bytes::from(collected), held))
}

/// The JSON-RPC method of a request body, for the log; `-` when there is none (a response, a
/// notification batch, not JSON) and `?` when it is not a plain method name, so a client
/// cannot write arbitrary text into the log.
fn peek_method(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Peek {
        method: Option<String>,
    }
    match serde_json::from_slice::<Peek>(body)
        .ok()
        .and_then(|p| p.method)
    {
        None => "-".to_owned(),
        Some(m)
            if !m.is_empty()
                && m.len() <= 64
                && m.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '.' | '-')) =>
        {
            m
        }
        Some(_) => "?".to_owned(),
    }
}

/// One line per request. The probes log at debug: a load balancer asks every few seconds.
async fn log_request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let (mcp_method, auth) = response
        .extensions()
        .get::<Trace>()
        .map_or(("-", "-"), |t| (t.mcp_method.as_str(), t.auth));
    let status = response.status().as_u16();
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if path == "/healthz" || path == "/readyz" {
        tracing::debug!(%method, %path, status, duration_ms, "http request");
    } else {
        tracing::info!(%method, %path, %mcp_method, status, duration_ms, %auth, "http request");
    }
    response
}

/// `/readyz`: the forge answered `GET /version` within [`READY_FRESH`]. With a shared
/// store, it must answer too under `--oauth` (sign-ins cannot be served without it); with
/// personal tokens the server stays ready without it, and says so.
struct Readiness {
    service: Arc<Service>,
    signs_in: bool,
    /// When the forge last answered. Behind a lock so that a burst of probes asks the forge
    /// once, not once each.
    last_answer: Mutex<Option<Instant>>,
}

impl Readiness {
    async fn answer(&self) -> Response {
        let store = match self.service.shared_store() {
            Some(store) => store.check().await.err(),
            None => None,
        };
        if let (Some(error), true) = (&store, self.signs_in) {
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {error}"),
                None,
            );
        }
        let ready = match &store {
            None => "ready\n".to_owned(),
            Some(error) => format!("ready, without the shared cache and rate budget: {error}\n"),
        };
        let mut last = self.last_answer.lock().await;
        if last.is_some_and(|at| at.elapsed() < READY_FRESH) {
            return (StatusCode::OK, ready).into_response();
        }
        let outcome = tokio::time::timeout(PROBE_TIMEOUT, self.service.probe()).await;
        match outcome {
            Ok(Ok(())) => {
                *last = Some(Instant::now());
                (StatusCode::OK, ready).into_response()
            }
            Ok(Err(error)) => {
                tracing::warn!("not ready: {error}");
                refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("not ready: {error}"),
                    None,
                )
            }
            Err(_) => {
                tracing::warn!("not ready: the forge did not answer within {PROBE_TIMEOUT:?}");
                refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "not ready: the forge did not answer GET /version within {}s",
                        PROBE_TIMEOUT.as_secs()
                    ),
                    None,
                )
            }
        }
    }
}

/// Says at start-up what an operator must know about who can reach the server and as whom.
fn warn_about_exposure(config: &HttpConfig, service: &Service) {
    if config.remote {
        tracing::warn!(
            addr = %config.addr,
            "serving beyond loopback: anyone who can reach this address can use forgelens; \
             put a TLS-terminating proxy in front of it"
        );
        if service.token().is_some() && !config.require_client_token {
            tracing::warn!(
                "requests without a token of their own act with the configured token, for \
                 anyone who can reach this address; consider --require-client-token"
            );
        }
        if config.allowed_hosts == LOOPBACK_HOSTS {
            tracing::warn!(
                "only loopback Host names are accepted; set --allowed-hosts to the names \
                 clients use to reach this server"
            );
        }
    }
    if config.allowed_hosts.is_empty() {
        tracing::warn!(
            "--allowed-hosts '*': any Host is accepted, so DNS rebinding is not blocked"
        );
    }
}

/// Waits for SIGTERM or ctrl-c, then stops accepting, lets the requests in flight finish and
/// ends the event streams and sessions that would otherwise hold their connections open.
async fn drain_on_signal(
    stopping: CancellationToken,
    streams: CancellationToken,
    permits: Arc<Semaphore>,
    slots: usize,
) {
    super::shutdown_signal().await;
    tracing::info!("shutting down: no new connections; finishing the requests in flight");
    stopping.cancel();
    // Every slot back means no POST is in flight.
    let slots = u32::try_from(slots).unwrap_or(u32::MAX);
    if tokio::time::timeout(SHUTDOWN_GRACE, permits.acquire_many(slots))
        .await
        .is_err()
    {
        tracing::warn!("requests still running after {SHUTDOWN_GRACE:?}; ending them");
    }
    streams.cancel();
}

/// Resolves a little after the grace period once shutdown has begun: a client that never
/// reads its answer must not keep the process alive.
async fn past_deadline(stopping: CancellationToken) {
    stopping.cancelled().await;
    tokio::time::sleep(SHUTDOWN_GRACE + Duration::from_secs(5)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    /// Header values sent, and the token (or refusal) expected.
    type Case = (
        &'static [&'static str],
        Result<Option<&'static str>, AuthError>,
    );

    #[test]
    fn authorization_header_forms() {
        let cases: &[Case] = &[
            (&[], Ok(None)),
            (&["token abc123"], Ok(Some("abc123"))),
            (&["Bearer abc123"], Ok(Some("abc123"))),
            (&["bearer abc123"], Ok(Some("abc123"))),
            (&["TOKEN abc123"], Ok(Some("abc123"))),
            (&["  Bearer   abc123  "], Ok(Some("abc123"))),
            (&["Bearer\tabc123"], Ok(Some("abc123"))),
            (&["Basic dXNlcjpwYXNz"], Err(AuthError::Malformed)),
            (&["Bearer"], Err(AuthError::Malformed)),
            (&["Bearer "], Err(AuthError::Malformed)),
            (&["abc123"], Err(AuthError::Malformed)),
            (&["Bearer a b"], Err(AuthError::Malformed)),
            (&["Bearertoken abc"], Err(AuthError::Malformed)),
            (&["token a", "token b"], Err(AuthError::Repeated)),
        ];
        for (values, expected) in cases {
            let expected = expected.clone().map(|t| t.map(|t| Token::new(t).unwrap()));
            assert_eq!(client_token(&headers(values)), expected, "{values:?}");
        }
    }

    #[test]
    fn a_non_ascii_header_is_malformed() {
        let mut map = HeaderMap::new();
        map.insert(
            header::AUTHORIZATION,
            HeaderValue::from_bytes(b"Bearer \xffabc").unwrap(),
        );
        assert_eq!(client_token(&map), Err(AuthError::Malformed));
    }

    #[test]
    fn the_logged_method_is_a_plain_name_or_a_placeholder() {
        let cases: &[(&str, &str)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
                "tools/call",
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "notifications/initialized",
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "-"),
            ("not json", "-"),
            (r#"[{"method":"ping"}]"#, "-"),
            (r#"{"method":"evil\nINFO forged line"}"#, "?"),
            (r#"{"method":""}"#, "?"),
        ];
        for (body, expected) in cases {
            assert_eq!(peek_method(body.as_bytes()), *expected, "{body}");
        }
    }

    #[tokio::test]
    async fn bodies_in_memory_stay_within_their_budget() {
        let budget = Arc::new(Semaphore::new(30));
        let body = || Body::from(vec![b' '; 20]);
        let (bytes, held) = read_capped(&HeaderMap::new(), body(), 100, &budget)
            .await
            .ok()
            .unwrap();
        assert_eq!((bytes.len(), budget.available_permits()), (20, 10));
        let second = read_capped(&HeaderMap::new(), body(), 100, &budget).await;
        assert!(matches!(second, Err(BodyError::OverBudget)));
        drop(held);
        assert_eq!(budget.available_permits(), 30);
        let third = read_capped(&HeaderMap::new(), body(), 10, &budget).await;
        assert!(matches!(third, Err(BodyError::TooLarge)));
    }

    #[test]
    fn a_settled_token_never_prints() {
        let settled = RequestToken::new(Token::new("s3cr3t"), TokenSource::Client);
        assert!(!format!("{settled:?}").contains("s3cr3t"));
    }
}
