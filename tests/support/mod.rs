//! Test support: the fake forge, its fixtures, and the ways to drive forgelens — its MCP
//! handlers in this process over an in-memory pipe (most tests), the real binary as an MCP server
//! over stdio or HTTP, and the binary as a command line.

pub mod catalog_world;
pub mod delivered;
pub mod fake_forge;
pub mod fake_oauth;
pub mod fixtures;
pub mod generic;
pub mod proxy;
pub mod raw;
pub mod redis;
pub mod render;
pub mod search_eval;
pub mod tokens;
pub mod tool_world;
pub mod wire;

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorData, ReadResourceRequestParams, ReadResourceResult,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

pub use self::fake_forge::FakeForge;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_forgelens");

/// How to start the server: a clean environment plus what the test sets.
pub struct Launch {
    env: Vec<(String, String)>,
    args: Vec<String>,
}

impl Launch {
    /// A server pointed at `forge`, without a token.
    pub fn new(forge: &FakeForge) -> Launch {
        Launch {
            env: vec![
                ("FORGEJO_URL".into(), forge.url()),
                ("RUST_LOG".into(), "forgelens=debug".into()),
            ],
            args: Vec::new(),
        }
    }

    pub fn token(self, token: &str) -> Launch {
        self.env("FORGEJO_TOKEN", token)
    }

    pub fn env(mut self, key: &str, value: &str) -> Launch {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn arg(mut self, arg: &str) -> Launch {
        self.args.push(arg.into());
        self
    }

    /// Lists every tool (`--tool-surface full`) instead of the core ones.
    pub fn full(self) -> Launch {
        self.arg("--tool-surface").arg("full")
    }

    /// Starts the server in this process, on an in-memory pipe with stdio's framing, and
    /// completes the MCP handshake: the same service and handlers the binary runs, without a
    /// process to spawn. It keeps no log and has no pid; a test that reads either, or that is
    /// about the process itself, uses [`Launch::spawn`].
    pub async fn start(self) -> Server {
        let env: std::collections::HashMap<String, String> = self.env.into_iter().collect();
        let args = self.args;
        // Starting may fetch the instance's spec from the fake forge, which runs on this
        // runtime: compile off it.
        let service = tokio::task::spawn_blocking(move || {
            forgelens::cli::stdio_service(&args, &|key| env.get(key).cloned())
        })
        .await
        .expect("starting does not panic")
        .unwrap_or_else(|e| panic!("the server starts: {e}"));
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (reader, writer) = tokio::io::split(server_end);
        tokio::spawn(forgelens::mcp::serve_lines(
            Arc::new(service),
            Box::new(reader),
            Box::new(writer),
            std::future::pending(),
        ));
        let client = ().serve(client_end).await.expect("the MCP handshake succeeds");
        Server::without_client_cache(client, None, None).await
    }

    /// Spawns the binary and completes the MCP handshake.
    pub async fn spawn(self) -> Server {
        let mut command = tokio::process::Command::new(BIN);
        command.env_clear().envs(self.env).args(self.args);
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .expect("the forgelens binary starts");
        let stderr = stderr.expect("stderr is piped");
        let stderr = Stderr::gather(tokio::io::BufReader::new(stderr), String::new());
        let pid = transport.id().expect("a started child has a pid");
        let client = ().serve(transport).await.expect("the MCP handshake succeeds");
        Server::without_client_cache(client, Some(stderr), Some(pid)).await
    }
}

/// What a spawned server writes to stderr, gathered by a task as it arrives. A line the server
/// has written may still be in the pipe: what it logged is complete only once it has exited.
pub struct Stderr {
    text: Arc<Mutex<String>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Stderr {
    /// Gathers `stream` after `start`, what was read of it already.
    fn gather(mut stream: impl AsyncBufRead + Unpin + Send + 'static, start: String) -> Stderr {
        let text = Arc::new(Mutex::new(start));
        let gathered = text.clone();
        let reader = tokio::spawn(async move {
            let mut line = Vec::new();
            while let Ok(n) = stream.read_until(b'\n', &mut line).await {
                if n == 0 {
                    break;
                }
                gathered
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&line));
                line.clear();
            }
        });
        Stderr { text, reader }
    }

    /// What has arrived so far: for polling, or for a message.
    pub fn so_far(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// All of it, once the stream has ended; call it after the process has exited.
    async fn whole(self) -> String {
        tokio::time::timeout(std::time::Duration::from_secs(60), self.reader)
            .await
            .expect("stderr ends within 60s of the server's exit")
            .expect("the stderr reader does not panic");
        self.text.lock().unwrap().clone()
    }
}

/// A running server and its client.
pub struct Server {
    pub client: RunningService<RoleClient, ()>,
    /// What a spawned stdio server writes to stderr; `None` in process and over HTTP, where the
    /// [`HttpServer`] holds it.
    stderr: Option<Stderr>,
    /// The server process, for `/proc` measurements; `None` in process.
    pid: Option<u32>,
}

impl Server {
    /// rmcp's client keeps answers that carry `ttlMs`; the tests look at the server, so every
    /// request must reach it.
    async fn without_client_cache(
        client: RunningService<RoleClient, ()>,
        stderr: Option<Stderr>,
        pid: Option<u32>,
    ) -> Server {
        client
            .set_response_cache_config(rmcp::ClientCacheConfig::disabled())
            .await;
        Server {
            client,
            stderr,
            pid,
        }
    }

    pub async fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        match self
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
        {
            Ok(result) => Ok(result),
            Err(ServiceError::McpError(e)) => Err(e),
            Err(other) => panic!("{uri}: transport failure {other}"),
        }
    }

    /// Reads `uri` and returns its text blocks as (mime type, text).
    pub async fn read_blocks(&self, uri: &str) -> Vec<(String, String)> {
        let result = self
            .read(uri)
            .await
            .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
        result
            .contents
            .into_iter()
            .map(|c| match c {
                rmcp::model::ResourceContents::TextResourceContents {
                    mime_type, text, ..
                } => (mime_type.unwrap_or_default(), text),
                other => panic!("{uri}: unexpected blob {other:?}"),
            })
            .collect()
    }

    /// Reads `uri` and parses its JSON block.
    pub async fn read_json(&self, uri: &str) -> Value {
        let blocks = self.read_blocks(uri).await;
        let (mime, text) = &blocks[0];
        assert_eq!(mime, "application/json", "{uri}");
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{uri}: {e}: {text}"))
    }

    /// Reads `uri`, expecting an error; returns its code and data.
    pub async fn read_error(&self, uri: &str) -> (i32, Value) {
        match self.read(uri).await {
            Ok(r) => panic!("{uri}: expected an error, got {r:?}"),
            Err(e) => (e.code.0, e.data.unwrap_or(Value::Null)),
        }
    }

    pub async fn call(&self, tool: &str, args: Value) -> Result<CallToolResult, ErrorData> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        match self.client.call_tool(params).await {
            Ok(r) => Ok(r),
            Err(ServiceError::McpError(e)) => Err(e),
            Err(other) => panic!("{tool}: transport failure {other}"),
        }
    }

    /// Calls `tool` expecting success; returns its structured content.
    pub async fn call_ok(&self, tool: &str, args: Value) -> Value {
        let result = self
            .call(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e:?}"));
        assert_ne!(result.is_error, Some(true), "{tool}: {result:?}");
        result
            .structured_content
            .unwrap_or_else(|| panic!("{tool}: no structured content"))
    }

    /// Calls `tool`, expecting a result (an `isError` one included), not a protocol error.
    pub async fn call_ok_or_error(&self, tool: &str, args: Value) -> CallToolResult {
        self.call(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool}: protocol error {e:?}"))
    }

    /// Stops the spawned server (its stdin closes, as when a client quits; rmcp waits for the
    /// exit) and returns everything it wrote to stderr.
    pub async fn finish(self) -> String {
        let stderr = self
            .stderr
            .expect("only a spawned stdio server has a log here: start it with Launch::spawn");
        let _ = self.client.cancel().await;
        stderr.whole().await
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.pid
            .expect("an in-process server has no process: start it with Launch::spawn")
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

/// A service over the built-in manifests (and a generated catalog when given) whose forge is
/// never contacted: for what the catalog alone answers (searching, describing).
pub fn offline_service(catalog: Option<String>) -> forgelens::service::Service {
    let flags = forgelens::config::Flags {
        url: Some("http://127.0.0.1:9".into()),
        ..forgelens::config::Flags::default()
    };
    let config = forgelens::config::Config::resolve(&flags, &|_| None).unwrap();
    let mut sources = forgelens::manifest::Sources::builtin();
    sources.catalog = catalog.map(|text| forgelens::manifest::Source {
        name: "generated".into(),
        text,
    });
    forgelens::service::Service::start(&config, &sources, None).unwrap()
}

/// What answers are held to in tests of the engine that are not about the budget: no answer
/// reaches it.
pub fn serving() -> forgelens::engine::endpoint::Serving {
    forgelens::engine::endpoint::Serving {
        budget: usize::MAX,
        allow: None,
        instance: "forge.example".into(),
    }
}

/// The manifest tools of a `tools/list` answer, without forgelens's meta-tools.
pub fn manifest_tools(tools: &[rmcp::model::Tool]) -> Vec<&rmcp::model::Tool> {
    tools
        .iter()
        .filter(|t| forgelens::surface::Meta::named(&t.name).is_none())
        .collect()
}

/// The output of one run of the command line.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Writes the catalog of `spec` in `dir` and returns its path.
pub fn write_catalog(dir: &std::path::Path, spec: &str) -> std::path::PathBuf {
    let (_, yaml) = forgelens::catalog::generate_text(spec, Default::default()).unwrap();
    let path = dir.join("catalog.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Runs the binary with `args` in a clean environment plus `env`.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> Run {
    let output = std::process::Command::new(BIN)
        .env_clear()
        .envs(env.iter().copied())
        .args(args)
        .output()
        .expect("the forgelens binary runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A server started with `serve --http 127.0.0.1:0`; killed when dropped.
pub struct HttpServer {
    child: tokio::process::Child,
    /// `http://127.0.0.1:PORT`, as the server printed it.
    pub base: String,
    stderr: Stderr,
}

impl Launch {
    /// Spawns the binary as an HTTP server on a free loopback port and waits, by reading its
    /// stderr, for the line that names the bound address.
    pub async fn start_http(self) -> HttpServer {
        // The tests' own HTTP clients use the TLS provider forgelens uses (reqwest has none
        // built in here); one installed already is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        use tokio::io::AsyncBufReadExt;
        let mut command = tokio::process::Command::new(BIN);
        command.env_clear().envs(self.env).arg("serve");
        if !self.args.iter().any(|a| a == "--http") {
            command.args(["--http", "127.0.0.1:0"]);
        }
        command
            .args(self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("the forgelens binary starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut stderr = tokio::io::BufReader::new(stderr);
        let mut log = String::new();
        let found = tokio::time::timeout(std::time::Duration::from_secs(30), async {
            let mut line = String::new();
            while stderr.read_line(&mut line).await.is_ok_and(|n| n > 0) {
                log.push_str(&line);
                if let Some((_, url)) = line.split_once("listening on ") {
                    return Some(url.trim().trim_end_matches("/mcp").to_owned());
                }
                line.clear();
            }
            None
        })
        .await;
        let base = match found {
            Ok(Some(base)) => base,
            Ok(None) => panic!("the server exited before listening:\n{log}"),
            Err(_) => panic!("the server did not listen within 30s:\n{log}"),
        };
        HttpServer {
            child,
            base,
            stderr: Stderr::gather(stderr, log),
        }
    }
}

impl HttpServer {
    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Connects rmcp's HTTP client with the `initialize` handshake (a revision before
    /// 2026-07-28), sending `authorization` as the `Authorization` header when given.
    pub async fn connect(&self, authorization: Option<&str>) -> Server {
        self.try_connect(authorization, None)
            .await
            .expect("the MCP handshake succeeds")
    }

    /// Connects rmcp's HTTP client on the stateless 2026-07-28 revision (`server/discover`).
    pub async fn connect_stateless(&self, authorization: Option<&str>) -> Server {
        let lifecycle = rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        };
        self.try_connect(authorization, Some(lifecycle))
            .await
            .expect("server/discover succeeds")
    }

    pub async fn try_connect(
        &self,
        authorization: Option<&str>,
        lifecycle: Option<rmcp::service::ClientLifecycleMode>,
    ) -> Result<Server, rmcp::service::ClientInitializeError> {
        use rmcp::service::ClientServiceExt;
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut headers = std::collections::HashMap::new();
        if let Some(value) = authorization {
            headers.insert(
                reqwest::header::AUTHORIZATION,
                reqwest::header::HeaderValue::from_str(value).unwrap(),
            );
        }
        let config = StreamableHttpClientTransportConfig::with_uri(self.url())
            .custom_headers(headers)
            .reinit_on_expired_session(false);
        let transport = StreamableHttpClientTransport::from_config(config);
        let client = match lifecycle {
            None => ().serve(transport).await?,
            Some(lifecycle) => ().serve_with_lifecycle(transport, lifecycle).await?,
        };
        Ok(Server::without_client_cache(
            client,
            None,
            Some(self.child.id().expect("the HTTP server runs")),
        )
        .await)
    }

    /// POSTs `body` to `/mcp` as an MCP client would, with extra headers.
    pub async fn post(&self, body: &str, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut request = reqwest::Client::new()
            .post(self.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.expect("the server answers")
    }

    /// GETs a path of the server.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        reqwest::get(format!("{}{path}", self.base))
            .await
            .expect("the server answers")
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("the server is running")
    }

    /// Waits for the process to exit; its exit code and everything it wrote to stderr.
    pub async fn wait(mut self) -> (i32, String) {
        let status = tokio::time::timeout(std::time::Duration::from_secs(60), self.child.wait())
            .await
            .expect("the server exits within 60s")
            .expect("the server's status is readable");
        (status.code().unwrap_or(-1), self.stderr.whole().await)
    }

    /// Stops the server as a service manager would (SIGTERM, then it drains) and returns
    /// everything it wrote to stderr.
    pub async fn finish(self) -> String {
        let stopped = std::process::Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(stopped.success(), "SIGTERM reaches the server");
        self.wait().await.1
    }

    /// What the server wrote to stderr so far: a line may still be on its way, so poll for
    /// what should come, or [`HttpServer::finish`] to read it all.
    pub fn log(&self) -> String {
        self.stderr.so_far()
    }
}

/// One stand-alone request of the 2026-07-28 revision to `{base}/mcp`: `params` with the
/// `_meta` that revision asks of every request, and the headers that mirror its method and the
/// tool or resource it names.
pub fn modern_request(
    http: &reqwest::Client,
    base: &str,
    method: &str,
    mut params: Value,
) -> reqwest::RequestBuilder {
    const MODERN: &str = "2026-07-28";
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "forgelens-tests", "version": "0"},
    });
    let named = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = http
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", method)
        .body(body.to_string());
    if let Some(name) = named {
        request = request.header("mcp-name", name);
    }
    request
}

/// An `initialize` request body of the given revision.
pub fn initialize_body(version: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "forgelens-tests", "version": "0"}
        }
    })
    .to_string()
}

/// The text inside the envelope forgelens wraps user-written text in, and the envelope's
/// opening tag; panics when `text` is not one whole envelope.
pub fn enveloped(text: &str) -> (&str, &str) {
    let (open, rest) = text
        .split_once('\n')
        .unwrap_or_else(|| panic!("not enveloped: {text}"));
    let tag = open
        .strip_prefix('<')
        .and_then(|o| o.split(' ').next())
        .filter(|t| t.starts_with("untrusted-"))
        .unwrap_or_else(|| panic!("not enveloped: {text}"));
    let inner = rest
        .strip_suffix(&format!("\n</{tag}>"))
        .unwrap_or_else(|| panic!("the envelope is not closed last: {text}"));
    assert!(
        !inner.contains(tag),
        "the boundary occurs inside the envelope: {text}"
    );
    (open, inner)
}

/// The names of a listed tool's required arguments.
pub fn required_args(tool: &rmcp::model::Tool) -> Vec<String> {
    tool.input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a listed tool is annotated read-only.
pub fn is_read_only(tool: &rmcp::model::Tool) -> bool {
    tool.annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false)
}

/// The text blocks of a tool result, joined by newlines.
pub fn result_text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}
