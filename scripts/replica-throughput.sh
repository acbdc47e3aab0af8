#!/usr/bin/env bash
# Throughput of one forgelens replica against three sharing a Redis store, behind the tests'
# round-robin proxy, against a fake forge that waits 20 ms per answer (tests/replica_load.rs,
# ignored by default). Release mode; needs redis-server (apt-get install redis-server).
# Prints the table docs/performance.md records.
#
# Usage: scripts/replica-throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."

exec cargo test --release --test main replica_throughput -- --ignored --nocapture --test-threads 1
