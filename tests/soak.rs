//! A soak of 10 000 mixed requests: resident memory stops growing after warm-up and no file
//! descriptor leaks. Long, so ignored by default; run it with
//! `cargo test --release --test main soak -- --ignored --nocapture` and record the figures in
//! docs/performance.md.

use serde_json::json;

use crate::support::fixtures::{LABEL_ID, SHA};
use crate::support::{FakeForge, Launch};

/// (VmRSS in KiB, open file descriptors) of a process.
fn footprint(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    (rss, fds)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a long soak; see the module documentation"]
async fn ten_thousand_mixed_requests_hold_steady() {
    let forge = FakeForge::standard().await;
    let server = Launch::new(&forge).env("RUST_LOG", "warn").start().await;
    let mut samples = Vec::new();
    for round in 0..10_000u32 {
        match round % 5 {
            0 => assert!(
                server
                    .read(&format!("forgejo://repo/acme/widgets/label/{LABEL_ID}"))
                    .await
                    .is_ok()
            ),
            1 => assert!(
                server
                    .read("forgejo://repo/acme/many-labels/labels?limit=20")
                    .await
                    .is_ok()
            ),
            2 => assert!(
                server
                    .read(&format!("forgejo://repo/acme/widgets/commit/{SHA}/status"))
                    .await
                    .is_ok()
            ),
            3 => assert!(
                server
                    .read("forgejo://repo/acme/widgets/label/999")
                    .await
                    .is_err()
            ),
            _ => {
                server
                    .call_ok("list_org_labels", json!({"org": "bigorg", "page": 2}))
                    .await;
            }
        }
        if round % 1000 == 999 {
            samples.push(footprint(server.pid()));
        }
    }
    println!("after each 1000 requests (VmRSS KiB, fds): {samples:?}");
    let (warm_rss, warm_fds) = samples[1];
    let (last_rss, last_fds) = *samples.last().unwrap();
    assert!(
        last_rss <= warm_rss + 2048,
        "memory grew after warm-up: {samples:?}"
    );
    assert!(last_fds <= warm_fds + 4, "descriptors leaked: {samples:?}");
    server.stop().await;
}
