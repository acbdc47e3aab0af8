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

/// `resources/templates/list` requests written from a task while nobody reads the answers.
pub struct Unread {
    /// How many requests were written so far.
    pub written: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The writer; it gives stdin back when it has written them all.
    pub writer: tokio::task::JoinHandle<ChildStdin>,
}

impl Raw {
    /// Starts writing `count` `resources/templates/list` requests (ids 1 to `count`) on stdin,
    /// which the writer holds until it is done. Each answer is large (about 11 KB) and cheap to
    /// make, so the pipe fills quickly and the server's own work stays small.
    pub fn write_unread(&mut self, count: usize) -> Unread {
        let mut stdin = self.stdin.take().expect("stdin is open");
        let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = written.clone();
        let writer = tokio::spawn(async move {
            for id in 1..=count {
                let line =
                    json!({"jsonrpc": "2.0", "id": id, "method": "resources/templates/list"});
                stdin
                    .write_all(format!("{line}\n").as_bytes())
                    .await
                    .unwrap();
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            stdin
        });
        Unread { written, writer }
    }
}

impl Unread {
    /// Polls until the writer has made no progress for half a second (the server stopped
    /// reading) and returns how many it wrote; `None` when it finished first, or did not settle
    /// within 20 s.
    pub async fn stalled(&self) -> Option<usize> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        let (mut last, mut still) = (usize::MAX, 0);
        while still < 25 {
            if self.writer.is_finished() || tokio::time::Instant::now() >= deadline {
                return None;
            }
            let now = self.written.load(std::sync::atomic::Ordering::SeqCst);
            (last, still) = if now == last {
                (now, still + 1)
            } else {
                (now, 0)
            };
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Some(last)
    }
}
