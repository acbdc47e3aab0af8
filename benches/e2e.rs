//! The end-to-end bench driver: the release `forgelens` binary over stdio against a fast fake
//! forge in this process, and optionally peer MCP servers against the same forge.
//!
//! Run: `cargo bench --bench e2e` (forgelens alone, no network) or
//! `cargo bench --bench e2e -- --peers FILE` (what `scripts/bench-peers.sh` does). Options:
//! `--reads N` (timed requests per operation, default 2000), `--rss-reads N` (reads before
//! the peak RSS is taken, default 10000), `--cold-starts N` (default 20), `--forge-delay-ms N`
//! (the forge waits this long before each answer, default 0), `--out FILE` (also write the
//! report there). It prints a markdown report; docs/performance.md records one.
//!
//! What it measures, per server:
//!
//! - **cold start**: from spawning the process to reading its `initialize` answer;
//! - **latency**: median and p99 of `resources/read` and `tools/call` for the same entities,
//!   each timed request followed by the **floor**: the very upstream URLs that request made
//!   (captured by the forge), fetched directly and concurrently by a keep-alive HTTP client;
//! - **RSS**: after `initialize` and a full `tools/list` (what a client does first), and the
//!   peak (`VmHWM`) after `--rss-reads` reads;
//! - **bytes**: the text an agent receives against the raw bodies the forge sent for it.
//!
//! The client is a plain line-delimited JSON-RPC client rather than a full MCP client library,
//! so the latency is the server's and the pipe's, not a client library's. Peers are described
//! by a JSON file (see `scripts/bench-peers.sh`); one that cannot start or answer is reported
//! as such and the run goes on.

#[allow(dead_code)]
#[path = "support/world.rs"]
mod world;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

const TOKEN: &str = "bench-token-0123456789";
/// No answer within this long means the server is stuck; the driver says so and moves on.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// The fake forge: every body serialized once at start, lists cut by `page`/`limit` from
// pre-serialized items, so an answer costs the forge a lookup and a copy.

enum Answer {
    Object(Vec<u8>),
    /// A list the forge pages, with `X-Total-Count`.
    Paged(Vec<Vec<u8>>),
    /// A list the forge returns whole whatever is asked (issue comments).
    Whole(Vec<u8>),
}

struct Forge {
    routes: HashMap<String, Answer>,
    delay: Duration,
    recording: AtomicBool,
    /// `path?query` and body length of each request while recording.
    recorded: Mutex<Vec<(String, usize)>>,
    misses: AtomicU64,
    missed: Mutex<Vec<String>>,
}

impl Forge {
    fn world(delay: Duration) -> Forge {
        let mut routes = HashMap::new();
        let repo = format!("/api/v1/repos/{}/{}", world::OWNER, world::REPO);
        let object = |v: Value| Answer::Object(v.to_string().into_bytes());
        let items = |v: Vec<Value>| v.iter().map(|i| i.to_string().into_bytes()).collect();
        let whole = |v: Vec<Value>| Answer::Whole(Value::Array(v).to_string().into_bytes());
        routes.insert(
            "/api/v1/version".into(),
            object(json!({"version": "11.0.1+gitea-1.22.0"})),
        );
        routes.insert(
            "/api/v1/settings/api".into(),
            object(world::fixture("settings_api.json")),
        );
        routes.insert("/api/v1/user".into(), object(world::user("alice")));
        routes.insert(repo.clone(), object(world::repo()));
        routes.insert(
            format!("{repo}/issues/{}", world::ISSUE),
            object(world::issue(world::ISSUE_COMMENTS)),
        );
        routes.insert(
            format!("{repo}/issues/{}/comments", world::ISSUE),
            whole(world::comments(world::ISSUE, world::ISSUE_COMMENTS)),
        );
        routes.insert(
            format!("{repo}/pulls/{}", world::PULL),
            object(world::pull()),
        );
        routes.insert(
            format!("{repo}/issues/{}/comments", world::PULL),
            whole(world::comments(world::PULL, world::PULL_COMMENTS)),
        );
        routes.insert(
            format!("{repo}/pulls/{}/reviews", world::PULL),
            Answer::Paged(items(world::reviews())),
        );
        routes.insert(
            format!("{repo}/labels"),
            Answer::Paged(items(world::labels())),
        );
        routes.insert(
            format!("{repo}/git/commits/{}", world::SHA),
            object(world::commit()),
        );
        Forge {
            routes,
            delay,
            recording: AtomicBool::new(false),
            recorded: Mutex::new(Vec::new()),
            misses: AtomicU64::new(0),
            missed: Mutex::new(Vec::new()),
        }
    }

    fn answer(&self, uri: &Uri) -> (StatusCode, Option<u64>, Vec<u8>) {
        let Some(answer) = self.routes.get(uri.path()) else {
            self.misses.fetch_add(1, Ordering::Relaxed);
            let mut missed = self.missed.lock().expect("not poisoned");
            if missed.len() < 20 {
                missed.push(uri.to_string());
            }
            let body =
                json!({"errors": null, "message": "The target couldn't be found.", "url": ""});
            return (StatusCode::NOT_FOUND, None, body.to_string().into_bytes());
        };
        match answer {
            Answer::Object(body) | Answer::Whole(body) => (StatusCode::OK, None, body.clone()),
            Answer::Paged(items) => {
                let query = |name: &str| {
                    uri.query()?
                        .split('&')
                        .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
                        .and_then(|v| v.parse::<usize>().ok())
                        .filter(|&n| n > 0)
                };
                // Forgejo's defaults: page 1, limit 30, at most 50.
                let page = query("page").unwrap_or(1);
                let limit = query("limit").unwrap_or(30).min(50);
                let mut body = vec![b'['];
                for (i, item) in items
                    .iter()
                    .skip((page - 1) * limit)
                    .take(limit)
                    .enumerate()
                {
                    if i > 0 {
                        body.push(b',');
                    }
                    body.extend_from_slice(item);
                }
                body.push(b']');
                (StatusCode::OK, Some(items.len() as u64), body)
            }
        }
    }
}

async fn serve_forge(State(forge): State<Arc<Forge>>, uri: Uri) -> Response {
    if !forge.delay.is_zero() {
        tokio::time::sleep(forge.delay).await;
    }
    let (status, total, body) = forge.answer(&uri);
    if forge.recording.load(Ordering::Relaxed) {
        forge
            .recorded
            .lock()
            .expect("not poisoned")
            .push((uri.to_string(), body.len()));
    }
    let mut response = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json;charset=utf-8");
    if let Some(total) = total {
        response = response.header("x-total-count", total);
    }
    response.body(Body::from(body)).expect("a valid response")
}

/// Starts the forge on its own thread and runtime, so it never waits on the driver.
fn start_forge(delay: Duration) -> (Arc<Forge>, SocketAddr) {
    let forge = Arc::new(Forge::world(delay));
    let (tx, rx) = std::sync::mpsc::channel();
    let state = forge.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the forge");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind 127.0.0.1:0");
            tx.send(listener.local_addr().expect("an address"))
                .expect("the driver waits for the address");
            let app = axum::Router::new().fallback(serve_forge).with_state(state);
            axum::serve(listener, app).await.expect("the forge serves");
        });
    });
    let addr = rx.recv().expect("the forge reports its address once bound");
    (forge, addr)
}

// ---------------------------------------------------------------------------------------------
// Servers and the JSON-RPC client.

/// How to start one MCP server over stdio.
#[derive(Clone)]
struct Launch {
    name: String,
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// One thing to ask a server: a resource read or a tool call, named for the entity.
#[derive(Clone)]
struct Op {
    entity: &'static str,
    method: &'static str,
    params: Value,
}

impl Op {
    fn read(entity: &'static str, uri: String) -> Op {
        Op {
            entity,
            method: "resources/read",
            params: json!({"uri": uri}),
        }
    }

    fn call(entity: &'static str, tool: &str, arguments: Value) -> Op {
        Op {
            entity,
            method: "tools/call",
            params: json!({"name": tool, "arguments": arguments}),
        }
    }

    fn label(&self) -> String {
        match self.method {
            "resources/read" => format!("read {}", self.entity),
            _ => format!(
                "call {} (`{}`)",
                self.entity,
                self.params["name"].as_str().unwrap_or("?")
            ),
        }
    }
}

/// What an answer carried for the agent.
#[derive(Default, Clone, Copy)]
struct Sizes {
    /// Every text block (resource contents or tool content).
    text: usize,
    /// The JSON block alone (the `application/json` content of a read; a call's text).
    json: usize,
    /// The whole JSON-RPC answer line.
    wire: usize,
}

struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl Session {
    /// Spawns the server and completes the handshake; returns the time to the `initialize`
    /// answer.
    async fn start(launch: &Launch) -> Result<(Session, Duration), String> {
        let log = std::env::temp_dir().join(format!(
            "forgelens-e2e-{}.log",
            launch
                .name
                .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        ));
        let stderr = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let started = Instant::now();
        let mut child = tokio::process::Command::new(&launch.program)
            .args(&launch.args)
            .env_clear()
            .envs(launch.env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", launch.program))?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let mut session = Session {
            child,
            stdin,
            stdout,
            next_id: 1,
            line: String::new(),
        };
        let init = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "forgelens-e2e", "version": "0"}
        });
        session
            .request("initialize", init)
            .await
            .map_err(|e| format!("initialize failed: {e} (stderr in {})", log.display()))?;
        let cold = started.elapsed();
        session
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok((session, cold))
    }

    async fn send(&mut self, message: &Value) -> Result<(), String> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("write: {e}"))
    }

    /// One request; its `result`, or the error as text. Requests from the server are refused.
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            self.line.clear();
            let read = tokio::time::timeout(ANSWER_TIMEOUT, self.stdout.read_line(&mut self.line));
            match read.await {
                Err(_) => return Err(format!("no answer to {method} within {ANSWER_TIMEOUT:?}")),
                Ok(Err(e)) => return Err(format!("read: {e}")),
                Ok(Ok(0)) => return Err("the server closed stdout".into()),
                Ok(Ok(_)) => {}
            }
            let Ok(mut message) = serde_json::from_str::<Value>(&self.line) else {
                continue;
            };
            if message.get("method").is_some() {
                if let Some(their_id) = message.get("id") {
                    let refusal = json!({"jsonrpc": "2.0", "id": their_id,
                        "error": {"code": -32601, "message": "the bench client offers nothing"}});
                    self.send(&refusal).await?;
                }
                continue;
            }
            if message["id"] != id {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(error.to_string());
            }
            return Ok(message["result"].take());
        }
    }

    /// Lists every tool, page after page, as a client does before its first call.
    async fn list_tools(&mut self) -> Result<(), String> {
        let mut cursor = None::<String>;
        loop {
            let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
            let page = self.request("tools/list", params).await?;
            match page["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(()),
            }
        }
    }

    /// Runs `op`; the sizes of what came back, or why it failed.
    async fn run(&mut self, op: &Op) -> Result<Sizes, String> {
        let result = self.request(op.method, op.params.clone()).await?;
        let wire = self.line.len();
        let texts = |items: &Value| -> Vec<(String, usize)> {
            items
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|c| {
                            let text = c["text"].as_str()?;
                            let mime = c["mimeType"].as_str().unwrap_or("").to_owned();
                            Some((mime, text.len()))
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        if op.method == "resources/read" {
            let blocks = texts(&result["contents"]);
            Ok(Sizes {
                text: blocks.iter().map(|(_, n)| n).sum(),
                json: blocks
                    .iter()
                    .find(|(m, _)| m == "application/json")
                    .map_or(0, |(_, n)| *n),
                wire,
            })
        } else {
            let blocks = texts(&result["content"]);
            if result["isError"] == true {
                let first = result["content"][0]["text"].as_str().unwrap_or("");
                return Err(format!(
                    "isError: {}",
                    first.chars().take(200).collect::<String>()
                ));
            }
            let text = blocks.iter().map(|(_, n)| n).sum();
            Ok(Sizes {
                text,
                json: text,
                wire,
            })
        }
    }

    /// A `VmRSS`/`VmHWM`-style line of `/proc/<pid>/status`, in KiB.
    fn memory(&self, key: &str) -> Option<u64> {
        let pid = self.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    async fn stop(mut self) {
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_secs(2), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Measuring.

struct Options {
    reads: usize,
    rss_reads: usize,
    cold_starts: usize,
    forge_delay: Duration,
    peers: Option<PathBuf>,
    out: Option<PathBuf>,
}

impl Options {
    fn parse() -> Options {
        let mut o = Options {
            reads: 2000,
            rss_reads: 10_000,
            cold_starts: 20,
            forge_delay: Duration::ZERO,
            peers: None,
            out: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
            let number = |v: String| -> usize {
                v.parse()
                    .unwrap_or_else(|_| panic!("{arg}: `{v}` is not a number"))
            };
            match arg.as_str() {
                "--reads" => o.reads = number(value()),
                "--rss-reads" => o.rss_reads = number(value()),
                "--cold-starts" => o.cold_starts = number(value()),
                "--forge-delay-ms" => o.forge_delay = Duration::from_millis(number(value()) as u64),
                "--peers" => o.peers = Some(PathBuf::from(value())),
                "--out" => o.out = Some(PathBuf::from(value())),
                // `cargo bench` passes `--bench`; a filter or other harness flag means nothing here.
                _ => {}
            }
        }
        o
    }
}

/// Median and p99 of a sample, in microseconds.
fn summary(mut sample: Vec<Duration>) -> (f64, f64) {
    sample.sort();
    let at = |q: f64| {
        let i = ((sample.len() as f64 * q).ceil() as usize).clamp(1, sample.len()) - 1;
        sample[i].as_secs_f64() * 1e6
    };
    (at(0.5), at(0.99))
}

/// Fetches `urls` from the forge directly and concurrently, reading every body.
async fn fetch_direct(http: &reqwest::Client, base: &str, urls: &[String]) -> usize {
    let fetches = urls.iter().map(|u| async move {
        let response = http
            .get(format!("{base}{u}"))
            .header("authorization", format!("token {TOKEN}"))
            .send()
            .await
            .expect("the forge answers");
        response.bytes().await.expect("the body arrives").len()
    });
    futures::future::join_all(fetches).await.into_iter().sum()
}

struct OpResult {
    op: Op,
    upstream: Vec<(String, usize)>,
    sizes: Result<Sizes, String>,
    latency: Option<((f64, f64), (f64, f64))>,
}

struct ServerResult {
    name: String,
    cold: Result<(f64, f64, f64), String>,
    /// `VmRSS` and its anonymous part after `initialize` and `tools/list`, KiB.
    idle_kib: Option<(u64, u64)>,
    /// Requests served, `VmHWM`, and the anonymous part of the RSS then, KiB.
    peak: Option<(usize, u64, u64)>,
    ops: Vec<OpResult>,
}

async fn measure(
    launch: &Launch,
    ops: &[Op],
    forge: &Forge,
    base: &str,
    http: &reqwest::Client,
    options: &Options,
) -> ServerResult {
    eprintln!("== {}", launch.name);
    let mut result = ServerResult {
        name: launch.name.clone(),
        cold: Err(String::new()),
        idle_kib: None,
        peak: None,
        ops: Vec::new(),
    };
    let mut colds = Vec::new();
    for _ in 0..options.cold_starts.max(1) {
        match Session::start(launch).await {
            Ok((session, cold)) => {
                colds.push(cold);
                session.stop().await;
            }
            Err(e) => {
                result.cold = Err(e);
                return result;
            }
        }
    }
    colds.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    result.cold = Ok((
        ms(colds[colds.len() / 2]),
        ms(colds[0]),
        ms(colds[colds.len() - 1]),
    ));

    let (mut session, _) = match Session::start(launch).await {
        Ok(s) => s,
        Err(e) => {
            result.cold = Err(e);
            return result;
        }
    };
    if let Err(e) = session.list_tools().await {
        eprintln!("{}: tools/list failed: {e}", launch.name);
    }
    result.idle_kib = session.memory("VmRSS").zip(session.memory("RssAnon"));
    let mut reads = 0;
    for op in ops {
        // One recorded run: the upstream URLs this request makes, and their raw bytes.
        forge.recorded.lock().expect("not poisoned").clear();
        forge.recording.store(true, Ordering::SeqCst);
        let sizes = session.run(op).await;
        forge.recording.store(false, Ordering::SeqCst);
        let upstream = std::mem::take(&mut *forge.recorded.lock().expect("not poisoned"));
        reads += 1;
        let latency = if sizes.is_ok() {
            let urls: Vec<String> = upstream.iter().map(|(u, _)| u.clone()).collect();
            let (mut timed, mut floor) = (Vec::new(), Vec::new());
            let warm = options.reads / 10;
            for i in 0..warm + options.reads {
                let t = Instant::now();
                if let Err(e) = session.run(op).await {
                    eprintln!("{}: {} failed on repeat: {e}", launch.name, op.label());
                    break;
                }
                let d = t.elapsed();
                let t = Instant::now();
                fetch_direct(http, base, &urls).await;
                let f = t.elapsed();
                if i >= warm {
                    timed.push(d);
                    floor.push(f);
                }
            }
            reads += timed.len() + warm;
            (!timed.is_empty()).then(|| (summary(timed), summary(floor)))
        } else {
            None
        };
        if let Err(e) = &sizes {
            eprintln!("{}: {} failed: {e}", launch.name, op.label());
        }
        result.ops.push(OpResult {
            op: op.clone(),
            upstream,
            sizes,
            latency,
        });
    }
    // More reads, cycling through what works, up to the count the peak RSS is taken after.
    let working: Vec<&Op> = result
        .ops
        .iter()
        .filter(|r| r.sizes.is_ok())
        .map(|r| &r.op)
        .collect();
    if !working.is_empty() {
        let mut i = 0;
        while reads < options.rss_reads {
            if session.run(working[i % working.len()]).await.is_err() {
                break;
            }
            reads += 1;
            i += 1;
        }
        result.peak = session
            .memory("VmHWM")
            .zip(session.memory("RssAnon"))
            .map(|(hwm, anon)| (reads, hwm, anon));
    }
    session.stop().await;
    result
}

// ---------------------------------------------------------------------------------------------
// Servers to measure.

fn forgelens(base: &str) -> (Launch, Vec<Op>) {
    let launch = Launch {
        name: "forgelens".into(),
        program: env!("CARGO_BIN_EXE_forgelens").into(),
        args: Vec::new(),
        env: vec![
            ("FORGEJO_URL".into(), base.to_owned()),
            ("FORGEJO_TOKEN".into(), TOKEN.into()),
        ],
    };
    let repo = format!("forgejo://repo/{}/{}", world::OWNER, world::REPO);
    let args = json!({"owner": world::OWNER, "repo": world::REPO});
    let with = |k: &str, v: Value| {
        let mut a = args.clone();
        a[k] = v;
        a
    };
    let ops = vec![
        Op::read("issue", format!("{repo}/issue/{}", world::ISSUE)),
        Op::read("labels", format!("{repo}/labels")),
        Op::read("commit", format!("{repo}/commit/{}", world::SHA)),
        Op::read("pr", format!("{repo}/pr/{}", world::PULL)),
        Op::read("repo", repo.clone()),
        Op::call("issue", "get_issue", with("index", json!(world::ISSUE))),
        Op::call("labels", "list_repo_labels", args.clone()),
        Op::call("commit", "get_commit", with("sha", json!(world::SHA))),
    ];
    (launch, ops)
}

/// The peers of the `--peers` file: `[{name, command, args?, env, ops: {entity: {tool,
/// arguments}}}]`. In strings, `{forge}` and `{token}` are the forge's URL and the token, and
/// `{owner}`, `{repo}`, `{sha}` the world's names; the strings `"{issue}"` and `"{pull}"`
/// become the numbers.
fn peers(file: &PathBuf, base: &str) -> Vec<Result<(Launch, Vec<Op>), String>> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => return vec![Err(format!("{}: {e}", file.display()))],
    };
    let specs: Vec<Value> = match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(e) => return vec![Err(format!("{}: {e}", file.display()))],
    };
    fn fill(v: &Value, base: &str) -> Value {
        match v {
            Value::String(s) if s == "{issue}" => json!(world::ISSUE),
            Value::String(s) if s == "{pull}" => json!(world::PULL),
            Value::String(s) => json!(
                s.replace("{forge}", base)
                    .replace("{token}", TOKEN)
                    .replace("{owner}", world::OWNER)
                    .replace("{repo}", world::REPO)
                    .replace("{sha}", world::SHA)
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, base)).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), fill(x, base))).collect())
            }
            other => other.clone(),
        }
    }
    specs
        .iter()
        .map(|spec| {
            let spec = fill(spec, base);
            let name = spec["name"]
                .as_str()
                .ok_or("a peer without a name")?
                .to_owned();
            if let Some(why) = spec["unavailable"].as_str() {
                return Err(format!("{name}: {why}"));
            }
            let program = spec["command"]
                .as_str()
                .ok_or(format!("{name}: no command"))?
                .to_owned();
            let strings = |v: &Value| -> Vec<String> {
                v.as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            // A Python server needs to find its interpreter's libraries and a home.
            let mut env: Vec<(String, String)> = ["PATH", "HOME", "LANG"]
                .iter()
                .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
                .collect();
            if let Some(vars) = spec["env"].as_object() {
                env.extend(
                    vars.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))),
                );
            }
            let mut ops = Vec::new();
            for entity in ["issue", "labels", "commit"] {
                let Some(op) = spec["ops"].get(entity).filter(|o| !o.is_null()) else {
                    continue;
                };
                let tool = op["tool"]
                    .as_str()
                    .ok_or(format!("{name}: {entity} without a tool"))?;
                ops.push(Op::call(entity, tool, op["arguments"].clone()));
            }
            Ok((
                Launch {
                    name,
                    program,
                    args: strings(&spec["args"]),
                    env,
                },
                ops,
            ))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The report.

fn report(results: &[ServerResult], skipped: &[String], options: &Options) -> String {
    let mut out = String::new();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|(_, v)| v.trim().to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    // Other work on the machine moves the tails; the load average at the end says how much.
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into());
    out.push_str(&format!(
        "Machine: {cores} cores, {cpu}, load average {load} at the end. Timed requests per \
         operation: {} (after {} warm-up); peak RSS after at least {} requests; cold start \
         over {} starts; forge delay {} ms.\n\n",
        options.reads,
        options.reads / 10,
        options.rss_reads,
        options.cold_starts,
        options.forge_delay.as_millis()
    ));
    out.push_str("| server | cold start to `initialize` (median, min–max) | RSS after `initialize` and `tools/list` (anonymous part) | peak RSS (VmHWM) after N requests | anonymous RSS then |\n|---|---|---|---|---|\n");
    for r in results {
        let cold = match &r.cold {
            Ok((m, lo, hi)) => format!("{m:.1} ms ({lo:.1}–{hi:.1})"),
            Err(e) => format!("failed: {e}"),
        };
        let mib = |k: u64| format!("{:.1} MiB", k as f64 / 1024.0);
        out.push_str(&format!(
            "| {} | {cold} | {} | {} | {} |\n",
            r.name,
            r.idle_kib.map_or("—".into(), |(rss, anon)| format!(
                "{} ({})",
                mib(rss),
                mib(anon)
            )),
            r.peak.map_or("—".into(), |(n, hwm, _)| format!(
                "{} after {n}",
                mib(hwm)
            )),
            r.peak.map_or("—".into(), |(_, _, anon)| mib(anon)),
        ));
    }
    out.push_str("\n| server | request | upstream requests | median | p99 | floor median | floor p99 | median / floor |\n|---|---|---|---|---|---|---|---|\n");
    for r in results {
        for o in &r.ops {
            let cells = match (&o.sizes, o.latency) {
                (Ok(_), Some(((m, p), (fm, fp)))) => format!(
                    "{m:.0} µs | {p:.0} µs | {fm:.0} µs | {fp:.0} µs | {:.2}×",
                    m / fm
                ),
                (Err(e), _) => format!(
                    "failed: {} | | | |",
                    e.chars().take(120).collect::<String>()
                ),
                _ => "— | | | |".into(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {cells} |\n",
                r.name,
                o.op.label(),
                o.upstream.len()
            ));
        }
    }
    out.push_str("\n| server | request | raw forge bytes (every upstream body) | answer bytes (every text block) | answer / raw | JSON block | JSON / raw | JSON-RPC line |\n|---|---|---|---|---|---|---|---|\n");
    for r in results {
        for o in &r.ops {
            let raw: usize = o.upstream.iter().map(|(_, n)| n).sum();
            let pct = |a: usize| {
                if raw == 0 {
                    "—".to_owned()
                } else {
                    format!("{:.0}%", 100.0 * a as f64 / raw as f64)
                }
            };
            let row = match &o.sizes {
                Ok(s) => format!(
                    "{raw} | {} | {} | {} | {} | {}",
                    s.text,
                    pct(s.text),
                    s.json,
                    pct(s.json),
                    s.wire
                ),
                Err(_) => "failed | | | | | ".into(),
            };
            out.push_str(&format!("| {} | {} | {row} |\n", r.name, o.op.label()));
        }
    }
    out.push_str("\nUpstream requests each request made (as the forge received them):\n\n");
    for r in results {
        for o in &r.ops {
            let urls: Vec<String> = o.upstream.iter().map(|(u, _)| format!("`{u}`")).collect();
            out.push_str(&format!(
                "- {}, {}: {}\n",
                r.name,
                o.op.label(),
                urls.join(", ")
            ));
        }
    }
    for s in skipped {
        out.push_str(&format!("\nNot measured: {s}\n"));
    }
    out
}

fn main() {
    let options = Options::parse();
    let (forge, addr) = start_forge(options.forge_delay);
    let base = format!("http://{addr}");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime for the driver");
    // reqwest is built without a TLS provider of its own; forgelens installs ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().expect("an HTTP client");
    let mut servers = vec![forgelens(&base)];
    let mut skipped = Vec::new();
    if let Some(file) = &options.peers {
        for peer in peers(file, &base) {
            match peer {
                Ok(p) => servers.push(p),
                Err(e) => skipped.push(e),
            }
        }
    }
    let mut results = Vec::new();
    for (launch, ops) in &servers {
        results.push(runtime.block_on(measure(launch, ops, &forge, &base, &http, &options)));
    }
    let misses = forge.misses.load(Ordering::Relaxed);
    if misses > 0 {
        let missed = forge.missed.lock().expect("not poisoned").join(", ");
        eprintln!("the forge answered 404 to {misses} request(s), e.g. {missed}");
    }
    let text = report(&results, &skipped, &options);
    println!("{text}");
    if let Some(out) = &options.out {
        std::fs::write(out, &text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
}
