//! A stdio server spoken to line by line, for what rmcp's client would never send or would
//! hide (malformed lines, unread answers, repeated ids).

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{BIN, FakeForge};

/// A server spoken to line by line.
pub struct Raw {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

impl Raw {
    pub async fn start(forge: &FakeForge) -> Raw {
        Raw::start_with(forge, &[]).await
    }

    /// A server with extra environment variables.
    pub async fn start_with(forge: &FakeForge, env: &[(&str, &str)]) -> Raw {
        let mut child = Command::new(BIN)
            .env_clear()
            .env("FORGEJO_URL", forge.url())
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the binary starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut raw = Raw {
            child,
            stdin,
            stdout,
        };
        raw.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}).to_string())
            .await;
        assert_eq!(
            raw.answer_to(&json!(0)).await["result"]["serverInfo"]["name"],
            "forgelens"
        );
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        raw
    }

    pub async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next message whose id is `id` (others are skipped), within 20 s.
    pub async fn answer_to(&mut self, id: &Value) -> Value {
        let read = async {
            while let Some(line) = self.stdout.next_line().await.unwrap() {
                let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                if message.get("id") == Some(id) {
                    return message;
                }
            }
            panic!("stdout closed before the answer to {id}");
        };
        tokio::time::timeout(Duration::from_secs(20), read)
            .await
            .expect("an answer in time")
    }

    /// The next message with an id, whatever it is, within 20 s.
    pub async fn answer_to_any(&mut self) -> Value {
        let read = async {
            while let Some(line) = self.stdout.next_line().await.unwrap() {
                let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                if message.get("id").is_some() {
                    return message;
                }
            }
            panic!("stdout closed before another answer");
        };
        tokio::time::timeout(Duration::from_secs(20), read)
            .await
            .expect("an answer in time")
    }

    pub async fn read(&mut self, id: u64, uri: &str) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}}).to_string())
            .await;
        self.answer_to(&json!(id)).await
    }

    pub async fn exit_code(mut self) -> i32 {
        drop(self.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the process exits")
            .unwrap();
        status.code().unwrap_or(-1)
    }
}
