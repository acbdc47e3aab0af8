//! Test support: the fake forge, its fixtures, and two ways to drive the real binary — as an MCP
//! server through rmcp's client over a child process, and as a command line.

pub mod fake_forge;
pub mod fixtures;
pub mod tool_world;

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorData, ReadResourceRequestParams, ReadResourceResult,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;

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

    /// Spawns the binary and completes the MCP handshake.
    pub async fn start(self) -> Server {
        let mut command = tokio::process::Command::new(BIN);
        command.env_clear().envs(self.env).args(self.args);
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .expect("the forgelens binary starts");
        let log = Arc::new(Mutex::new(String::new()));
        if let Some(mut stderr) = stderr {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    log.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let client = ().serve(transport).await.expect("the MCP handshake succeeds");
        Server { client, log }
    }
}

/// A running server and its client.
pub struct Server {
    pub client: RunningService<RoleClient, ()>,
    log: Arc<Mutex<String>>,
}

impl Server {
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

    /// What the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

/// The output of one run of the command line.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
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
