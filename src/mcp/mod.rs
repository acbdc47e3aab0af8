//! The MCP adapter: the only module that knows rmcp.
//!
//! [`Server`] implements rmcp's `ServerHandler` by hand over a [`Service`]: templates, concrete
//! resources, reads and tools are listed from the compiled catalog, reads and calls go to the
//! service, and [`convert`] maps results and errors to protocol types. The transports
//! (stdio here, Streamable HTTP in [`http`]) are thin shells around the same handler; the only
//! difference the handler sees is where a request's token comes from.

mod bounded;
mod convert;
pub mod http;
mod lines;

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    CustomRequest, CustomResult, DiscoverResult, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, Reference,
    ResourcesCapability, ServerCapabilities, ServerConfig, SubscribeRequestParams, ToolsCapability,
};
use rmcp::service::RequestContext;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use self::convert::Refusal;
use crate::config::Surface;
use crate::engine;
use crate::engine::error::{Situation, TokenFrom, echo};
use crate::forge::scope::Scopes;
use crate::forge::{ForgeError, Token};
use crate::service::{CallError, Called, Listing, Service};
use crate::surface::Meta;

/// How many entries one page of a list answer holds.
pub const PAGE_SIZE: usize = 100;

/// The MCP server: a handle to the shared service.
#[derive(Debug, Clone)]
pub struct Server {
    service: Arc<Service>,
    in_flight: Arc<InFlight>,
}

impl Server {
    pub fn new(service: Arc<Service>) -> Server {
        Server {
            service,
            in_flight: Arc::default(),
        }
    }

    /// Runs `work` for one request: counted as in flight, and ended early if the client
    /// cancels it (dropping the work closes its upstream connections, so a cancelled read stops
    /// costing the forge anything). The work is boxed: a read or a call is a future of tens of
    /// kilobytes, and rmcp's dispatch would otherwise move one that size for every request,
    /// `ping` included.
    async fn run<T>(
        &self,
        context: &RequestContext<RoleServer>,
        work: impl std::future::Future<Output = T>,
    ) -> Result<T, ErrorData> {
        let _counted = self.in_flight.enter();
        let work = Box::pin(work);
        tokio::select! {
            out = work => Ok(out),
            () = context.ct.cancelled() => {
                tracing::info!(id = %context.id, "request cancelled");
                Err(Refusal::Cancelled.into())
            }
        }
    }

    /// The token for one request's upstream calls. Over stdio, the configured one. Over HTTP,
    /// the one the transport settled for this request (its own, the configured one, or none),
    /// so no request ever borrows another's.
    fn token<'a>(
        &'a self,
        context: &'a RequestContext<RoleServer>,
    ) -> Result<Option<&'a Token>, ErrorData> {
        let Some(parts) = context.extensions.get::<axum::http::request::Parts>() else {
            return Ok(self.service.token());
        };
        match parts.extensions.get::<http::RequestToken>() {
            Some(settled) => Ok(settled.token()),
            // Every HTTP request passes the transport's guard first; reaching here without
            // its verdict is our bug, and guessing a token would be worse than failing.
            None => {
                tracing::error!("an HTTP request reached the handler without a settled token");
                Err(Refusal::Internal("the request's credentials were not settled".into()).into())
            }
        }
    }
}

impl Server {
    /// Tells the HTTP guard what a failure means for a signed-in request: a scope the sign-in
    /// lacks (`403`), or the forge refusing the user's token (`401`, the sign-in is over).
    fn note(&self, context: &RequestContext<RoleServer>, error: &engine::Error) {
        let Some(settled) = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<http::RequestToken>())
        else {
            return;
        };
        match error {
            engine::Error::Forge(ForgeError::Scope { needed, .. }) => {
                settled.note(http::Outcome::Scope(needed.clone()));
            }
            _ if error.upstream_status() == Some(401) => settled.note(http::Outcome::ForgeRefused),
            _ => {}
        }
    }

    /// Where a failure happened, for the hint that fits: a tool call or a read, and whose token
    /// the request used.
    fn situation(&self, context: &RequestContext<RoleServer>, tool: bool) -> Situation {
        let over_http = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<http::RequestToken>());
        let token = match over_http {
            Some(settled) => settled.from(),
            None if self.service.token().is_some() => TokenFrom::Configured,
            None => TokenFrom::None,
        };
        Situation { tool, token }
    }
}

/// What `initialize` says to a client's model about using forgelens.
const INSTRUCTIONS: &str = "forgelens serves a Forgejo/Gitea instance. Read a resource \
(forgejo://repo/{owner}/{repo}/...) when you hold an id, index or sha; call a tool to list, \
search or change things. Answers are bounded: when one says it was truncated, follow the \
call it names.";

/// What the core surface adds to [`INSTRUCTIONS`].
const CORE_INSTRUCTIONS: &str = " The tools listed are the common ones; many more exist. \
When none fits, search_tools finds one for a task in words; run it with call_read_tool \
(reads) or call_write_tool (changes), as {name, arguments}.";

/// "Method not found: …" for a method forgelens does not serve (rmcp's answer names the method
/// alone).
fn not_served(method: &str) -> ErrorData {
    Refusal::MethodNotFound(method.to_owned()).into()
}

impl ServerHandler for Server {
    /// rmcp's own negotiation, after refusing an empty protocol version (which it would take).
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if request.protocol_version.as_str().trim().is_empty() {
            return Err(Refusal::InvalidRequest(
                "initialize: protocolVersion is empty; send the revision the client speaks, \
                 such as 2025-06-18"
                    .into(),
            )
            .into());
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    /// A request rmcp could not read: a method forgelens serves whose params do not parse
    /// (`-32602`, naming what is wrong), or a method it does not serve.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match malformed_params(&request.method, request.params) {
            Some(why) => Err(Refusal::InvalidParams(format!(
                "invalid params of {}: {why}",
                request.method
            ))
            .into()),
            None => Err(not_served(&request.method)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(not_served("prompts/list"))
    }

    async fn get_prompt(
        &self,
        _request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Err(not_served("prompts/get"))
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(not_served("resources/subscribe"))
    }

    /// What `server/discover` says: `initialize`'s answer, kept for as long as the process
    /// serves the same surface, and the same for every caller.
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        )
        .with_ttl_ms(SURFACE_TTL_MS)
        .with_cache_scope(CacheScope::Public))
    }

    fn get_info(&self) -> ServerConfig {
        let implementation = implementation();
        let instructions = match self.service.surface() {
            Surface::Core => format!("{INSTRUCTIONS}{CORE_INSTRUCTIONS}"),
            Surface::Full => INSTRUCTIONS.to_owned(),
        };
        ServerConfig::new(capabilities())
            .with_server_info(implementation)
            .with_instructions(instructions)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let all: Vec<_> = self
            .service
            .catalog()
            .resources()
            .iter()
            .filter(|r| !r.is_concrete() && r.offered())
            .map(convert::template)
            .collect();
        let (items, next) = convert::page(all, cursor(&request))?;
        let mut result = ListResourceTemplatesResult::with_all_items(items)
            .with_ttl_ms(SURFACE_TTL_MS)
            .with_cache_scope(CacheScope::Public);
        result.next_cursor = next;
        stamp(&mut result.meta, &context);
        Ok(result)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let token = self.token(&context)?;
        let applicable: Vec<usize> = self
            .service
            .catalog()
            .listings()
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.needs_token || token.is_some())
            .map(|(i, _)| i)
            .collect();
        // The first page holds the variable-free resources and the first page of the first
        // source; a cursor names a source and its page.
        let (mut items, position) = match cursor(&request) {
            None => {
                let concrete = self
                    .service
                    .catalog()
                    .resources()
                    .iter()
                    .filter(|r| r.is_concrete() && r.offered())
                    .map(convert::concrete)
                    .collect();
                (concrete, applicable.first().map(|&s| (s, 1)))
            }
            Some(c) => (Vec::new(), Some(convert::listing_cursor(c, &applicable)?)),
        };
        let mut next = None;
        if let Some((source, page)) = position {
            match self
                .run(&context, self.service.listing_page(source, page, token))
                .await?
            {
                Ok((listed, more)) => {
                    items.extend(listed.into_iter().map(convert::listed));
                    let following = applicable.iter().find(|&&s| s > source);
                    next = match (more, following) {
                        (true, _) => Some(format!("{source}:{}", page + 1)),
                        (false, Some(s)) => Some(format!("{s}:1")),
                        (false, None) => None,
                    };
                }
                // Without a cursor, the built-in resources are still worth answering with.
                Err(error) if cursor(&request).is_none() => {
                    tracing::warn!("resources/list: the listing source failed: {error}");
                }
                Err(error) => {
                    return Err(convert::error(
                        &self.service.catalog().errors,
                        "resources/list",
                        &error,
                        modern(&context),
                        self.situation(&context, false),
                    ));
                }
            }
        }
        // What the token may see, listed now: not reused, and never across tokens.
        let mut result = ListResourcesResult::with_all_items(items)
            .with_ttl_ms(0)
            .with_cache_scope(scope(token));
        result.next_cursor = next;
        stamp(&mut result.meta, &context);
        Ok(result)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let token = self.token(&context)?;
        let Reference::Resource(template) = &request.r#ref else {
            return Ok(CompleteResult::default());
        };
        let arguments: Vec<(String, String)> = request
            .context
            .and_then(|c| c.arguments)
            .map(|a| a.into_iter().collect())
            .unwrap_or_default();
        let work = self.service.complete(
            &template.uri,
            &request.argument.name,
            &request.argument.value,
            &arguments,
            token,
        );
        let mut result = convert::completion(self.run(&context, work).await?);
        stamp(&mut result.meta, &context);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let token = self.token(&context)?;
        match self
            .run(&context, self.service.read(&request.uri, token))
            .await?
        {
            Ok(output) => {
                let mut result = convert::read_result(&request.uri, output, token.is_some());
                stamp(&mut result.meta, &context);
                Ok(result.into())
            }
            Err(error) => {
                self.note(&context, &error);
                let reason = self.service.catalog().errors.reason(&error);
                let situation = self.situation(&context, false);
                tracing::info!(uri = %echo(&request.uri), %reason, "read failed: {}", self.service.catalog().errors.message_in(&error, situation));
                Err(convert::error(
                    &self.service.catalog().errors,
                    &request.uri,
                    &error,
                    modern(&context),
                    situation,
                ))
            }
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let scopes = self.token(&context)?.and_then(Token::scopes);
        // A sign-in's list follows its scopes: the client may keep it, but not share it.
        let cache_scope = match scopes {
            Some(_) => CacheScope::Private,
            None => CacheScope::Public,
        };
        let mut result = tools_page_for(&self.service, cursor(&request), scopes)?
            .with_ttl_ms(SURFACE_TTL_MS)
            .with_cache_scope(cache_scope);
        stamp(&mut result.meta, &context);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let token = self.token(&context)?;
        let arguments = request.arguments.unwrap_or_default();
        let called = self
            .run(&context, self.service.call(&request.name, arguments, token))
            .await?;
        let mut result = match called {
            Ok(Called::Value(answer)) => convert::tool_success(answer),
            Ok(Called::Read(output)) => convert::read_as_tool(output),
            Err(unknown @ CallError::Unknown { .. }) => {
                return Err(Refusal::InvalidParams(format!(
                    "{unknown}, and search_tools finds the rest"
                ))
                .into());
            }
            Err(refused @ CallError::Refused { .. }) => {
                convert::tool_failure(refused.to_string(), None)
            }
            Err(CallError::Failed(error)) => {
                self.note(&context, &error);
                let errors = &self.service.catalog().errors;
                let message = errors.message_in(&error, self.situation(&context, true));
                tracing::info!(tool = %echo(&request.name), reason = %errors.reason(&error), "call failed: {message}");
                convert::tool_failure(
                    message,
                    Some((errors.reason(&error), error.upstream_status())),
                )
            }
            Err(CallError::Read { uri, error }) => {
                self.note(&context, &error);
                let errors = &self.service.catalog().errors;
                let situation = self.situation(&context, false);
                tracing::info!(uri = %echo(&uri), reason = %errors.reason(&error), "read_resource failed: {}", errors.message_in(&error, situation));
                convert::read_failure(errors, &uri, &error, modern(&context), situation)
            }
        };
        stamp(&mut result.meta, &context);
        Ok(result.into())
    }
}

/// How long a client may keep what lists the served surface (`tools/list`,
/// `resources/templates/list`, `server/discover`): it does not change while the process runs.
pub const SURFACE_TTL_MS: u64 = 60 * 60 * 1000;

/// Who a server is, as `initialize`, `server/discover` and every stateless result's `_meta` say.
fn implementation() -> Implementation {
    let mut implementation = Implementation::new("forgelens", env!("CARGO_PKG_VERSION"));
    implementation.title = Some("forgelens".to_owned());
    implementation.description = Some(env!("CARGO_PKG_DESCRIPTION").to_owned());
    implementation
}

/// Whether a request speaks the stateless revision (2026-07-28 or later).
fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= "2026-07-28")
}

/// A stateless request's result says which server answered it, in its `_meta`.
fn stamp(meta: &mut Option<MetaObject>, context: &RequestContext<RoleServer>) {
    if !modern(context) {
        return;
    }
    let info = serde_json::to_value(implementation()).expect("an implementation serializes");
    meta.get_or_insert_with(MetaObject::default)
        .insert(SERVER_INFO_KEY.to_owned(), info);
}

/// The `_meta` key naming the server that answered.
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// A result read with a token is that token's; one read without may be anyone's.
fn scope(token: Option<&Token>) -> CacheScope {
    match token {
        Some(_) => CacheScope::Private,
        None => CacheScope::Public,
    }
}

/// Why the params of a request of a method forgelens serves do not parse, when they do not
/// (rmcp then hands it over as a custom request); `None` for any other method.
fn malformed_params(method: &str, params: Option<serde_json::Value>) -> Option<String> {
    fn check<T: serde::de::DeserializeOwned>(params: serde_json::Value) -> Option<String> {
        serde_json::from_value::<T>(params)
            .err()
            .map(|e| e.to_string())
    }
    let params = params.unwrap_or_else(|| serde_json::Value::Object(Default::default()));
    match method {
        "resources/read" => check::<ReadResourceRequestParams>(params),
        "tools/call" => check::<CallToolRequestParams>(params),
        "completion/complete" => check::<CompleteRequestParams>(params),
        "initialize" => check::<InitializeRequestParams>(params),
        "resources/list" | "resources/templates/list" | "tools/list" => {
            check::<PaginatedRequestParams>(params)
        }
        _ => None,
    }
}

/// Requests read from stdin and not yet answered, at most: past it the server stops reading
/// until an answer has been written, so a client that does not read cannot make it buffer
/// without bound. The same number as HTTP's default `--max-concurrent-requests`.
pub const STDIO_IN_FLIGHT: usize = crate::config::DEFAULT_MAX_CONCURRENT_REQUESTS;

/// Longest wait for the requests in flight when stdio is told to stop.
const STDIO_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// How many requests are being served, and a way to wait until none is.
#[derive(Debug, Default)]
struct InFlight {
    count: std::sync::atomic::AtomicUsize,
    idle: tokio::sync::Notify,
}

impl InFlight {
    fn enter(self: &Arc<Self>) -> Leave {
        self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Leave(self.clone())
    }

    async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.count.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// Leaves the in-flight count when dropped (answered, failed or cancelled alike).
struct Leave(Arc<InFlight>);

impl Drop for Leave {
    fn drop(&mut self) {
        if self
            .0
            .count
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst)
            == 1
        {
            self.0.idle.notify_waiters();
        }
    }
}

/// What the server offers: resources (templates, reads, a list; no subscriptions), tools, and
/// completion of template variables (`complete` below). A client may skip a feature the
/// server does not declare, so each one served is declared.
fn capabilities() -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::builder()
        .enable_completions()
        .enable_resources()
        .enable_tools()
        .build();
    let mut resources = ResourcesCapability::default();
    resources.subscribe = Some(false);
    resources.list_changed = Some(false);
    capabilities.resources = Some(resources);
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(false);
    capabilities.tools = Some(tools);
    capabilities
}

/// One page of `tools/list`: the page is cut first, so only its tools are converted.
pub fn tools_page(service: &Service, cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
    tools_page_for(service, cursor, None)
}

/// [`tools_page`] for a sign-in limited to `scopes`: the tools it may not call are not listed
/// (nor `call_write_tool` when it may change nothing).
fn tools_page_for(
    service: &Service,
    cursor: Option<&str>,
    scopes: Option<Scopes>,
) -> Result<ListToolsResult, ErrorData> {
    let form = service.form();
    let mut listed = service.listed();
    if let Some(scopes) = scopes {
        listed.retain(|entry| match entry {
            Listing::Meta(meta) => *meta != Meta::CallWriteTool || scopes.writes(),
            Listing::Tool(tool) => tool.needs().is_none_or(|need| scopes.allows(need)),
        });
    }
    let (page, next) = convert::page(listed, cursor)?;
    let tools = page.into_iter().map(|entry| match entry {
        Listing::Meta(meta) => convert::meta_tool(meta),
        Listing::Tool(tool) => convert::tool(tool, form),
    });
    let mut result = ListToolsResult::with_all_items(tools.collect());
    result.next_cursor = next;
    Ok(result)
}

fn cursor(request: &Option<PaginatedRequestParams>) -> Option<&str> {
    request.as_ref().and_then(|r| r.cursor.as_deref())
}

/// The log line that says the server is serving, and what.
pub fn announce(service: &Service, transport: &str) {
    tracing::info!(
        forge = %service.instance(),
        version = env!("CARGO_PKG_VERSION"),
        resources = service.catalog().resources().len(),
        tools = service.catalog().tools().len(),
        "forgelens serving MCP on {transport}"
    );
}

/// Serves MCP over stdin/stdout until the client goes away (stdin closes) or SIGTERM/ctrl-c
/// arrives; either way the requests in flight get a bounded time to finish and answer.
pub async fn serve_stdio(service: Arc<Service>) -> anyhow::Result<()> {
    let (reader, writer) = event_loop_stdio().unwrap_or_else(|| {
        tracing::debug!("stdio through tokio's blocking threads");
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    });
    serve_lines(service, reader, writer, shutdown_signal()).await
}

/// Serves MCP as newline-delimited JSON on `reader`/`writer` (stdio's framing, its bound on
/// requests in flight and its refusals) until the client goes away or `stop` completes. The
/// stdio server runs on this; so do the tests, over an in-memory pipe.
pub async fn serve_lines(
    service: Arc<Service>,
    reader: Reader,
    writer: Writer,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let server = Server::new(service);
    let in_flight = server.in_flight.clone();
    let (refused, refusals) = tokio::sync::mpsc::unbounded_channel();
    let reader: Reader = Box::new(lines::JsonLines::new(reader, refused));
    let transport = AsyncRwTransport::new_server(reader, writer);
    let bounded = bounded::Bounded::new(transport, STDIO_IN_FLIGHT).answering(refusals);
    let running = match server.serve(bounded).await {
        Ok(running) => running,
        // The client left before opening a session (it may only have asked `server/discover`,
        // or nothing at all): a clean end of input, not a failure.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("stdin closed before a session was opened");
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    let cancel = running.cancellation_token();
    tokio::spawn(async move {
        stop.await;
        tracing::info!("shutting down: finishing the requests in flight");
        if tokio::time::timeout(STDIO_GRACE, in_flight.idle())
            .await
            .is_err()
        {
            tracing::warn!("requests still running after {STDIO_GRACE:?}; ending them");
        }
        cancel.cancel();
    });
    running.waiting().await?;
    Ok(())
}

/// The halves of stdio, however they are read and written.
pub type Reader = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
pub type Writer = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// stdin and stdout read and written by the runtime's own event loop, when each is a pipe (what
/// most clients give the server they start) or a Unix socket (what clients built on libuv, such
/// as Node's, give). Tokio's stdio would pass every message through a blocking thread and back,
/// which costs each request two thread hand-offs. `None` when either is anything else (a
/// terminal, a file), which tokio's stdio then serves.
#[cfg(unix)]
fn event_loop_stdio() -> Option<(Reader, Writer)> {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe;

    enum Kind {
        Pipe(std::fs::File),
        Socket(std::os::unix::net::UnixStream),
    }
    // Classifies a copy of the descriptor (so that dropping the transport leaves fd 0 and 1
    // open), changing nothing about it yet.
    let kind = |fd: std::os::fd::BorrowedFd<'_>| -> Option<Kind> {
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        let file_type = file.metadata().ok()?.file_type();
        if file_type.is_fifo() {
            return Some(Kind::Pipe(file));
        }
        if !file_type.is_socket() {
            return None;
        }
        let socket = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        // Only a Unix socket has a Unix address; another kind of socket stays with tokio's stdio.
        socket.local_addr().ok()?;
        Some(Kind::Socket(socket))
    };
    // Both or neither: making one non-blocking and then reading it through tokio's blocking
    // stdio would fail, so nothing is registered before both are known.
    let input = kind(std::io::stdin().as_fd())?;
    let output = kind(std::io::stdout().as_fd())?;
    let name = |k: &Kind| match k {
        Kind::Pipe(_) => "pipe",
        Kind::Socket(_) => "socket",
    };
    tracing::debug!(
        stdin = name(&input),
        stdout = name(&output),
        "stdio on the event loop"
    );
    let socket = |s: std::os::unix::net::UnixStream| {
        s.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(s)
    };
    let reader: Reader = match input {
        Kind::Pipe(file) => Box::new(pipe::Receiver::from_file(file).ok()?),
        Kind::Socket(s) => Box::new(socket(s).ok()?),
    };
    let writer: Writer = match output {
        Kind::Pipe(file) => Box::new(pipe::Sender::from_file(file).ok()?),
        Kind::Socket(s) => Box::new(socket(s).ok()?),
    };
    Some((reader, writer))
}

#[cfg(not(unix))]
fn event_loop_stdio() -> Option<(Reader, Writer)> {
    None
}

/// Resolves on SIGTERM or ctrl-c.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!("cannot listen for SIGTERM: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_feature_served_is_declared() {
        let c = capabilities();
        assert!(c.completions.is_some(), "`complete` is served");
        let resources = c.resources.expect("resources are served");
        assert_eq!(
            (resources.subscribe, resources.list_changed),
            (Some(false), Some(false))
        );
        assert_eq!(c.tools.expect("tools are served").list_changed, Some(false));
        assert!(c.prompts.is_none(), "no prompts are served");
    }
}
