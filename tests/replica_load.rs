//! Throughput of one replica against three, sharing a real Redis store behind the round-robin
//! proxy, against a forge that takes a real service time to answer. Ignored by default: it is
//! a measurement, run in release mode by `scripts/replica-throughput.sh`, which prints its
//! table for docs/performance.md. It fails only when a request fails.
//!
//! Two workloads, each for [`RUN`] with [`CLIENTS`] clients sending one request after
//! another: `tools/call list_repo_labels` (each call reaches the forge, which waits
//! [`FORGE_MS`] before answering) and `resources/read` of labels under `--cache-ttl-ms`
//! (after the first read, every answer comes from a cache: the replica's own, or the store's
//! for a replica that had not read it yet).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::replicas::{Fleet, LABELS, tool_text};
use crate::support::fake_forge::FakeForge;
use crate::support::redis::Redis;

const RUN: Duration = Duration::from_secs(5);
const CLIENTS: usize = 32;
const FORGE_MS: u64 = 20;

/// CPU seconds (user and system) process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = text
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i).and_then(|f| f.parse::<u64>().ok()))
        .sum::<u64>() as f64
        / 100.0
}

struct Outcome {
    done: usize,
    failed: usize,
    latencies: Vec<Duration>,
    cpu: f64,
}

async fn run(fleet: Arc<Fleet>, read: bool) -> Outcome {
    let pids: Vec<u32> = fleet.servers.iter().map(|s| s.pid()).collect();
    let cpu_before: f64 = pids.iter().map(|p| cpu_seconds(*p)).sum();
    let failed = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + RUN;
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let (fleet, failed) = (fleet.clone(), failed.clone());
        clients.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let started = Instant::now();
                let ok = if read {
                    let uri = "forgejo://repo/acme/widgets/labels";
                    let (status, answer) = fleet.mcp("resources/read", json!({"uri": uri})).await;
                    status == 200 && answer["result"]["contents"].is_array()
                } else {
                    let (status, answer) = fleet.labels().await;
                    status == 200 && !tool_text(&answer).1
                };
                latencies.push(started.elapsed());
                if !ok {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for client in clients {
        latencies.extend(client.await.unwrap());
    }
    latencies.sort();
    let cpu_after: f64 = pids.iter().map(|p| cpu_seconds(*p)).sum();
    Outcome {
        done: latencies.len(),
        failed: failed.load(Ordering::Relaxed),
        latencies,
        cpu: cpu_after - cpu_before,
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a throughput measurement of about half a minute; see scripts/replica-throughput.sh"]
async fn replica_throughput() {
    let redis = Redis::start().await;
    println!(
        "| workload | replicas | requests/s | p50 | p99 | forgelens CPU per request | failed |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut failures = 0;
    for replicas in [1, 3] {
        let forge = FakeForge::standard().await;
        forge.delay(LABELS, Duration::from_millis(FORGE_MS));
        let fleet = Arc::new(
            Fleet::with_forge(forge, replicas, &redis.url(), &["--cache-ttl-ms", "600000"]).await,
        );
        for (name, read) in [
            ("tools/call, each to the forge", false),
            ("resources/read, cached", true),
        ] {
            let outcome = run(fleet.clone(), read).await;
            let at = |q: f64| {
                let i = ((outcome.latencies.len() as f64 - 1.0) * q) as usize;
                outcome.latencies[i].as_secs_f64() * 1000.0
            };
            println!(
                "| {name} | {replicas} | {:.0} | {:.1} ms | {:.1} ms | {:.0} µs | {} |",
                outcome.done as f64 / RUN.as_secs_f64(),
                at(0.5),
                at(0.99),
                outcome.cpu * 1e6 / outcome.done as f64,
                outcome.failed
            );
            failures += outcome.failed;
        }
    }
    assert_eq!(failures, 0, "every request answered");
}
