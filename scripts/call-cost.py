#!/usr/bin/env python3
"""CPU per call, counted in instructions (callgrind: the same count on a loaded or a quiet
machine). Starts a small fake forge on loopback (bodies from the test fixtures),
runs the server under valgrind once per operation with `initialize` and N calls of it, and once
with `initialize` alone; prints (run - start-up) / N per operation.

    scripts/call-cost.py [BINARY ...] [--calls N]
    scripts/call-cost.py [BINARY ...] --memory N

Each BINARY is measured in turn (default target/release/forgelens), so two builds compare on
one table. Needs valgrind. Not a timing: a figure for docs/performance.md, with its command.
With `--memory N` it counts memory instead, without valgrind: `tools/list` once (what a client
asks first), then N reads cycling through the operations below, with the server's read cache as
it is by default; it prints the peak resident set (VmHWM) and the anonymous part of the
resident set then (RssAnon), the memory each process really costs.
"""
import http.server, json, os, re, subprocess, sys, tempfile, threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def fixture(name):
    with open(os.path.join(ROOT, "tests/fixtures", name)) as f:
        return json.load(f)

ISSUE, COMMENT, LABEL = fixture("tools/issue.json"), fixture("tools/comment.json"), fixture("label.json")
BODIES = {
    "/api/v1/version": ({"version": "15.0.0"}, None),
    "/api/v1/repos/o/r/issues/1": (ISSUE, None),
    "/api/v1/repos/o/r/issues/1/comments": ([dict(COMMENT, id=i) for i in range(20)], "20"),
    "/api/v1/repos/o/r/labels": ([dict(LABEL, id=i) for i in range(20)], "20"),
}

class Forge(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body, total = BODIES.get(self.path.split("?")[0], ({"message": "not found"}, None))
        data = json.dumps(body).encode()
        self.send_response(200 if self.path.split("?")[0] in BODIES else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if total:
            self.send_header("X-Total-Count", total)
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass

def message(id, method, params):
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n"

OPS = {
    "start-up only": None,
    "issue read (with comments)": ("resources/read", {"uri": "forgejo://repo/o/r/issue/1"}),
    "get_issue": ("tools/call", {"name": "get_issue",
                                 "arguments": {"owner": "o", "repo": "r", "index": 1}}),
    "labels read": ("resources/read", {"uri": "forgejo://repo/o/r/labels"}),
    "tools/list": ("tools/list", {}),
    # The first call builds the search index: run with `--calls 1` and `--calls 21` and take
    # the difference over 20 for what one more search costs.
    "search_tools": ("tools/call", {"name": "search_tools",
                                    "arguments": {"query": "delete comment 7788 in acme/app"}}),
}

def instructions(binary, url, op, calls):
    lines = [message(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "call-cost", "version": "1"}}),
             json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"]
    if op:
        lines += [message(i + 1, *op) for i in range(calls)]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg")
        # One answer per line is read before the next request goes, so calls never overlap
        # (and the read cache, off for this run, never answers one).
        proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                 binary, "--url", url, "--cache-ttl-ms", "0"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        for line in lines:
            proc.stdin.write(line); proc.stdin.flush()
            if '"id"' in line:
                proc.stdout.readline()
        proc.stdin.close(); proc.stdout.read()
        err = proc.stderr.read(); proc.wait()
        return int(re.search(r"Collected : (\d+)", err).group(1))

def session(reads):
    """The requests of a session as a client makes them: `initialize`, `tools/list` once, then
    `reads` reads cycling through the operations above (never a search, which builds an index
    a reading session does not). scripts/resident-code.py and scripts/session-functions.py
    send it too."""
    ops = [op for op in OPS.values() if op and op[0] != "tools/list"
           and op[1].get("name") != "search_tools"]
    lines = [message(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "call-cost", "version": "1"}}),
             json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n",
             message(1, "tools/list", {})]
    return lines + [message(i + 2, *ops[i % len(ops)]) for i in range(reads)]

def memory(binary, url, reads):
    proc = subprocess.Popen([binary, "--url", url], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in session(reads):
        proc.stdin.write(line); proc.stdin.flush()
        if '"id"' in line:
            answer = json.loads(proc.stdout.readline())
            assert "result" in answer, answer
    with open(f"/proc/{proc.pid}/status") as f:
        status = dict(l.split(":", 1) for l in f)
    proc.stdin.close(); proc.wait()
    kib = lambda key: int(status[key].split()[0])
    return kib("VmHWM"), kib("RssAnon")

def main():
    args, calls = sys.argv[1:], 50
    if "--memory" in args:
        i = args.index("--memory"); reads = int(args[i + 1]); del args[i:i + 2]
    else:
        reads = None
    if "--calls" in args:
        i = args.index("--calls"); calls = int(args[i + 1]); del args[i:i + 2]
    binaries = args or [os.path.join(ROOT, "target/release/forgelens")]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    if reads is not None:
        print(f"memory after tools/list and {reads} reads, MiB\n")
        print("| binary | peak RSS (VmHWM) | anonymous RSS then |\n|---|---|---|")
        for b in binaries:
            hwm, anon = memory(b, url, reads)
            print(f"| {os.path.relpath(b)} | {hwm / 1024:.1f} | {anon / 1024:.1f} |")
        return
    print(f"instructions per call, {calls} calls each; start-up in total\n")
    print("| operation | " + " | ".join(os.path.relpath(b) for b in binaries) + " |")
    print("|---" * (len(binaries) + 1) + "|")
    base = {b: instructions(b, url, None, 0) for b in binaries}
    for name, op in OPS.items():
        cells = []
        for b in binaries:
            if op is None:
                cells.append(f"{base[b] / 1e6:.1f} M")
            else:
                cells.append(f"{(instructions(b, url, op, calls) - base[b]) / calls / 1e3:.0f} k")
        print(f"| {name} | " + " | ".join(cells) + " |")

main()
