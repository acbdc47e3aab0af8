#!/usr/bin/env bash
# Runs the bounded load and fault run (tests/load_fault.rs, ignored by default) in release mode
# and prints its table of tried and failed attempts per scenario, with the RSS and descriptor
# peaks. Exits with cargo's status: non-zero when any scenario had a failure.
#
# Usage: scripts/load-fault.sh
set -euo pipefail
cd "$(dirname "$0")/.."

exec cargo test --release --test main load_fault -- --ignored --nocapture --test-threads 1
