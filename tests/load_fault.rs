//! A bounded load and fault run: the hardening of `hardening.rs` exercised at volume, through
//! the binary. Eight scenarios — forge faults and hostile arguments over stdio, a client that
//! stops reading stdout, an HTTP connection attack, 503s on reused connections, hostile HTTP
//! targets, and new clients among hundreds of idle and slow-body connections at the default
//! settings and under `ulimit -n 128` — each count every attempt and every wrong outcome; a
//! table of the figures is printed and every scenario must end with no failure. Takes about a minute in release mode,
//! so ignored by default; run it with `scripts/load-fault.sh` (or
//! `cargo test --release --test main load_fault -- --ignored --nocapture --test-threads 1`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use rmcp::model::{CallToolResult, ErrorData, ResourceContents};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::http_slots::Limited;
use crate::support::fake_forge::Reply;
use crate::support::fixtures::LABEL_ID;
use crate::support::raw::Raw;
use crate::support::wire::{HeldSlot, authority, exchange, open_fds, read_response, rss_kib};
use crate::support::{FakeForge, HttpServer, Launch, Server};

/// The token of scenario a, which the forge echoes and nothing may show.
const TOKEN: &str = "load-token-5151";

/// a. Reads and calls over the faulty label routes, and how many run at once.
const FAULT_ATTEMPTS: usize = 2_000;
const FAULT_CONCURRENCY: usize = 16;

/// b. Tool calls with control characters in path arguments.
const HOSTILE_CALLS: usize = 1_000;
const HOSTILE_CONCURRENCY: usize = 16;

/// c. `tools/list` requests written to a server whose answers are not read.
const UNREAD_REQUESTS: usize = 3_000;
const UNREAD_RSS_LIMIT_KIB: u64 = 150 * 1024;

/// d. The connection attack and the normal traffic sent through it.
const IDLE_SOCKETS: usize = 300;
const SLOWLORIS_SOCKETS: usize = 300;
const NORMAL_REQUESTS: usize = 300;
const NORMAL_CONCURRENCY: usize = 4;
const NORMAL_DEADLINE: Duration = Duration::from_secs(30);
const MAX_CONNECTIONS: usize = 64;
/// Descriptors the server may hold besides its connections (stdio, the listener, its runtime,
/// its pool towards the forge).
const SPARE_FDS: usize = 40;

/// e. Keep-alive connections, POSTs on each, and the padding of each POST's body.
const REUSE_CONNECTIONS: usize = 20;
const REUSE_POSTS: usize = 50;
const REUSE_PADDING: usize = 4 * 1024;

/// f. Raw requests with an ambiguous target or a body that is not JSON.
const HOSTILE_TARGETS: usize = 300;
const TARGET_CONCURRENCY: usize = 8;

/// g. At the default settings: connections held open doing nothing, and connections sending
/// a body a byte at a time, then new clients one after another, each on a new connection.
const CROWD_IDLE: usize = 600;
const CROWD_SLOW: usize = 100;
const NEW_CLIENTS: usize = 50;
/// How soon each new client must be answered while the crowd holds on.
const NEW_CLIENT_DEADLINE: Duration = Duration::from_secs(2);
/// How often a slow-body connection sends one more byte.
const TRICKLE: Duration = Duration::from_millis(500);

/// h. The same under a descriptor limit of 128.
const SMALL_LIMIT: u32 = 128;
const SMALL_IDLE: usize = 60;
const SMALL_SLOW: usize = 10;

/// Failures kept per scenario to show what went wrong.
const SHOWN_FAILURES: usize = 5;

/// The figures of one scenario.
struct Tally {
    scenario: &'static str,
    tried: usize,
    failed: usize,
    examples: Vec<String>,
    took: Duration,
}

impl Tally {
    fn new(scenario: &'static str) -> Tally {
        Tally {
            scenario,
            tried: 0,
            failed: 0,
            examples: Vec::new(),
            took: Duration::ZERO,
        }
    }

    /// Counts one attempt; `Err` is a wrong outcome, described.
    fn record(&mut self, outcome: Result<(), String>) {
        self.tried += 1;
        if let Err(why) = outcome {
            self.fail(why);
        }
    }

    /// Counts a wrong outcome without a new attempt (a check made once the attempts are done).
    fn fail(&mut self, why: String) {
        self.failed += 1;
        if self.examples.len() < SHOWN_FAILURES {
            self.examples.push(why);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a bounded load and fault run of about a minute; see the module documentation"]
async fn load_and_fault_run() {
    let started = Instant::now();
    let mut tallies = Vec::new();
    let mut notes = Vec::new();

    let (faults, log) = timed(forge_faults()).await;
    tallies.push(faults);
    tallies.push(log);
    let (hostile, reached) = timed(hostile_arguments()).await;
    tallies.push(hostile);
    notes.push(format!(
        "b. requests that reached the forge during the hostile calls: {reached}"
    ));
    let (unread, rss) = timed(unread_answers()).await;
    tallies.push(unread);
    notes.push(format!(
        "c. VmRSS while the writer was blocked: {rss} KiB (limit {UNREAD_RSS_LIMIT_KIB})"
    ));
    let (attack, (before, peak)) = timed(connection_attack()).await;
    tallies.push(attack);
    notes.push(format!(
        "d. open descriptors: {before} before the attack, {peak} at peak (limit {})",
        MAX_CONNECTIONS + SPARE_FDS
    ));
    tallies.push(timed_one(busy_connections_stay_usable()).await);
    tallies.push(timed_one(hostile_targets()).await);
    let (crowd, figures) = timed(crowd_at_default_settings()).await;
    tallies.push(crowd);
    notes.push(format!("g. {figures}"));
    let (small, figures) = timed(crowd_under_a_small_limit()).await;
    tallies.push(small);
    notes.push(format!("h. {figures}"));

    println!();
    println!("| scenario | tried | failed | seconds |");
    println!("|---|---:|---:|---:|");
    for t in &tallies {
        println!(
            "| {} | {} | {} | {:.1} |",
            t.scenario,
            t.tried,
            t.failed,
            t.took.as_secs_f64()
        );
    }
    for note in &notes {
        println!("{note}");
    }
    println!("wall time: {:.1} s", started.elapsed().as_secs_f64());
    for t in &tallies {
        for example in &t.examples {
            println!("{}: {example}", t.scenario);
        }
    }
    for t in &tallies {
        assert_eq!(t.failed, 0, "{}: {:?}", t.scenario, t.examples);
    }
}

/// Runs a scenario that returns its tally (and something else), noting how long it took.
async fn timed<T>(scenario: impl Future<Output = (Tally, T)>) -> (Tally, T) {
    let started = Instant::now();
    let (mut tally, other) = scenario.await;
    tally.took = started.elapsed();
    (tally, other)
}

async fn timed_one(scenario: impl Future<Output = Tally>) -> Tally {
    timed(async { (scenario.await, ()) }).await.0
}

// a. Forge faults over stdio.

/// The ways a label route of the fake forge answers in scenario a.
#[derive(Debug, Clone, Copy)]
enum Fault {
    Normal,
    ServerErrorThenLabel,
    RateLimitThenLabel,
    ResetMidBody,
    EchoesTheToken,
    WrongShape,
    BinaryServerError,
    ControlCharacters,
}

const FAULTS: [Fault; 8] = [
    Fault::Normal,
    Fault::ServerErrorThenLabel,
    Fault::RateLimitThenLabel,
    Fault::ResetMidBody,
    Fault::EchoesTheToken,
    Fault::WrongShape,
    Fault::BinaryServerError,
    Fault::ControlCharacters,
];

/// A forge message with a newline (that could start a log line) and a terminal escape.
const FORGED: &str = "nope\n1999-01-01T00:00:00Z  INFO forgelens: all is well \u{1b}[2Jcleared";

fn label(id: u64) -> Value {
    let mut label = crate::support::fixtures::load("label.json");
    label["id"] = json!(id);
    label
}

fn label_path(id: u64) -> String {
    format!("/repos/acme/widgets/labels/{id}")
}

/// Routes the fixed faults; the two that recover get a route of their own per attempt (see
/// [`route_for`]), so that concurrent attempts do not consume each other's sequence.
fn route_fixed_faults(forge: &FakeForge) {
    forge.route(
        "GET",
        &label_path(3),
        Reply::Reset {
            head: b"{\"id\": 3, \"name\": ".to_vec(),
        },
    );
    forge.route(
        "GET",
        &label_path(4),
        Reply::Status(
            400,
            json!({"message": format!("bad request; you sent Authorization: token {TOKEN}")}),
        ),
    );
    forge.route("GET", &label_path(50), Reply::Json(json!(null)));
    forge.route("GET", &label_path(51), Reply::Json(json!("a string")));
    forge.route("GET", &label_path(52), Reply::NoContent);
    forge.route(
        "GET",
        &label_path(6),
        Reply::Raw {
            status: 500,
            content_type: "application/octet-stream".into(),
            body: vec![0x89, b'P', b'N', b'G', 0, 0, 0xff, 0xfe, 0x1b, 0x01],
        },
    );
    forge.route(
        "GET",
        &label_path(7),
        Reply::Status(422, json!({"message": FORGED})),
    );
}

/// The id of attempt `i`'s own route, clear of the fixed ones.
fn fresh_id(i: usize) -> u64 {
    1_000_000 + i as u64
}

/// The label id attempt `i` asks for, after routing it when the fault needs its own route.
fn route_for(forge: &FakeForge, fault: Fault, i: usize) -> u64 {
    let fresh = fresh_id(i);
    match fault {
        Fault::Normal => LABEL_ID,
        Fault::ServerErrorThenLabel => {
            forge.route(
                "GET",
                &label_path(fresh),
                Reply::Sequence(vec![
                    Reply::Status(500, json!({"message": "upstream trouble"})),
                    Reply::Json(label(fresh)),
                ]),
            );
            fresh
        }
        Fault::RateLimitThenLabel => {
            forge.route(
                "GET",
                &label_path(fresh),
                Reply::Sequence(vec![
                    Reply::Headers {
                        status: 429,
                        headers: vec![("Retry-After".into(), "0".into())],
                        body: json!({"message": "slow down"}),
                    },
                    Reply::Json(label(fresh)),
                ]),
            );
            fresh
        }
        Fault::ResetMidBody => 3,
        Fault::EchoesTheToken => 4,
        Fault::WrongShape => 50 + (i / FAULTS.len() % 3) as u64,
        Fault::BinaryServerError => 6,
        Fault::ControlCharacters => 7,
    }
}

/// Every string inside a JSON value, raw (a serialised value would escape what is checked).
fn strings_in(value: &Value, into: &mut String) {
    match value {
        Value::String(s) => {
            into.push_str(s);
            into.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| strings_in(v, into)),
        Value::Object(map) => map.values().for_each(|v| strings_in(v, into)),
        _ => {}
    }
}

fn error_text(error: &ErrorData) -> String {
    let mut text = format!("{}\n", error.message);
    if let Some(data) = &error.data {
        strings_in(data, &mut text);
    }
    text
}

fn result_text(result: &CallToolResult) -> String {
    let mut text = String::new();
    for block in &result.content {
        if let Some(t) = block.as_text() {
            text.push_str(&t.text);
            text.push('\n');
        }
    }
    if let Some(structured) = &result.structured_content {
        strings_in(structured, &mut text);
    }
    text
}

/// What an error shown to the agent must not carry.
fn check_error_text(fault: Fault, text: &str) -> Result<(), String> {
    if text.contains(TOKEN) {
        return Err(format!("{fault:?}: the token leaked: {text:?}"));
    }
    if text.contains('\u{1b}') {
        return Err(format!("{fault:?}: a terminal escape: {text:?}"));
    }
    if let Fault::ControlCharacters = fault
        && (text.contains("nope\n") || !text.contains("nope\\n"))
    {
        return Err(format!("{fault:?}: the newline is not escaped: {text:?}"));
    }
    Ok(())
}

fn expects_success(fault: Fault) -> bool {
    matches!(
        fault,
        Fault::Normal | Fault::ServerErrorThenLabel | Fault::RateLimitThenLabel
    )
}

/// One read or call of scenario a: half of each fault's attempts are resource reads, the
/// other half tool calls.
async fn fault_attempt(server: &Server, forge: &FakeForge, i: usize) -> Result<(), String> {
    let fault = FAULTS[i % FAULTS.len()];
    let id = route_for(forge, fault, i);
    if (i / FAULTS.len()).is_multiple_of(2) {
        let read = server
            .read(&format!("forgejo://repo/acme/widgets/label/{id}"))
            .await;
        match (expects_success(fault), read) {
            (true, Ok(result)) => {
                let text = match result.contents.first() {
                    Some(ResourceContents::TextResourceContents { text, .. }) => text.clone(),
                    other => return Err(format!("{fault:?}: read {id}: {other:?}")),
                };
                let got: Value = serde_json::from_str(&text)
                    .map_err(|e| format!("{fault:?}: read {id}: {e}: {text}"))?;
                (got["id"] == id)
                    .then_some(())
                    .ok_or_else(|| format!("{fault:?}: read {id} gave {got}"))
            }
            (true, Err(e)) => Err(format!("{fault:?}: read {id} failed: {e:?}")),
            (false, Ok(r)) => Err(format!("{fault:?}: read {id} succeeded: {r:?}")),
            (false, Err(e)) => check_error_text(fault, &error_text(&e)),
        }
    } else {
        let called = server
            .call(
                "get_repo_label",
                json!({"owner": "acme", "repo": "widgets", "id": id}),
            )
            .await
            .map_err(|e| format!("{fault:?}: call {id}: protocol error {e:?}"))?;
        let failed = called.is_error == Some(true);
        match (expects_success(fault), failed) {
            (true, false) => {
                let got = called.structured_content.unwrap_or_default();
                (got["id"] == id)
                    .then_some(())
                    .ok_or_else(|| format!("{fault:?}: call {id} gave {got}"))
            }
            (true, true) => Err(format!("{fault:?}: call {id} failed: {called:?}")),
            (false, false) => Err(format!("{fault:?}: call {id} succeeded: {called:?}")),
            (false, true) => check_error_text(fault, &result_text(&called)),
        }
    }
}

/// Scenario a, and the check of the server's log once it is done.
async fn forge_faults() -> (Tally, Tally) {
    let mut tally = Tally::new("a. stdio forge faults");
    let forge = FakeForge::standard().await;
    route_fixed_faults(&forge);
    let server = Launch::new(&forge)
        .token(TOKEN)
        .arg("--timeout")
        .arg("2")
        .full()
        .spawn()
        .await;
    let outcomes: Vec<_> = futures::stream::iter(0..FAULT_ATTEMPTS)
        .map(|i| fault_attempt(&server, &forge, i))
        .buffer_unordered(FAULT_CONCURRENCY)
        .collect()
        .await;
    for outcome in outcomes {
        tally.record(outcome);
    }
    // A recovering route must have been asked twice: the fault was met, then retried past.
    let mut hits = std::collections::HashMap::<String, usize>::new();
    for request in forge.requests() {
        *hits.entry(request.path).or_default() += 1;
    }
    for i in 0..FAULT_ATTEMPTS {
        let fault = FAULTS[i % FAULTS.len()];
        if matches!(
            fault,
            Fault::ServerErrorThenLabel | Fault::RateLimitThenLabel
        ) {
            let path = label_path(fresh_id(i));
            let n = hits.get(&path).copied().unwrap_or(0);
            if n != 2 {
                tally.fail(format!("{fault:?}: {path} was asked {n} times, not 2"));
            }
        }
    }
    // Still answering after all of it.
    let last = server
        .read(&format!("forgejo://repo/acme/widgets/label/{LABEL_ID}"))
        .await;
    if let Err(e) = last {
        tally.fail(format!("no answer after the run: {e:?}"));
    }
    let mut logged = Tally::new("a. stdio forge faults: log clean");
    let log = server.finish().await;
    logged.record(if log.contains(TOKEN) {
        Err("the token is in the log".into())
    } else if log.contains('\u{1b}') {
        Err("a terminal escape is in the log".into())
    } else if log
        .lines()
        .any(|l| l.contains("all is well") && !l.contains("nope"))
    {
        Err("the forge's message forged a log line".into())
    } else if !log.contains("nope\\n1999") {
        // Else the checks above prove nothing: the message must be logged, escaped.
        Err("the forge's message is not in the log, escaped".into())
    } else {
        Ok(())
    });
    (tally, logged)
}

// b. Hostile arguments over stdio.

const CONTROL_VALUES: [&str; 6] = ["\u{0}", "v1\n", "a\r\nb", "\u{7f}", "x\u{0}y", "\r"];

async fn hostile_call(server: &Server, i: usize) -> Result<(), String> {
    let bad = CONTROL_VALUES[i % CONTROL_VALUES.len()];
    let (tool, args) = match i / CONTROL_VALUES.len() % 3 {
        0 => (
            "get_release_by_tag",
            json!({"owner": "acme", "repo": "widgets", "tag": bad}),
        ),
        1 => (
            "get_repo_label",
            json!({"owner": bad, "repo": "widgets", "id": LABEL_ID}),
        ),
        _ => (
            "get_repo_label",
            json!({"owner": "acme", "repo": bad, "id": LABEL_ID}),
        ),
    };
    match server.call(tool, args).await {
        Ok(r) if r.is_error == Some(true) => Ok(()),
        Ok(r) => Err(format!("{tool} {bad:?} was not refused: {r:?}")),
        Err(e) => Err(format!("{tool} {bad:?}: protocol error {e:?}")),
    }
}

/// Scenario b; also returns how many requests reached the forge at all.
async fn hostile_arguments() -> (Tally, usize) {
    let mut tally = Tally::new("b. stdio hostile arguments");
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).full().start().await;
    let outcomes: Vec<_> = futures::stream::iter(0..HOSTILE_CALLS)
        .map(|i| hostile_call(&server, i))
        .buffer_unordered(HOSTILE_CONCURRENCY)
        .collect()
        .await;
    for outcome in outcomes {
        tally.record(outcome);
    }
    let requests = forge.requests();
    for request in &requests {
        let path = request.path.to_ascii_uppercase();
        if ["%00", "%0A", "%0D", "%7F"]
            .iter()
            .any(|c| path.contains(c))
        {
            tally.fail(format!("reached the forge: {}", request.path));
        }
    }
    server.stop().await;
    (tally, requests.len())
}

// c. A stdio client that does not read its answers.

/// Scenario c; also returns the server's RSS while the writer was blocked.
async fn unread_answers() -> (Tally, u64) {
    let mut tally = Tally::new("c. stdio backpressure");
    let forge = FakeForge::standard().await;
    let mut raw = Raw::start(&forge).await;
    let pid = raw.child.id().unwrap();
    let unread = raw.write_unread(UNREAD_REQUESTS);
    // Finishing instead of stalling means the server read everything while nobody read its
    // answers.
    if unread.stalled().await.is_none() {
        tally.fail(format!(
            "the writer was never held back ({} of {UNREAD_REQUESTS} written)",
            unread.written.load(Ordering::SeqCst)
        ));
    }
    let rss = rss_kib(pid);
    if rss > UNREAD_RSS_LIMIT_KIB {
        tally.fail(format!("{rss} KiB while blocked"));
    }
    // Read again: every request answered once, with the template list.
    let mut seen = vec![0usize; UNREAD_REQUESTS + 1];
    let (mut distinct, mut strays) = (0, 0);
    let reading = tokio::time::timeout(Duration::from_secs(60), async {
        while distinct < UNREAD_REQUESTS {
            let Ok(Ok(Some(line))) =
                tokio::time::timeout(Duration::from_secs(20), raw.stdout.next_line()).await
            else {
                break;
            };
            let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            match answer["id"].as_u64().map(|id| id as usize) {
                Some(id) if (1..=UNREAD_REQUESTS).contains(&id) => {
                    if !answer["result"]["resourceTemplates"].is_array() {
                        strays += 1;
                    }
                    if seen[id] == 0 {
                        distinct += 1;
                    }
                    seen[id] += 1;
                }
                _ => strays += 1,
            }
        }
    })
    .await;
    if reading.is_err() {
        tally.fail("reading the answers took over 60 s".into());
    }
    for (id, &times) in seen.iter().enumerate().skip(1) {
        tally.record(match times {
            1 => Ok(()),
            0 => Err(format!("request {id} was not answered")),
            n => Err(format!("request {id} was answered {n} times")),
        });
    }
    if strays > 0 {
        tally.fail(format!(
            "{strays} answers without a tool list or a known id"
        ));
    }
    let stdin = unread.writer.await.unwrap();
    raw.stdin = Some(stdin);
    let code = raw.exit_code().await;
    if code != 0 {
        tally.fail(format!("the server exited with {code}"));
    }
    (tally, rss)
}

// d. HTTP under a connection attack.

/// Polls `pid`'s open descriptors until `stop`, keeping the highest count.
fn sample_fds(pid: u32, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(async move {
        let mut peak = 0;
        while !stop.load(Ordering::SeqCst) {
            peak = peak.max(open_fds(pid));
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        peak.max(open_fds(pid))
    })
}

async fn normal_request(
    client: &reqwest::Client,
    http: &HttpServer,
    i: usize,
) -> Result<(), String> {
    let request = if i.is_multiple_of(2) {
        client.get(format!("{}/healthz", http.base))
    } else {
        client
            .post(http.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(crate::support::initialize_body("2025-06-18"))
    };
    let answered = tokio::time::timeout(NORMAL_DEADLINE, async {
        let response = request.send().await?;
        let status = response.status();
        response.bytes().await?;
        Ok::<_, reqwest::Error>(status)
    })
    .await;
    match answered {
        Ok(Ok(status)) if status == 200 => Ok(()),
        Ok(Ok(status)) => Err(format!("request {i}: status {status}")),
        Ok(Err(e)) => Err(format!("request {i}: {e}")),
        Err(_) => Err(format!("request {i}: no answer within {NORMAL_DEADLINE:?}")),
    }
}

/// Scenario d; also returns the server's descriptors before the attack and at its peak.
async fn connection_attack() -> (Tally, (usize, usize)) {
    let mut tally = Tally::new("d. HTTP connection attack");
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .env("RUST_LOG", "info")
        .arg("--header-timeout")
        .arg("1")
        .arg("--max-connections")
        .arg(&MAX_CONNECTIONS.to_string())
        .start_http()
        .await;
    let address = authority(&http);
    let pid = http.pid();
    let before = open_fds(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_fds(pid, stop.clone());
    // The attack: idle sockets and slowloris ones (headers begun, never finished), interleaved.
    // Past the cap they wait in the listen queue; they are kept until the normal traffic ends.
    let mut attackers = Vec::new();
    for i in 0..IDLE_SOCKETS + SLOWLORIS_SOCKETS {
        let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
        let paired = 2 * IDLE_SOCKETS.min(SLOWLORIS_SOCKETS);
        let slow = if i < paired {
            i % 2 == 1
        } else {
            SLOWLORIS_SOCKETS > IDLE_SOCKETS
        };
        if slow {
            let _ = socket
                .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\n").as_bytes())
                .await;
        }
        attackers.push(socket);
    }
    // A new connection per request, so that each one meets the attack at the door.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let outcomes: Vec<_> = futures::stream::iter(0..NORMAL_REQUESTS)
        .map(|i| normal_request(&client, &http, i))
        .buffer_unordered(NORMAL_CONCURRENCY)
        .collect()
        .await;
    for outcome in outcomes {
        tally.record(outcome);
    }
    drop(attackers);
    stop.store(true, Ordering::SeqCst);
    let peak = sampler.await.unwrap();
    if peak > MAX_CONNECTIONS + SPARE_FDS {
        tally.fail(format!(
            "{peak} descriptors at peak, over {MAX_CONNECTIONS} + {SPARE_FDS}"
        ));
    }
    (tally, (before, peak))
}

// e. 503s on reused connections.

/// Sends `REUSE_POSTS` POSTs on one connection; returns the wrong outcomes, each described
/// (a connection lost early counts every POST it did not answer).
async fn posts_on_one_connection(address: String, connection: usize) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut stream = match tokio::net::TcpStream::connect(&address).await {
        Ok(stream) => stream,
        Err(e) => return vec![format!("connection {connection}: {e}"); REUSE_POSTS],
    };
    let body = format!(
        "{}{}",
        crate::support::initialize_body("2025-06-18"),
        " ".repeat(REUSE_PADDING)
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    for post in 0..REUSE_POSTS {
        let answered = match stream.write_all(request.as_bytes()).await {
            Ok(()) => read_response(&mut stream).await,
            Err(e) => Err(e),
        };
        match answered {
            Ok(answer) => {
                let closing = answer.to_ascii_lowercase().contains("connection: close");
                if !answer.starts_with("HTTP/1.1 503") || closing {
                    let head = answer.lines().next().unwrap_or("").to_owned();
                    wrong.push(format!("connection {connection} post {post}: {head}"));
                }
                if closing {
                    break;
                }
            }
            Err(e) => {
                for lost in post..REUSE_POSTS {
                    wrong.push(format!("connection {connection} post {lost}: {e}"));
                }
                break;
            }
        }
    }
    wrong
}

async fn busy_connections_stay_usable() -> Tally {
    let mut tally = Tally::new("e. HTTP 503 on reused connections");
    let forge = FakeForge::standard().await;
    // One request holds the only slot until the gate opens.
    let slot = HeldSlot::start(&forge, Launch::new(&forge).env("RUST_LOG", "info")).await;
    let address = authority(&slot.http);
    let connections: Vec<_> = (0..REUSE_CONNECTIONS)
        .map(|c| tokio::spawn(posts_on_one_connection(address.clone(), c)))
        .collect();
    let mut wrong = Vec::new();
    for connection in connections {
        wrong.extend(connection.await.unwrap());
    }
    tally.tried = REUSE_CONNECTIONS * REUSE_POSTS;
    for why in wrong {
        tally.fail(why);
    }
    slot.gate.add_permits(1);
    match tokio::time::timeout(Duration::from_secs(20), slot.held).await {
        Ok(Ok(server)) => server.stop().await,
        Ok(Err(e)) => tally.fail(format!("the held request failed: {e}")),
        Err(_) => tally.fail("the held request did not finish within 20 s".into()),
    }
    tally
}

// f. Hostile HTTP targets.

async fn hostile_target(address: &str, i: usize) -> Result<(), String> {
    let initialize = crate::support::initialize_body("2025-06-18");
    let (line, extra, body, kind) = match i % 4 {
        0 => (
            "POST /mcp HTTP/1.1".to_owned(),
            format!("\r\nHost: {address}\r\nHost: evil.example"),
            initialize,
            "two Host headers",
        ),
        1 => (
            "POST /mcp HTTP/1.1".to_owned(),
            format!(
                "\r\nHost: {address}\r\nOrigin: http://localhost:6274\r\nOrigin: https://evil.example"
            ),
            initialize,
            "two Origin headers",
        ),
        2 => (
            "POST http://evil.example/mcp HTTP/1.1".to_owned(),
            format!("\r\nHost: {address}"),
            initialize,
            "an absolute target naming another host",
        ),
        _ => (
            "POST /mcp HTTP/1.1".to_owned(),
            format!("\r\nHost: {address}"),
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ".to_owned(),
            "a body that is not JSON",
        ),
    };
    let head = format!(
        "{line}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream{extra}"
    );
    match exchange(address, &head, &body).await {
        Ok(answer) if answer.starts_with("HTTP/1.1 400") => Ok(()),
        Ok(answer) => Err(format!(
            "{kind}: {}",
            answer.lines().next().unwrap_or_default()
        )),
        Err(e) => Err(format!("{kind}: {e}")),
    }
}

async fn hostile_targets() -> Tally {
    let mut tally = Tally::new("f. HTTP hostile targets");
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .env("RUST_LOG", "info")
        .start_http()
        .await;
    let address = authority(&http);
    let outcomes: Vec<_> = futures::stream::iter(0..HOSTILE_TARGETS)
        .map(|i| hostile_target(&address, i))
        .buffer_unordered(TARGET_CONCURRENCY)
        .collect()
        .await;
    for outcome in outcomes {
        tally.record(outcome);
    }
    tally
}

// g and h. New clients among idle and slow-body connections.

/// Opens `idle` connections that send nothing and `slow` that send a request's headers and
/// then its body a byte every [`TRICKLE`], interleaved; the trickle runs until `stop`.
async fn crowd(
    address: &str,
    idle: usize,
    slow: usize,
    stop: Arc<AtomicBool>,
) -> (Vec<tokio::net::TcpStream>, tokio::task::JoinHandle<()>) {
    let total = idle + slow;
    let every = total / slow.max(1);
    let (mut silent, mut trickling) = (Vec::new(), Vec::new());
    for i in 0..total {
        let Ok(mut socket) = tokio::net::TcpStream::connect(address).await else {
            continue;
        };
        if i % every == 0 && trickling.len() < slow {
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{{"
            );
            let _ = socket.write_all(head.as_bytes()).await;
            trickling.push(socket);
        } else {
            silent.push(socket);
        }
    }
    let trickle = tokio::spawn(async move {
        while !stop.load(Ordering::SeqCst) {
            tokio::time::sleep(TRICKLE).await;
            for socket in &mut trickling {
                let _ = socket.write_all(b" ").await;
            }
        }
    });
    (silent, trickle)
}

/// One new client's request on a connection of its own; how long it took, or what went wrong.
async fn new_client(client: &reqwest::Client, address: &str, i: usize) -> Result<Duration, String> {
    let started = Instant::now();
    let request = if i.is_multiple_of(2) {
        client.get(format!("http://{address}/healthz"))
    } else {
        client
            .post(format!("http://{address}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(crate::support::initialize_body("2025-06-18"))
    };
    let answered = tokio::time::timeout(NORMAL_DEADLINE, async {
        let response = request.send().await?;
        let status = response.status();
        response.bytes().await?;
        Ok::<_, reqwest::Error>(status)
    })
    .await;
    let took = started.elapsed();
    match answered {
        Ok(Ok(status)) if status == 200 && took <= NEW_CLIENT_DEADLINE => Ok(took),
        Ok(Ok(status)) if status == 200 => Err(format!(
            "client {i}: answered after {:.2} s",
            took.as_secs_f64()
        )),
        Ok(Ok(status)) => Err(format!("client {i}: status {status}")),
        Ok(Err(e)) => Err(format!("client {i}: {e}")),
        Err(_) => Err(format!("client {i}: no answer within {NORMAL_DEADLINE:?}")),
    }
}

/// New clients one after another while the crowd holds on; the tally and its figures.
async fn new_clients_among_a_crowd(
    scenario: &'static str,
    address: &str,
    pid: u32,
    (idle, slow): (usize, usize),
) -> (Tally, String) {
    let mut tally = Tally::new(scenario);
    let before = open_fds(pid);
    let stop_sampling = Arc::new(AtomicBool::new(false));
    let sampler = sample_fds(pid, stop_sampling.clone());
    let stop_trickle = Arc::new(AtomicBool::new(false));
    let (silent, trickle) = crowd(address, idle, slow, stop_trickle.clone()).await;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut took = Vec::new();
    for i in 0..NEW_CLIENTS {
        let outcome = new_client(&client, address, i).await;
        if let Ok(t) = &outcome {
            took.push(*t);
        }
        tally.record(outcome.map(drop));
    }
    stop_trickle.store(true, Ordering::SeqCst);
    let _ = trickle.await;
    drop(silent);
    stop_sampling.store(true, Ordering::SeqCst);
    let peak = sampler.await.unwrap();
    took.sort();
    let ms = |d: Option<&Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    let figures = format!(
        "{idle} idle + {slow} slow-body connections: new clients answered in {:.1} ms \
         (median), {:.1} ms (slowest) of {NEW_CLIENT_DEADLINE:?} allowed; descriptors: {before} \
         before, {peak} at peak",
        ms(took.get(took.len() / 2)),
        ms(took.last()),
    );
    (tally, figures)
}

async fn crowd_at_default_settings() -> (Tally, String) {
    let forge = FakeForge::standard().await;
    let http = Launch::new(&forge)
        .env("RUST_LOG", "info")
        .start_http()
        .await;
    let (mut tally, figures) = new_clients_among_a_crowd(
        "g. HTTP new clients among idle and slow-body connections",
        &authority(&http),
        http.pid(),
        (CROWD_IDLE, CROWD_SLOW),
    )
    .await;
    let log = http.finish().await;
    if log.contains("cannot accept") {
        tally.fail(format!("accepting failed:\n{log}"));
    }
    (tally, figures)
}

async fn crowd_under_a_small_limit() -> (Tally, String) {
    let forge = FakeForge::standard().await;
    let server = Limited::start(SMALL_LIMIT, &forge, &[]).await;
    let pid = server.child.id().expect("the server runs");
    let (mut tally, figures) = new_clients_among_a_crowd(
        "h. HTTP new clients among idle and slow-body connections, ulimit -n 128",
        &server.address,
        pid,
        (SMALL_IDLE, SMALL_SLOW),
    )
    .await;
    if server.log().contains("cannot accept") {
        tally.fail(format!("accepting failed:\n{}", server.log()));
    }
    (tally, format!("ulimit -n {SMALL_LIMIT}: {figures}"))
}
