//! The stdio server end to end on raw lines: bad input never stops it, a cancelled request
//! drops its upstream work, stdin EOF or SIGTERM let the request in flight answer before the
//! process exits 0, and pipes, Unix sockets and files all serve as stdin and stdout.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

use crate::support::fixtures::LABEL_ID;
use crate::support::raw::Raw;
use crate::support::{BIN, FakeForge, Launch};

fn good_uri() -> String {
    format!("forgejo://repo/acme/widgets/label/{LABEL_ID}")
}

#[tokio::test]
async fn bad_lines_get_errors_or_are_dropped_and_the_server_stays_up() {
    let forge = FakeForge::standard().await;
    let mut raw = Raw::start(&forge).await;

    raw.send("{this is not json").await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    raw.send(&deep).await;
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"padding": "x".repeat(10 * 1024 * 1024)}});
    raw.send(&huge.to_string()).await;
    let answer = raw.answer_to(&json!(1)).await;
    assert!(
        answer.get("result").is_some() || answer.get("error").is_some(),
        "a 10 MB line is answered: {answer}"
    );

    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#)
        .await;
    assert_eq!(raw.answer_to(&json!(2)).await["error"]["code"], -32601);
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":42}}"#)
        .await;
    assert!(
        raw.answer_to(&json!(3)).await.get("error").is_some(),
        "a wrong parameter type is an error"
    );
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_repo_labels","arguments":"nope"}}"#).await;
    assert!(raw.answer_to(&json!(4)).await.get("error").is_some());

    for id in [json!("text-id"), json!(0), json!(9_007_199_254_740_991u64)] {
        raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string())
            .await;
        assert_eq!(
            raw.answer_to(&id).await["result"],
            json!({}),
            "id {id} answered as given"
        );
    }
    for id in ["0", "-1", "99999999999999999999999"] {
        let answer = raw
            .read(10, &format!("forgejo://repo/acme/widgets/label/{id}"))
            .await;
        assert_eq!(answer["error"]["code"], -32602, "label id {id}");
    }
    assert!(forge.requests().is_empty(), "nothing bad reached the forge");

    let answer = raw.read(11, &good_uri()).await;
    assert!(
        answer["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&LABEL_ID.to_string())
    );
    assert_eq!(
        raw.exit_code().await,
        0,
        "stdin EOF ends the server cleanly"
    );
}

#[tokio::test]
async fn at_stdin_eof_the_request_in_flight_still_answers() {
    let forge = FakeForge::standard().await;
    let gate = forge.gate(&format!("/repos/acme/widgets/labels/{LABEL_ID}"));
    let mut raw = Raw::start(&forge).await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": good_uri()}}).to_string()).await;
    forge
        .wait_for("the read at the forge", |log| log.len() == 1)
        .await;
    drop(raw.stdin.take());
    gate.add_permits(1);
    let answer = raw.answer_to(&json!(7)).await;
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(raw.exit_code().await, 0);
}

#[cfg(unix)]
#[tokio::test]
async fn at_sigterm_the_request_in_flight_still_answers() {
    let forge = FakeForge::standard().await;
    let gate = forge.gate(&format!("/repos/acme/widgets/labels/{LABEL_ID}"));
    let mut raw = Raw::start(&forge).await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": good_uri()}}).to_string()).await;
    forge
        .wait_for("the read at the forge", |log| log.len() == 1)
        .await;
    let pid = raw.child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    gate.add_permits(1);
    let answer = raw.answer_to(&json!(8)).await;
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(raw.exit_code().await, 0);
}

#[tokio::test]
async fn a_cancelled_read_drops_its_upstream_request() {
    use rmcp::model::{ClientRequest, ReadResourceRequestParams, Request};
    use rmcp::service::PeerRequestOptions;

    let forge = FakeForge::standard().await;
    let path = format!("/repos/acme/widgets/labels/{LABEL_ID}");
    let _gate = forge.gate(&path);
    let server = Launch::new(&forge).start().await;
    let request = ClientRequest::ReadResourceRequest(Request::new(ReadResourceRequestParams::new(
        good_uri(),
    )));
    let handle = server
        .client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    forge
        .wait_for("the read at the forge", |log| log.len() == 1)
        .await;
    handle
        .cancel(Some("no longer needed".into()))
        .await
        .unwrap();
    // The forge sees its client hang up: the upstream request was dropped, not left running.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !forge.abandoned().contains(&path) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the upstream request was not dropped"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // And the server goes on serving.
    assert_eq!(
        server.read_json("forgejo://instance").await["max_response_items"],
        40
    );
    server.stop().await;
}

/// How a test wires the server's stdin and stdout.
#[cfg(unix)]
#[derive(Clone, Copy, Debug)]
enum Wiring {
    /// What most clients give the server they start.
    Pipes,
    /// What clients built on libuv (Node's) give: a socketpair each.
    Sockets,
    /// Anything else (here stdout is a file), served through tokio's stdio.
    File,
}

/// Runs one session wired as `wiring`: initialize, a read, then stdin closes. The answers and
/// what the server logged at debug level.
#[cfg(unix)]
async fn session(forge: &FakeForge, wiring: Wiring) -> (Vec<Value>, String) {
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

    let mut command = Command::new(BIN);
    command
        .env_clear()
        .env("FORGEJO_URL", forge.url())
        .args(["--log-level", "forgelens=debug"])
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let nonblocking = |s: UnixStream| {
        s.set_nonblocking(true).unwrap();
        tokio::net::UnixStream::from_std(s).unwrap()
    };
    let out_file = std::env::temp_dir().join(format!("forgelens-wiring-{}", std::process::id()));
    let (mut child, mut input, output): (
        Child,
        Box<dyn AsyncWrite + Unpin>,
        Option<Box<dyn AsyncRead + Unpin>>,
    ) = match wiring {
        Wiring::Pipes => {
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let (i, o) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
            (child, Box::new(i), Some(Box::new(o)))
        }
        Wiring::Sockets => {
            let (stdin_ours, stdin_theirs) = UnixStream::pair().unwrap();
            let (stdout_ours, stdout_theirs) = UnixStream::pair().unwrap();
            let child = command
                .stdin(Stdio::from(OwnedFd::from(stdin_theirs)))
                .stdout(Stdio::from(OwnedFd::from(stdout_theirs)))
                .spawn()
                .unwrap();
            (
                child,
                Box::new(nonblocking(stdin_ours)),
                Some(Box::new(nonblocking(stdout_ours))),
            )
        }
        Wiring::File => {
            let file = std::fs::File::create(&out_file).unwrap();
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::from(file))
                .spawn()
                .unwrap();
            let i = child.stdin.take().unwrap();
            (child, Box::new(i), None)
        }
    };
    // The command keeps the child's ends of the sockets open until it is dropped.
    drop(command);
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wiring", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": good_uri()}}),
    ];
    for line in lines {
        input
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    input.flush().await.unwrap();
    drop(input);
    let mut text = String::new();
    if let Some(mut output) = output {
        tokio::time::timeout(Duration::from_secs(20), output.read_to_string(&mut text))
            .await
            .unwrap_or_else(|_| panic!("{wiring:?}: stdout is still open after 20 s"))
            .unwrap();
    }
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the process exits")
        .unwrap();
    assert!(status.success(), "{wiring:?}: {status}");
    if matches!(wiring, Wiring::File) {
        text = std::fs::read_to_string(&out_file).unwrap();
        std::fs::remove_file(&out_file).unwrap();
    }
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .await
        .unwrap();
    let answers = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (answers, log)
}

/// Pipes and Unix sockets are read and written on the event loop (the log says which); anything
/// else goes through tokio's stdio. Every wiring gets the same answers.
#[cfg(unix)]
#[tokio::test]
async fn pipes_sockets_and_files_are_all_served() {
    let forge = FakeForge::standard().await;
    for (wiring, logged) in [
        (
            Wiring::Pipes,
            r#"stdio on the event loop stdin="pipe" stdout="pipe""#,
        ),
        (
            Wiring::Sockets,
            r#"stdio on the event loop stdin="socket" stdout="socket""#,
        ),
        (Wiring::File, "stdio through tokio's blocking threads"),
    ] {
        let (answers, log) = session(&forge, wiring).await;
        assert!(log.contains(logged), "{wiring:?}: {log}");
        assert_eq!(answers.len(), 2, "{wiring:?}: {answers:?}");
        assert_eq!(answers[0]["result"]["serverInfo"]["name"], "forgelens");
        let text = answers[1]["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{wiring:?}: {}", answers[1]));
        assert!(text.contains(&LABEL_ID.to_string()), "{wiring:?}: {text}");
    }
}
