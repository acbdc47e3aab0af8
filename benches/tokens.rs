//! What a server's tool list costs a model's context: for each configuration of the release
//! `forgelens` binary (and any peer MCP server named on the command line), the tools
//! `tools/list` offers and their cl100k tokens — each tool's `name`, `description` and
//! `inputSchema` as JSON, which is what clients hand the model. A token count is
//! deterministic; this prints the table docs/performance.md records.
//!
//! Run: `cargo bench --bench tokens`, or with peers:
//! `cargo bench --bench tokens -- --peer 'NAME=COMMAND ARGS…'` (spoken to over stdio; every
//! `FORGEJO_*`/`GITEA_*` variable of this process is passed on). The generated catalog is made
//! from the Forgejo spec in `../shared/swagger/` when it is there, else from the project's mini
//! spec.

#[path = "../tests/support/tokens.rs"]
mod tokens;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// No answer within this long means the server is stuck.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// One row of the table.
struct Row {
    name: String,
    tools: usize,
    tokens: usize,
    /// Tools and tokens without forgelens's meta-tools, where there are any.
    curated: Option<(usize, usize)>,
}

/// A line-delimited JSON-RPC client over a child's stdio.
struct Client {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    id: u64,
}

impl Client {
    fn start(program: &str, args: &[String]) -> Result<Client, String> {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .env(
                "FORGEJO_URL",
                std::env::var("FORGEJO_URL").unwrap_or("http://127.0.0.1:9".into()),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        Ok(Client {
            stdin: child.stdin.take().expect("stdin is piped"),
            lines: BufReader::new(child.stdout.take().expect("stdout is piped")).lines(),
            _child: child,
            id: 0,
        })
    }

    async fn send(&mut self, message: Value) -> Result<(), String> {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .map_err(|e| e.to_string())
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            let line = tokio::time::timeout(ANSWER_TIMEOUT, self.lines.next_line())
                .await
                .map_err(|_| format!("no answer to {method}"))?
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("the server closed its output before answering {method}"))?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["id"] == json!(id) {
                return match message.get("result") {
                    Some(result) => Ok(result.clone()),
                    None => Err(format!("{method}: {}", message["error"])),
                };
            }
        }
    }
}

/// Every tool a stdio MCP server lists: `initialize`, then `tools/list` page by page.
async fn tools_of(program: &str, args: &[String]) -> Result<Vec<Value>, String> {
    let mut client = Client::start(program, args)?;
    client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "forgelens-tokens", "version": "1"}}),
        )
        .await?;
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await?;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = client.request("tools/list", params).await?;
        tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(tools),
        }
    }
}

fn row(name: &str, tools: &[Value]) -> Row {
    let meta = |t: &&Value| {
        [
            "search_tools",
            "describe_tools",
            "call_read_tool",
            "call_write_tool",
            "read_resource",
        ]
        .contains(&t["name"].as_str().unwrap_or(""))
    };
    let count = |list: &mut dyn Iterator<Item = &Value>| {
        list.fold((0, 0), |(n, t), tool| {
            (n + 1, t + tokens::tool_tokens(tool))
        })
    };
    let (n, all) = count(&mut tools.iter());
    let curated = tools
        .iter()
        .any(|t| meta(&t))
        .then(|| count(&mut tools.iter().filter(|t| !meta(t))));
    Row {
        name: name.to_owned(),
        tools: n,
        tokens: all,
        curated,
    }
}

/// The catalog `--catalog` serves: generated from the Forgejo spec when it is there.
fn catalog_file() -> (PathBuf, &'static str) {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/swagger/forgejo-15.0.3.swagger.json");
    let (spec, from) = match std::fs::read_to_string(&shared) {
        Ok(text) => (text, "Forgejo 15.0.3"),
        Err(_) => (
            include_str!("../tests/fixtures/mini.swagger.json").to_owned(),
            "the mini spec",
        ),
    };
    let (_, yaml) =
        forgelens::catalog::generate_text(&spec, Default::default()).expect("the spec generates");
    let path = std::env::temp_dir().join(format!("forgelens-tokens-{}.yaml", std::process::id()));
    std::fs::write(&path, yaml).expect("the catalog is written");
    (path, from)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let peers: Vec<(String, String)> = args
        .windows(2)
        .filter(|w| w[0] == "--peer")
        .filter_map(|w| {
            w[1].split_once('=')
                .map(|(n, c)| (n.to_owned(), c.to_owned()))
        })
        .collect();
    let (catalog, from) = catalog_file();
    let catalog = catalog.display().to_string();
    let bin = env!("CARGO_BIN_EXE_forgelens");
    let configurations: Vec<(&str, Vec<&str>)> = vec![
        ("forgelens (default: `core`)", vec![]),
        ("forgelens `core --read-only`", vec!["--read-only"]),
        ("forgelens `core --catalog`", vec!["--catalog", &catalog]),
        ("forgelens `core --sudo`", vec!["--sudo"]),
        ("forgelens `full`", vec!["--tool-surface", "full"]),
        (
            "forgelens `full --read-only`",
            vec!["--tool-surface", "full", "--read-only"],
        ),
        (
            "forgelens `full --sudo`",
            vec!["--tool-surface", "full", "--sudo"],
        ),
        (
            "forgelens `full --catalog`",
            vec!["--tool-surface", "full", "--catalog", &catalog],
        ),
    ];
    let mut rows = Vec::new();
    for (name, args) in configurations {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        match tools_of(bin, &args).await {
            Ok(tools) => rows.push(row(name, &tools)),
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
    for (name, command) in &peers {
        let mut words = command.split_whitespace().map(str::to_owned);
        let Some(program) = words.next() else {
            continue;
        };
        match tools_of(&program, &words.collect::<Vec<_>>()).await {
            Ok(tools) => rows.push(row(name, &tools)),
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
    let _ = std::fs::remove_file(&catalog);
    println!("cl100k tokens of each listed tool's name, description and inputSchema as JSON");
    println!("(`--catalog`: the tools generated from {from}).\n");
    println!("| server | tools listed | tokens | per tool | without the meta-tools |");
    println!("|---|---|---|---|---|");
    for r in rows {
        let without = match r.curated {
            Some((n, t)) if n > 0 => {
                format!("{n} tools, {t} tokens, {:.1} per tool", t as f64 / n as f64)
            }
            _ => "—".to_owned(),
        };
        println!(
            "| {} | {} | {} | {:.1} | {without} |",
            r.name,
            r.tools,
            r.tokens,
            r.tokens as f64 / r.tools.max(1) as f64
        );
    }
}
