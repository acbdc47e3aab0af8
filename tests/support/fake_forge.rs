//! A fake Forgejo on 127.0.0.1: the project's own fixtures served the way the real forge serves
//! them, and a log of every request it received.
//!
//! What it imitates, because forgelens depends on it:
//!
//! - `/api/v1` paths; unknown paths answer 404 with Forgejo's JSON error body.
//! - Offset paging of lists: `page` (from 1) and `limit` (default 30, at most 50), the
//!   `X-Total-Count` header, and `Link` with `rel="next"` only for routes that send one.
//! - Lists that ignore paging (issue comments): the whole list whatever is asked.
//! - Private repositories: 404 without a token, 403 naming the missing scope for a token
//!   without it ([`NO_SCOPE_TOKEN`]), the content for [`GOOD_TOKEN`].
//! - Fault modes per route (status, delay, body) for the error tests.
//!
//! It is ready when `start` returns: the listener is bound before the address is handed out.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

/// A token with every scope.
pub const GOOD_TOKEN: &str = "good-token-0123456789";
/// A token the forge knows but that lacks the repository scope.
pub const NO_SCOPE_TOKEN: &str = "scopeless-token-9876543210";

/// One request as the fake forge saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    /// The path under `/api/v1`, still percent-encoded as sent.
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: HashMap<String, String>,
    pub body: Option<Value>,
    /// The body as sent (a text or multipart body is no JSON).
    pub raw_body: Vec<u8>,
}

impl Logged {
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// What a route answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A JSON body with status 200 (201 for POST).
    Json(Value),
    /// A list, paged by `page`/`limit`, with `X-Total-Count` and optionally `Link`.
    List { items: Vec<Value>, link: bool },
    /// A list returned whole, whatever `page`/`limit` say (and no paging headers).
    Whole(Vec<Value>),
    /// A JSON body that is paged like a list on `inner` (the combined status): `inner` is cut
    /// by `page`/`limit`, `total_count` in the body counts the page, `X-Total-Count` counts all.
    PagedObject { body: Value, inner: String },
    /// Raw text (a file's content).
    Text(String),
    /// Any status with a JSON body.
    Status(u16, Value),
    /// No body (204).
    NoContent,
    /// Raw bytes with a content type (an HTML error page, truncated JSON, …).
    Raw {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
    /// A list paged by `page`/`limit` that says whether more remain only through
    /// `Link: rel="next"`, without `X-Total-Count`.
    LinkOnly(Vec<Value>),
    /// Each request gets the next reply; the last one repeats.
    Sequence(Vec<Reply>),
    /// Any status with extra headers and a JSON body.
    Headers {
        status: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
    /// Sends `head` of a body announced as `declared` bytes, then stalls for ever.
    Stall { head: Vec<u8>, declared: usize },
    /// Sends `head`, then breaks the connection mid-body.
    Reset { head: Vec<u8> },
    /// A JSON array of `bytes` bytes, streamed in chunks (with or without `Content-Length`);
    /// how much was actually sent is counted in [`FakeForge::bytes_sent`].
    Huge { bytes: usize, declare_length: bool },
    /// `302 Found` to `location`.
    Redirect(String),
}

#[derive(Debug, Default)]
struct World {
    routes: HashMap<(String, String), Reply>,
    private_repos: HashSet<String>,
    delays: HashMap<String, Duration>,
    gates: HashMap<String, Arc<tokio::sync::Semaphore>>,
    /// Documents outside `/api/v1` (the API description), by path.
    documents: HashMap<String, String>,
    log: Vec<Logged>,
    /// The OAuth2 provider (`/login/oauth/...`).
    oauth: super::fake_oauth::Provider,
    /// Paths whose answer was dropped before it was complete (the client went away).
    abandoned: Vec<String>,
    bytes_sent: Arc<std::sync::atomic::AtomicUsize>,
}

/// A running fake forge.
pub struct FakeForge {
    addr: SocketAddr,
    world: Arc<Mutex<World>>,
}

impl FakeForge {
    /// Starts an empty forge; add routes with [`FakeForge::route`] or use [`FakeForge::standard`].
    pub async fn start() -> FakeForge {
        let world = Arc::new(Mutex::new(World::default()));
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(world.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        tokio::spawn(async move {
            axum::serve(listener, app)
                .await
                .expect("the fake forge serves");
        });
        FakeForge { addr, world }
    }

    /// Starts the forge with the standard world of `fixtures`.
    pub async fn standard() -> FakeForge {
        let forge = FakeForge::start().await;
        super::fixtures::populate(&forge);
        forge
    }

    /// The instance URL to give forgelens.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Adds or replaces the answer to `METHOD /path` (the path under `/api/v1`, decoded).
    pub fn route(&self, method: &str, path: &str, reply: Reply) -> &FakeForge {
        self.world
            .lock()
            .unwrap()
            .routes
            .insert((method.to_owned(), path.to_owned()), reply);
        self
    }

    /// Makes `owner/repo` private.
    pub fn private_repo(&self, full_name: &str) -> &FakeForge {
        self.world
            .lock()
            .unwrap()
            .private_repos
            .insert(full_name.to_owned());
        self
    }

    /// Delays every answer to `path` (decoded, under `/api/v1`).
    pub fn delay(&self, path: &str, delay: Duration) -> &FakeForge {
        self.world
            .lock()
            .unwrap()
            .delays
            .insert(path.to_owned(), delay);
        self
    }

    /// Holds every answer to `path` until the returned gate gets permits (one per answer).
    pub fn gate(&self, path: &str) -> Arc<tokio::sync::Semaphore> {
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        self.world
            .lock()
            .unwrap()
            .gates
            .insert(path.to_owned(), gate.clone());
        gate
    }

    /// Polls the request log until `done` holds (or fails the test after 10 s).
    pub async fn wait_for(&self, what: &str, done: impl Fn(&[Logged]) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !done(&self.world.lock().unwrap().log) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Paths whose answer the client abandoned before it was ready.
    pub fn abandoned(&self) -> Vec<String> {
        self.world.lock().unwrap().abandoned.clone()
    }

    /// Bytes of `Reply::Huge` bodies actually written so far.
    pub fn bytes_sent(&self) -> usize {
        self.world
            .lock()
            .unwrap()
            .bytes_sent
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Serves `text` at `path` outside `/api/v1` (e.g. `/swagger.v1.json`).
    pub fn document(&self, path: &str, text: &str) -> &FakeForge {
        self.world
            .lock()
            .unwrap()
            .documents
            .insert(path.to_owned(), text.to_owned());
        self
    }

    /// Registers forgelens's OAuth2 application with `redirect_uri` (its `/callback`).
    pub fn oauth_app(&self, redirect_uri: &str) -> &FakeForge {
        self.world.lock().unwrap().oauth.redirect_uri = Some(redirect_uri.to_owned());
        self
    }

    /// Runs `f` on the OAuth2 provider (to revoke grants, shorten lifetimes, read its log).
    pub fn with_oauth<T>(&self, f: impl FnOnce(&mut super::fake_oauth::Provider) -> T) -> T {
        f(&mut self.world.lock().unwrap().oauth)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Logged> {
        self.world.lock().unwrap().log.clone()
    }

    /// Forgets the requests received so far.
    pub fn clear_log(&self) {
        self.world.lock().unwrap().log.clear();
    }
}

async fn handle(State(world): State<Arc<Mutex<World>>>, request: Request) -> Response {
    let method = request.method().clone();
    let uri = request.uri().clone();
    let headers = request.headers().clone();
    let bytes: Bytes = axum::body::to_bytes(request.into_body(), 16 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let raw_path = uri.path().to_owned();
    let query: Vec<(String, String)> = uri
        .query()
        .map(|q| {
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (decode_query(k), decode_query(v))
                })
                .collect()
        })
        .unwrap_or_default();
    let logged_path = raw_path
        .strip_prefix("/api/v1")
        .unwrap_or(&raw_path)
        .to_owned();
    let path = decode_path(&logged_path);
    let mut guard = Unfinished {
        world: world.clone(),
        path: path.clone(),
        done: false,
    };
    let document = world.lock().unwrap().documents.get(&raw_path).cloned();
    let (reply, private, delay, gate, counter) = {
        let mut w = world.lock().unwrap();
        // A sequence answers with its first reply and keeps the rest for the next requests.
        let reply = match w.routes.get_mut(&(method.to_string(), path.clone())) {
            Some(Reply::Sequence(replies)) if replies.len() > 1 => Some(replies.remove(0)),
            Some(Reply::Sequence(replies)) => replies.first().cloned(),
            other => other.cloned(),
        };
        w.log.push(Logged {
            method: method.to_string(),
            path: logged_path.clone(),
            query: query.clone(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
            body: serde_json::from_slice(&bytes).ok(),
            raw_body: bytes.to_vec(),
        });
        let private = w
            .private_repos
            .iter()
            .any(|r| path.starts_with(&format!("/repos/{r}/")) || path == format!("/repos/{r}"));
        (
            reply,
            private,
            w.delays.get(&path).copied(),
            w.gates.get(&path).cloned(),
            w.bytes_sent.clone(),
        )
    };
    if let Some(gate) = gate {
        gate.acquire()
            .await
            .expect("gates are never closed")
            .forget();
    }
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    if let Some(text) = document {
        return ([("content-type", "application/json")], text).into_response();
    }
    match (method.as_str(), raw_path.as_str()) {
        ("GET", "/login/oauth/authorize") => {
            guard.done = true;
            return world.lock().unwrap().oauth.authorize(&query);
        }
        ("POST", "/login/oauth/introspect") => {
            guard.done = true;
            let authorization = headers.get("authorization").and_then(|v| v.to_str().ok());
            return world
                .lock()
                .unwrap()
                .oauth
                .introspect(authorization, &bytes);
        }
        ("POST", "/login/oauth/access_token") => {
            guard.done = true;
            return world.lock().unwrap().oauth.token(&bytes);
        }
        _ => {}
    }
    if !raw_path.starts_with("/api/v1/") {
        return not_found(&raw_path);
    }
    let presented = token_of(&headers);
    let oauth_scopes = match presented.as_deref() {
        Some(token) => world
            .lock()
            .unwrap()
            .oauth
            .scopes_of(token)
            .map(|s| s.map(str::to_owned)),
        None => Ok(None),
    };
    let oauth_scopes = match oauth_scopes {
        Ok(scopes) => scopes,
        Err(()) => {
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({"message": "invalid username, password or token", "url": "http://fake/api/swagger"})),
            )
                .into_response();
        }
    };
    if let Some(scopes) = &oauth_scopes {
        let needed = super::fake_oauth::scope_needed(method.as_str(), &path);
        if !super::fake_oauth::grants(scopes, &needed) {
            return (
                StatusCode::FORBIDDEN,
                axum::Json(json!({
                    "message": format!("token does not have at least one of required scope(s): [{needed}]"),
                    "url": "http://fake/api/swagger"
                })),
            )
                .into_response();
        }
    }
    if private && oauth_scopes.is_none() {
        match presented.as_deref() {
            Some(GOOD_TOKEN) => {}
            Some(NO_SCOPE_TOKEN) => {
                return (
                    StatusCode::FORBIDDEN,
                    axum::Json(json!({
                        "message": "token does not have at least one of required scope(s): [read:repository]",
                        "url": "http://fake/api/swagger"
                    })),
                )
                    .into_response();
            }
            _ => return not_found(&raw_path),
        }
    }
    let Some(reply) = reply else {
        guard.done = true;
        return not_found(&raw_path);
    };
    guard.done = true;
    answer(reply, &method, &query, &raw_path, counter)
}

/// Records a request whose answer was dropped (the client hung up) before it was ready.
struct Unfinished {
    world: Arc<Mutex<World>>,
    path: String,
    done: bool,
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.done
            && let Ok(mut w) = self.world.lock()
        {
            w.abandoned.push(self.path.clone());
        }
    }
}

fn answer(
    reply: Reply,
    method: &Method,
    query: &[(String, String)],
    path: &str,
    counter: Arc<std::sync::atomic::AtomicUsize>,
) -> Response {
    let get = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let page: usize = get("page")
        .and_then(|v| v.parse().ok())
        .filter(|&p| p > 0)
        .unwrap_or(1);
    let limit: usize = get("limit")
        .and_then(|v| v.parse().ok())
        .filter(|&l| l > 0)
        .unwrap_or(30)
        .min(50);
    let cut = |items: &[Value]| -> Vec<Value> {
        items
            .iter()
            .skip((page - 1) * limit)
            .take(limit)
            .cloned()
            .collect()
    };
    match reply {
        Reply::Json(body) => {
            let status = if *method == Method::POST {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            (status, axum::Json(body)).into_response()
        }
        Reply::List { items, link } => {
            let mut headers = HeaderMap::new();
            headers.insert("x-total-count", HeaderValue::from(items.len()));
            if link {
                let last = items.len().div_ceil(limit).max(1);
                let mut links = Vec::new();
                if page < last {
                    links.push(format!(
                        "<http://fake{path}?page={}&limit={limit}>; rel=\"next\"",
                        page + 1
                    ));
                }
                links.push(format!(
                    "<http://fake{path}?page={last}&limit={limit}>; rel=\"last\""
                ));
                headers.insert("link", HeaderValue::from_str(&links.join(",")).unwrap());
            }
            (headers, axum::Json(Value::Array(cut(&items)))).into_response()
        }
        Reply::Whole(items) => axum::Json(Value::Array(items)).into_response(),
        Reply::PagedObject { mut body, inner } => {
            let all = body[&inner].as_array().cloned().unwrap_or_default();
            let shown = cut(&all);
            body["total_count"] = json!(shown.len());
            body[&inner] = Value::Array(shown);
            let mut headers = HeaderMap::new();
            headers.insert("x-total-count", HeaderValue::from(all.len()));
            (headers, axum::Json(body)).into_response()
        }
        Reply::Text(text) => {
            ([("content-type", "text/plain; charset=utf-8")], text).into_response()
        }
        Reply::Status(status, body) => {
            (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response()
        }
        Reply::NoContent => StatusCode::NO_CONTENT.into_response(),
        Reply::Raw {
            status,
            content_type,
            body,
        } => Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap(),
        // Taken apart by `handle`; an empty sequence is a missing route.
        Reply::Sequence(_) => not_found(path),
        Reply::Headers {
            status,
            headers,
            body,
        } => {
            let mut response =
                (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response();
            for (k, v) in headers {
                response.headers_mut().insert(
                    axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    HeaderValue::from_str(&v).unwrap(),
                );
            }
            response
        }
        Reply::Stall { head, declared } => {
            let stream =
                futures::stream::once(async move { Ok::<_, std::io::Error>(Bytes::from(head)) })
                    .chain(futures::stream::pending());
            Response::builder()
                .header("content-type", "application/json")
                .header("content-length", declared)
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Reply::Reset { head } => {
            let stream = futures::stream::iter(vec![
                Ok(Bytes::from(head)),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "reset by the fake forge",
                )),
            ]);
            Response::builder()
                .header("content-type", "application/json")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Reply::Huge {
            bytes,
            declare_length,
        } => {
            const CHUNK: usize = 64 * 1024;
            let chunks = bytes.div_ceil(CHUNK);
            let stream = futures::stream::iter(0..chunks).map(move |i| {
                let size = CHUNK.min(bytes - i * CHUNK);
                counter.fetch_add(size, std::sync::atomic::Ordering::SeqCst);
                let mut chunk = vec![b' '; size];
                if i == 0 {
                    chunk[0] = b'[';
                }
                Ok::<_, std::io::Error>(Bytes::from(chunk))
            });
            let mut builder = Response::builder().header("content-type", "application/json");
            if declare_length {
                builder = builder.header("content-length", bytes);
            }
            builder.body(Body::from_stream(stream)).unwrap()
        }
        Reply::Redirect(location) => Response::builder()
            .status(StatusCode::FOUND)
            .header("location", location)
            .body(Body::empty())
            .unwrap(),
        Reply::LinkOnly(items) => {
            let mut headers = HeaderMap::new();
            if page * limit < items.len() {
                let next = format!(
                    "<http://fake{path}?page={}&limit={limit}>; rel=\"next\"",
                    page + 1
                );
                headers.insert("link", HeaderValue::from_str(&next).unwrap());
            }
            (headers, axum::Json(Value::Array(cut(&items)))).into_response()
        }
    }
}

fn not_found(path: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"errors": null, "message": "The target couldn't be found.", "url": format!("http://fake{path}")})),
    )
        .into_response()
}

fn token_of(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    matches!(scheme.to_ascii_lowercase().as_str(), "token" | "bearer").then(|| token.to_owned())
}

fn decode_path(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

fn decode_query(s: &str) -> String {
    decode_path(&s.replace('+', " "))
}
