#!/usr/bin/env bash
# Start-up, phase by phase: starts the server N times (default 30), answers one `initialize`
# over stdio and prints the median of each phase the server logs at debug level ("start-up
# phase"), of the whole run from spawn to the answer, its CPU time and its peak RSS. Usage:
#   scripts/startup-phases.sh [BINARY] [N] [-- extra server flags]
# BINARY defaults to target/release/forgelens. No forge is contacted (the URL is a closed port).
set -euo pipefail
bin=${1:-target/release/forgelens}
n=${2:-30}
shift $(( $# > 2 ? 2 : $# ))
[[ ${1:-} == -- ]] && shift
python3 - "$bin" "$n" "$@" <<'PY'
import json, statistics, subprocess, sys, time, re, os
bin, n, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "startup-phases", "version": "1"}}}) + "\n"
env = dict(os.environ, RUST_LOG="forgelens=debug")
phases, totals, cpu, hwm, anon = {}, [], [], [], []
for _ in range(n):
    started = time.perf_counter()
    p = subprocess.Popen([bin, "--url", "http://127.0.0.1:9", *extra], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    p.stdin.write(init.encode()); p.stdin.flush()
    p.stdout.readline()
    totals.append((time.perf_counter() - started) * 1000)
    with open(f"/proc/{p.pid}/status") as status:
        text = status.read()
    hwm.append(int(re.search(r"VmHWM:\s+(\d+)", text).group(1)) / 1024)
    anon.append(int(re.search(r"RssAnon:\s+(\d+)", text).group(1)) / 1024)
    p.stdin.close()
    err = p.stderr.read().decode()
    _, status, usage = os.wait4(p.pid, 0)
    cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
    for m in re.finditer(r'phase="?([^"\n]+?)"? micros=(\d+)', err):
        phases.setdefault(m.group(1), []).append(int(m.group(2)) / 1000)
for name, values in phases.items():
    print(f"{name:<16} {statistics.median(values):7.2f} ms")
print(f"{'spawn → answer':<16} {statistics.median(totals):7.2f} ms (median of {n})")
print(f"{'process CPU':<16} {statistics.median(cpu):7.2f} ms (whole run, user + system)")
print(f"{'peak RSS':<16} {statistics.median(hwm):7.2f} MiB (VmHWM after the answer)")
print(f"{'anonymous RSS':<16} {statistics.median(anon):7.2f} MiB (RssAnon after the answer)")
PY
