//! Looking at a server from outside: its memory and descriptors in `/proc`, and HTTP/1.1
//! spoken by hand for what a client library would never send.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::HttpServer;

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
