//! What the shared store adds to a request: a read cache hit served by this process against
//! one served by the store (a read another replica made), and the forge's budget counted here
//! against counted in the store. A real `redis-server` (Debian's; `$REDIS_SERVER` overrides)
//! is started on a free loopback port for the run, with persistence off.
//!
//! Run: `cargo bench --bench store`. The target (issue 29) is that a hit through the store
//! costs at most 1 ms more than one in process; the figures are in docs/performance.md.
//!
//! | bench | what it times |
//! |---|---|
//! | `cache/hit_here` | `ReadCache::lookup` of an answer this process keeps |
//! | `cache/hit_shared` | the same lookup in a replica that never read it: the store serves it |
//! | `cache/keep_shared` | keeping a fresh answer here and in the store |
//! | `budget/admit_here` | `Budget::admit` under `--forge-rate`, counted in this process |
//! | `budget/admit_shared` | the same, counted by the store's script |
//!
//! After the timings it prints the CPU time of this process (its one thread) and of the Redis
//! server per operation, over a fixed count of each, since wall time alone hides where the
//! work is.

use std::hint::black_box;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use forgelens::cache::ReadCache;
use forgelens::config::SharedStore;
use forgelens::engine::{Block, ReadOutput};
use forgelens::forge::Token;
use forgelens::forge::budget::{Budget, Rate};
use forgelens::store::redis::RedisStore;

/// Operations per CPU figure through the store, and in process (where each is far shorter,
/// and the kernel's per-thread clock needs a longer run to see it).
const CPU_OPS: u32 = 3000;
const CPU_OPS_HERE: u32 = 1_000_000;

struct Redis(Child, u16);

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn redis() -> Redis {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
    let child = Command::new(&binary)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {binary}: {e} (apt-get install redis-server)"));
    let redis = Redis(child, port);
    for _ in 0..1000 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return redis;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("redis-server did not listen on {port}");
}

/// An issue-sized answer (about 4 KiB of JSON).
fn answer() -> ReadOutput {
    let body = serde_json::json!({
        "number": 12, "title": "A title of ordinary length for an issue",
        "body": "text ".repeat(700), "state": "open",
        "labels": [{"name": "bug"}, {"name": "ui"}], "comments": 3,
    });
    ReadOutput {
        blocks: vec![Block {
            mime: "application/json",
            text: body.to_string(),
        }],
        meta: None,
        ttl_ms: None,
    }
}

/// CPU time this thread has used.
fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let nanos = text
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Duration::from_nanos(nanos)
}

/// CPU time (user and system) process `pid` has used.
fn process_cpu(pid: u32) -> Duration {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = text
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    // USER_HZ is 100 on Linux.
    Duration::from_millis(ticks * 10)
}

fn main() {
    let redis = redis();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let _entered = runtime.enter();
    let store = Arc::new(
        RedisStore::new(&SharedStore {
            url: format!("redis://127.0.0.1:{}/0", redis.1),
            password: None,
            ca: None,
            timeout: Duration::from_secs(1),
        })
        .expect("the store"),
    );
    let token = Token::new("bench-token").expect("a token");
    let uri = "forgejo://repo/acme/widgets/issue/12";
    let output = answer();
    let ttl = Some(Duration::from_secs(600));
    let shared_cache = || {
        let mut cache = ReadCache::new(ttl);
        cache.share(store.clone());
        cache
    };
    let writer = shared_cache();
    runtime.block_on(writer.keep(Some(&token), uri, &output));
    let here = ReadCache::new(ttl);
    runtime.block_on(here.keep(Some(&token), uri, &output));
    let rate = Some(Rate {
        count: u32::MAX,
        period: Duration::from_secs(60),
    });
    let budget_here = Budget::new(rate);
    let mut budget_shared = Budget::new(rate);
    budget_shared.share(store.clone());

    let mut c = Criterion::default().configure_from_args();
    {
        let mut group = c.benchmark_group("cache");
        group.bench_function("hit_here", |b| {
            b.iter(|| runtime.block_on(here.lookup(Some(&token), black_box(uri))))
        });
        group.bench_function("hit_shared", |b| {
            b.iter_batched(
                shared_cache,
                |cache| {
                    let hit = runtime.block_on(cache.lookup(Some(&token), black_box(uri)));
                    assert!(hit.is_some(), "the store holds the answer");
                    (cache, hit)
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function("keep_shared", |b| {
            b.iter(|| runtime.block_on(writer.keep(Some(&token), black_box(uri), &output)))
        });
        group.finish();
    }
    {
        let mut group = c.benchmark_group("budget");
        group.bench_function("admit_here", |b| {
            b.iter(|| runtime.block_on(budget_here.admit(Some(&token))))
        });
        group.bench_function("admit_shared", |b| {
            b.iter(|| runtime.block_on(budget_shared.admit(Some(&token))))
        });
        group.finish();
    }
    c.final_summary();

    println!("\nCPU per operation (this thread / redis-server / wall):");
    let redis_pid = redis.0.id();
    let measure = |name: &str, count: u32, op: &mut dyn FnMut()| {
        let (ours, theirs, wall) = (thread_cpu(), process_cpu(redis_pid), Instant::now());
        for _ in 0..count {
            op();
        }
        let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(count);
        println!(
            "| {name} | {:.1} µs | {:.1} µs | {:.1} µs wall |",
            per(thread_cpu() - ours),
            per(process_cpu(redis_pid).saturating_sub(theirs)),
            per(wall.elapsed()),
        );
    };
    measure("cache/hit_here", CPU_OPS_HERE, &mut || {
        black_box(runtime.block_on(here.lookup(Some(&token), uri)));
    });
    let mut fresh: Vec<ReadCache> = (0..CPU_OPS).map(|_| shared_cache()).collect();
    let mut used = Vec::with_capacity(fresh.len());
    measure("cache/hit_shared", CPU_OPS, &mut || {
        let cache = fresh.pop().expect("one cache per operation");
        black_box(runtime.block_on(cache.lookup(Some(&token), uri)));
        // Dropped after the count: a replica's cache is not dropped per request.
        used.push(cache);
    });
    measure("budget/admit_here", CPU_OPS_HERE, &mut || {
        black_box(runtime.block_on(budget_here.admit(Some(&token))));
    });
    measure("budget/admit_shared", CPU_OPS, &mut || {
        black_box(runtime.block_on(budget_shared.admit(Some(&token))));
    });
}
