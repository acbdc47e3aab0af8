//! The HTTP server's connection slots against clients that would hold them: a body sent a
//! byte at a time, an answer nobody reads, idle connections at the cap, and descriptor limits
//! too small to serve with. Each deadline is set to 1 s where it matters; the tests wait for
//! what must happen, bounded by [`WITHIN`] against a hang, and assert no duration.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::wire::{authority, open_fds, read_response};
use crate::support::{BIN, FakeForge, HttpServer, Launch};

/// The longest wait for something that must happen: a guard against a hang, not a timing
/// claim (the deadlines involved are 1 s).
const WITHIN: Duration = Duration::from_secs(30);

/// Polls `done` until it holds, failing after [`WITHIN`].
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + WITHIN;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Reads from `stream` until the server closes it (end of stream or reset); what was read.
async fn read_to_close(stream: &mut (impl AsyncReadExt + Unpin)) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    let closed = tokio::time::timeout(WITHIN, async {
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the server kept the connection open");
    seen
}

/// A GET of `/healthz` on a connection of its own, answered within [`WITHIN`].
async fn health(http: &HttpServer) -> u16 {
    tokio::time::timeout(WITHIN, http.get("/healthz"))
        .await
        .expect("a new client is served")
        .status()
        .as_u16()
}

/// Waits until the server holds `more` descriptors than `before`: its connections accepted.
async fn accepted(http: &HttpServer, before: usize, more: usize) {
    let pid = http.pid();
    eventually("the connections to be accepted", || {
        open_fds(pid) >= before + more
    })
    .await;
}

#[tokio::test]
async fn a_body_sent_too_slowly_gets_408_and_its_slot_serves_a_new_client() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .arg("--request-timeout")
        .arg("1")
        .arg("--max-connections")
        .arg("1")
        .start_http()
        .await;
    let address = authority(&http);
    let before = open_fds(http.pid());
    let (mut reader, mut writer) = TcpStream::connect(&address).await.unwrap().into_split();
    writer
        .write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    accepted(&http, before, 1).await;
    // The attack itself: a byte every 100 ms, for as long as the server listens.
    let trickle = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if writer.write_all(b" ").await.is_err() {
                break;
            }
        }
    });
    // The only slot is the slow request's: the new client is served once it is given back.
    assert_eq!(health(&http).await, 200);
    let answer = read_to_close(&mut reader).await;
    let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    // The 408 may be lost to a reset when the server closes while bytes still arrive.
    assert!(
        answer.is_empty()
            || (answer.starts_with("http/1.1 408")
                && answer.contains("connection: close")
                && answer.contains("--request-timeout")),
        "{answer}"
    );
    eventually("the 408 in the log", || http.log().contains("status=408")).await;
    trickle.abort();
}

#[tokio::test]
async fn a_body_still_arriving_takes_no_place_among_the_requests_in_progress() {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .arg("--max-concurrent-requests")
        .arg("1")
        .start_http()
        .await;
    let address = authority(&http);
    let before = open_fds(http.pid());
    let mut slow = TcpStream::connect(&address).await.unwrap();
    slow.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    accepted(&http, before, 1).await;
    // The only place is free while that body is still on its way.
    let answer = tokio::time::timeout(
        WITHIN,
        http.post(&crate::support::initialize_body("2025-06-18"), &[]),
    )
    .await
    .expect("the request is answered");
    assert_eq!(answer.status(), 200);
}

#[tokio::test]
async fn an_answer_nobody_reads_is_cut_off_and_its_slot_serves_a_new_client() {
    const REQUESTS: usize = 64;
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .full()
        .arg("--write-timeout")
        .arg("1")
        .arg("--max-connections")
        .arg("1")
        .start_http()
        .await;
    let address = authority(&http);
    // A small receive window, and many large answers asked for at once (each page of the full
    // surface is tens of KiB): far more than the socket buffers hold.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(address.parse().unwrap()).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.repeat(REQUESTS).as_bytes())
        .await
        .unwrap();
    eventually("the write deadline to close the connection", || {
        http.log().contains("(--write-timeout)")
    })
    .await;
    assert_eq!(health(&http).await, 200);
    let answers = read_to_close(&mut stream).await;
    let answered = String::from_utf8_lossy(&answers)
        .matches("HTTP/1.1 200")
        .count();
    assert!(answered < REQUESTS, "all {REQUESTS} answers were read");
}

#[tokio::test]
async fn at_the_cap_the_connection_idle_longest_gives_way_to_a_new_client() {
    let forge = FakeForge::standard().await;
    // Idle connections are never closed for silence here: only giving way makes room.
    let http = Launch::new(&forge)
        .arg("--max-connections")
        .arg("4")
        .arg("--header-timeout")
        .arg("3600")
        .start_http()
        .await;
    let address = authority(&http);
    // Two opened and silent, two kept alive after an answer: idle both ways. Connections are
    // accepted in the order they came, so once the last two are answered, all four were.
    let mut oldest = TcpStream::connect(&address).await.unwrap();
    let _silent = TcpStream::connect(&address).await.unwrap();
    let mut kept = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream
            .write_all(format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let answer = read_response(&mut stream).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        kept.push(stream);
    }
    assert_eq!(health(&http).await, 200);
    // The first one opened had waited longest: it is the one that gave way.
    assert!(read_to_close(&mut oldest).await.is_empty());
}

/// `forgelens serve --http 127.0.0.1:0 ARGS` under `ulimit -n LIMIT`, against `forge`.
pub(crate) fn limited(limit: u32, forge: &FakeForge, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("/bin/sh");
    command
        .env_clear()
        .env("FORGEJO_URL", forge.url())
        .env("RUST_LOG", "forgelens=info")
        .arg("-c")
        .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// A server started by [`limited`]; killed when dropped.
pub(crate) struct Limited {
    pub child: tokio::process::Child,
    /// `host:port`, as the server printed it.
    pub address: String,
    log: Arc<Mutex<String>>,
}

impl Limited {
    /// Starts the server and waits for the line that names its address.
    pub(crate) async fn start(limit: u32, forge: &FakeForge, args: &[&str]) -> Limited {
        let mut child = limited(limit, forge, args)
            .spawn()
            .expect("the shell starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let found = tokio::time::timeout(WITHIN, async {
            while let Ok(Some(line)) = lines.next_line().await {
                log.lock().unwrap().push_str(&format!("{line}\n"));
                if let Some((_, url)) = line.split_once("listening on http://") {
                    return Some(url.trim().trim_end_matches("/mcp").to_owned());
                }
            }
            None
        })
        .await;
        let Ok(Some(address)) = found else {
            panic!("the server did not listen:\n{}", log.lock().unwrap());
        };
        let rest = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                rest.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        Limited {
            child,
            address,
            log,
        }
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn a_descriptor_limit_too_small_to_serve_with_refuses_to_start() {
    let forge = FakeForge::standard().await;
    let out = tokio::time::timeout(WITHIN, limited(40, &forge, &[]).output())
        .await
        .expect("the server exits instead of serving")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("descriptor limit (ulimit -n) is 40")
            && stderr.contains("at least 16 are needed")
            && stderr.contains("raise it to 48"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_limit_of_128_descriptors_serves_16_connections_at_once() {
    let forge = FakeForge::standard().await;
    // Idle connections are never closed for silence here, so all 16 are open at once.
    let server = Limited::start(128, &forge, &["--header-timeout", "3600"]).await;
    let mut streams = Vec::new();
    for i in 0..16 {
        let mut stream = TcpStream::connect(&server.address).await.unwrap();
        let host = &server.address;
        stream
            .write_all(format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let answer = read_response(&mut stream)
            .await
            .unwrap_or_else(|e| panic!("connection {i}: {e}\n{}", server.log()));
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        streams.push(stream);
    }
    assert!(
        server.log().contains("serving at most 96 connections"),
        "{}",
        server.log()
    );
    drop(server.child);
}
