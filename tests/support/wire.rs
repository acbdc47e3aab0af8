//! Looking at a server from outside: its memory and descriptors in `/proc`, and HTTP/1.1
//! spoken by hand for what a client library would never send.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{FakeForge, HttpServer, Launch, Server};

/// Resident memory of a process, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Open descriptors of a process (0 once it is gone).
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| dir.count())
        .unwrap_or(0)
}

/// The `host:port` of an HTTP server's base URL.
pub fn authority(http: &HttpServer) -> String {
    http.base.trim_start_matches("http://").to_owned()
}

/// Reads one HTTP/1.1 response (headers, then a `Content-Length` body) from `stream`, within
/// 20 s.
pub async fn read_response(stream: &mut tokio::net::TcpStream) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if bytes.len() >= end + 4 + length {
                return Ok(text);
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut chunk))
            .await
            .map_err(|_| std::io::Error::other("no answer within 20 s"))??;
        if n == 0 {
            return Err(std::io::Error::other(format!(
                "closed after {} bytes",
                bytes.len()
            )));
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

/// Sends `head` (request line and headers, without the blank line) and `body` on a new
/// connection and returns the response.
pub async fn exchange(address: &str, head: &str, body: &str) -> std::io::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    let request = format!("{head}\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    stream.write_all(request.as_bytes()).await?;
    read_response(&mut stream).await
}

/// An HTTP server of one request slot (`--max-concurrent-requests 1`) whose slot is held by a
/// tool call waiting on the gated forge path `/orgs/acme/labels`: every other POST meets a
/// 503 until the gate opens. The call's task gives its client back when it is answered.
pub struct HeldSlot {
    pub http: HttpServer,
    pub gate: std::sync::Arc<tokio::sync::Semaphore>,
    pub held: tokio::task::JoinHandle<Server>,
}

impl HeldSlot {
    pub async fn start(forge: &FakeForge, launch: Launch) -> HeldSlot {
        let gate = forge.gate("/orgs/acme/labels");
        let http = launch
            .arg("--max-concurrent-requests")
            .arg("1")
            .start_http()
            .await;
        let server = http.connect(None).await;
        let held = tokio::spawn(async move {
            server
                .call_ok("list_org_labels", serde_json::json!({"org": "acme"}))
                .await;
            server
        });
        forge
            .wait_for("the request holding the only slot", |log| {
                log.iter().any(|r| r.path == "/orgs/acme/labels")
            })
            .await;
        HeldSlot { http, gate, held }
    }

    /// Opens the gate and ends the held call's client.
    pub async fn release(self) {
        self.gate.add_permits(1);
        self.held.await.unwrap().stop().await;
    }
}
