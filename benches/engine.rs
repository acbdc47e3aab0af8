//! Criterion benches of the engine alone: no socket, no process. Each one runs the real
//! compiled catalog of the shipped manifests on forge answers built in memory from
//! `support/world.rs`, so the figures are the engine's overhead and nothing else.
//!
//! Run: `cargo bench --bench engine` (all) or `cargo bench --bench engine -- read/issue`.
//! The figures and what they mean are in docs/performance.md.
//!
//! | bench | what it times |
//! |---|---|
//! | `route/issue` | parse, route and validate `forgejo://repo/acme/widgets/issue/12` |
//! | `read/issue_30_comments` | **the engine overhead of one issue read**: route, plan, follow-up, assemble (projection, bounding, markdown, serialization) |
//! | `copy/issue_answers` | one deep copy and drop of the two forge answers (a yardstick) |
//! | `assemble/issue_30_comments` | assemble alone, from the two answers |
//! | `project/issue_30_comments` | the issue's projection and its 30 comments' projections |
//! | `markdown/issue` | the issue's markdown block from its projected value |
//! | `serialize/issue` | the projected issue to JSON text |
//! | `bound/server_page_50` | a 50-item list cut to its first page of 30 |
//! | `read/comments_50` | a whole read of a 50-comment thread: page of 30, sentinel, JSON |
//! | `tools_list/curated` | `tools/list`, every page, through the MCP handler over an in-memory pipe |

#[allow(dead_code)]
#[path = "support/world.rs"]
mod world;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use forgelens::config::{Config, Flags};
use forgelens::engine::bound::{self, PageRequest};
use forgelens::engine::endpoint::Serving;
use forgelens::engine::project::{Context, Projection};
use forgelens::engine::render::Renderer;
use forgelens::engine::{Answer, Catalog, Read};
use forgelens::forge::{Body, Request, Response};
use forgelens::manifest::raw::{ProjectValue, ResourceDef};
use forgelens::manifest::{self, Sources};
use forgelens::mcp::Server;
use forgelens::service::Service;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The server's allocator, so the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ISSUE_URI: &str = "forgejo://repo/acme/widgets/issue/12";
const COMMENTS_URI: &str = "forgejo://repo/acme/widgets/issue/12/comments";

fn catalog() -> Catalog {
    forgelens::service::compile(&Sources::builtin()).expect("the shipped manifests compile")
}

/// The shipped manifests with every `| untrusted` mark and `untrusted:` text flag taken out.
fn unmarked_catalog() -> Catalog {
    let marks = regex::Regex::new(
        r" \| untrusted(\([^)]*\))?|\n\s+untrusted: (plain|markdown)|, untrusted: (plain|markdown)",
    )
    .expect("a constant pattern compiles");
    let strip = |source: forgelens::manifest::Source| forgelens::manifest::Source {
        text: marks.replace_all(&source.text, "").into_owned(),
        ..source
    };
    let shipped = Sources::builtin();
    let sources = Sources {
        resources: strip(shipped.resources),
        tools: strip(shipped.tools),
        search: shipped.search,
        catalog: None,
    };
    forgelens::service::compile(&sources).expect("the unmarked manifests compile")
}

/// What the forge of `world` answers to `request`; how many comments the issue thread has is
/// the only knob.
fn respond(request: &Request, comments: usize) -> Response {
    let issue_path = format!(
        "/repos/{}/{}/issues/{}",
        world::OWNER,
        world::REPO,
        world::ISSUE
    );
    let body = if request.path == issue_path {
        world::issue(comments)
    } else if request.path == format!("{issue_path}/comments") {
        Value::Array(world::comments(world::ISSUE, comments))
    } else {
        panic!("the bench world has no answer for {}", request.describe())
    };
    Response {
        status: 200,
        // The comments endpoint ignores paging and sends no paging headers.
        total_count: None,
        has_next: None,
        body: Body::Json(body),
    }
}

/// Every answer `read` needs, obtained the way the service obtains them: the plan, then
/// follow-ups until none is left.
fn answers(read: &Read<'_>, comments: usize) -> Vec<Answer> {
    let mut all = Vec::new();
    let mut batch = read.plan().expect("the read plans");
    while !batch.is_empty() {
        all.extend(batch.into_iter().map(|p| Answer {
            slot: p.slot,
            result: Ok(respond(&p.request, comments)),
        }));
        batch = read.follow_up(&all).expect("the answers are complete");
    }
    all
}

/// What the server holds answers to by default.
fn serving() -> Serving {
    Serving {
        budget: forgelens::config::DEFAULT_MAX_ANSWER_BYTES,
        allow: None,
        instance: "forge.example".into(),
    }
}

/// The whole engine side of one read: what `Service::read` does minus the sending.
fn read_once(catalog: &Catalog, uri: &str, answers: Vec<Answer>) -> usize {
    let read = catalog.route(uri).expect("the URI routes");
    let planned = read.plan().expect("the read plans");
    debug_assert_eq!(planned.len(), answers.len());
    let more = read.follow_up(&answers).expect("no follow-up fails");
    debug_assert!(more.is_empty());
    let output = read
        .assemble(answers, &serving())
        .expect("the read assembles");
    output.blocks.iter().map(|b| b.text.len()).sum()
}

/// The shipped manifest's definition of resource `name`.
fn resource_def(name: &str) -> ResourceDef {
    let manifests = manifest::parse(&Sources::builtin()).expect("the shipped manifests parse");
    manifests
        .resources
        .resources
        .into_iter()
        .find(|r| r.name.value == name)
        .unwrap_or_else(|| panic!("resources.yaml has no `{name}`"))
}

/// A flat projection of the manifest compiled on its own (every field an expression).
fn flat(fields: &forgelens::manifest::raw::Projection) -> Projection {
    let pairs: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| match &v.value {
            ProjectValue::Expr(e) => (k.as_str(), e.as_str()),
            other => panic!("`{k}` is not a plain expression: {other:?}"),
        })
        .collect();
    Projection::compile_str(&pairs, &[]).expect("the manifest's expressions compile")
}

fn engine(c: &mut Criterion) {
    let catalog = catalog();
    let serving = serving();

    c.bench_function("route/issue", |b| {
        b.iter(|| {
            catalog
                .route(black_box(ISSUE_URI))
                .expect("routes")
                .args
                .len()
        })
    });

    let read = catalog.route(ISSUE_URI).expect("the issue URI routes");
    let issue_answers = answers(&read, world::ISSUE_COMMENTS);
    eprintln!(
        "issue read: {} upstream answers, {} bytes of blocks",
        issue_answers.len(),
        read_once(&catalog, ISSUE_URI, issue_answers.clone())
    );
    c.bench_function("read/issue_30_comments", |b| {
        b.iter_batched(
            || issue_answers.clone(),
            |answers| read_once(&catalog, ISSUE_URI, answers),
            BatchSize::SmallInput,
        )
    });
    // The same read from manifests without `| untrusted`: what marking user-written text
    // costs, measured in the same run as the read it is part of.
    let unmarked = unmarked_catalog();
    c.bench_function("read/issue_30_comments_unmarked", |b| {
        b.iter_batched(
            || issue_answers.clone(),
            |answers| read_once(&unmarked, ISSUE_URI, answers),
            BatchSize::SmallInput,
        )
    });
    // What one deep copy (and drop) of the two answers costs: the unit of the clones the
    // assemble step makes of its bodies.
    c.bench_function("copy/issue_answers", |b| {
        b.iter(|| black_box(issue_answers.clone()).len())
    });
    c.bench_function("assemble/issue_30_comments", |b| {
        b.iter_batched(
            || issue_answers.clone(),
            |answers| {
                read.assemble(answers, &serving)
                    .expect("assembles")
                    .blocks
                    .len()
            },
            BatchSize::SmallInput,
        )
    });

    // The stages, each on its own, from the manifest's own definitions.
    let def = resource_def("issue");
    let issue_projection = flat(def.project.as_ref().expect("the issue projects"));
    let embed = &def
        .embed
        .get("recent_comments")
        .expect("the issue embeds comments")
        .value;
    let comment_projection = flat(embed.project.as_ref().expect("the embed projects"));
    let issue_body = world::issue(world::ISSUE_COMMENTS);
    let comments = world::comments(world::ISSUE, world::ISSUE_COMMENTS);
    c.bench_function("project/issue_30_comments", |b| {
        b.iter_batched(
            || comments.clone(),
            |comments| {
                let mut value = issue_projection.apply(&Context::of(&issue_body));
                let window = bound::newest(comments, 30);
                let items: Vec<Value> = window
                    .items
                    .iter()
                    .map(|i| comment_projection.apply(&Context::of(i)))
                    .collect();
                value["recent_comments"] = Value::Array(items);
                value
            },
            BatchSize::SmallInput,
        )
    });

    let output = read
        .assemble(issue_answers.clone(), &serving)
        .expect("the issue assembles");
    let projected: Value =
        serde_json::from_str(&output.blocks[0].text).expect("the JSON block parses");
    let mut renderer = Renderer::default();
    let template = &def
        .markdown
        .as_ref()
        .expect("the issue has markdown")
        .value
        .template
        .value;
    renderer
        .add("issue", template)
        .expect("the template compiles");
    // What the engine hands the renderer: only the fields the template reads.
    let read_fields: serde_json::Map<String, Value> = renderer
        .variables("issue")
        .into_iter()
        .filter_map(|name| Some((name.clone(), projected.get(&name)?.clone())))
        .collect();
    let context = Value::Object(read_fields);
    c.bench_function("markdown/issue", |b| {
        b.iter(|| {
            renderer
                .render("issue", black_box(&context), 20_000)
                .expect("renders")
                .len()
        })
    });
    c.bench_function("serialize/issue", |b| {
        b.iter(|| {
            serde_json::to_string(black_box(&projected))
                .expect("serializes")
                .len()
        })
    });

    let fifty = world::comments(world::ISSUE, 50);
    c.bench_function("bound/server_page_50", |b| {
        b.iter_batched(
            || fifty.clone(),
            |all| {
                bound::server_page(all, PageRequest::new(None, None, 30))
                    .items
                    .len()
            },
            BatchSize::SmallInput,
        )
    });
    let thread = catalog
        .route(COMMENTS_URI)
        .expect("the comments URI routes");
    let thread_answers = answers(&thread, 50);
    eprintln!(
        "50-comment thread: {} bytes of blocks",
        read_once(&catalog, COMMENTS_URI, thread_answers.clone())
    );
    c.bench_function("read/comments_50", |b| {
        b.iter_batched(
            || thread_answers.clone(),
            |answers| read_once(&catalog, COMMENTS_URI, answers),
            BatchSize::SmallInput,
        )
    });
}

/// A raw JSON-RPC client on one side of an in-memory pipe, the MCP handler on the other: what
/// `tools/list` costs the server (conversion, paging, serialization, framing), without a process.
struct Pipe {
    lines: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    next_id: u64,
    line: String,
}

impl Pipe {
    async fn start(sources: &Sources) -> Pipe {
        use rmcp::ServiceExt;
        // The forge is never contacted: tools/list reads the catalog only.
        let env = |k: &str| (k == "FORGEJO_URL").then(|| "http://127.0.0.1:9".to_owned());
        let config = Config::resolve(&Flags::default(), &env).expect("the config resolves");
        let service = Service::start(&config, sources, None).expect("the service starts");
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        tokio::spawn(async move {
            let running = Server::new(Arc::new(service))
                .serve((server_read, server_write))
                .await
                .expect("the handshake succeeds");
            let _ = running.waiting().await;
        });
        let (client_read, writer) = tokio::io::split(client);
        let mut pipe = Pipe {
            lines: BufReader::new(client_read),
            writer,
            next_id: 1,
            line: String::new(),
        };
        pipe.request(
            "initialize",
            serde_json::json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "forgelens-bench", "version": "0"}
            }),
        )
        .await;
        pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        pipe
    }

    async fn send(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.expect("write");
        self.writer.write_all(b"\n").await.expect("write");
    }

    /// Sends one request and returns its answer line's `result`, parsed.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&line.to_string()).await;
        loop {
            self.line.clear();
            let n = self.lines.read_line(&mut self.line).await.expect("read");
            assert!(n > 0, "the server closed the pipe");
            let answer: Value = serde_json::from_str(&self.line).expect("a JSON-RPC line");
            if answer["id"] == id {
                return answer["result"].clone();
            }
        }
    }

    /// Every page of `tools/list`; returns (tools, bytes of the answer lines). The client
    /// reads only the count and the cursor, so its own work stays small beside the server's.
    async fn list_tools(&mut self) -> (usize, usize) {
        #[derive(serde::Deserialize)]
        struct Line {
            id: u64,
            result: Page,
        }
        #[derive(serde::Deserialize)]
        struct Page {
            tools: Vec<serde::de::IgnoredAny>,
            #[serde(rename = "nextCursor")]
            next_cursor: Option<String>,
        }
        let (mut tools, mut bytes) = (0, 0);
        let mut cursor: Option<String> = None;
        loop {
            let id = self.next_id;
            self.next_id += 1;
            let params = match &cursor {
                Some(c) => serde_json::json!({"cursor": c}),
                None => serde_json::json!({}),
            };
            let request = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
            self.send(&request.to_string()).await;
            self.line.clear();
            self.lines.read_line(&mut self.line).await.expect("read");
            let line: Line = serde_json::from_str(&self.line).expect("a tools/list answer");
            assert_eq!(line.id, id, "the handler answers in order");
            bytes += self.line.len();
            tools += line.result.tools.len();
            match line.result.next_cursor {
                Some(next) => cursor = Some(next),
                None => return (tools, bytes),
            }
        }
    }
}

fn tools_list(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    // The curated tools of tools.yaml; `benches/tools_list.rs` times every generated tool.
    let variants = [("curated", Sources::builtin())];
    for (name, sources) in variants {
        let mut pipe = runtime.block_on(Pipe::start(&sources));
        let (tools, bytes) = runtime.block_on(pipe.list_tools());
        eprintln!("tools/list ({name}): {tools} tools, {bytes} bytes over every page");
        c.bench_function(&format!("tools_list/{name}"), |b| {
            b.iter(|| runtime.block_on(pipe.list_tools()))
        });
    }
}

criterion_group!(benches, engine, tools_list);
criterion_main!(benches);
