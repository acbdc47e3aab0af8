#!/usr/bin/env python3
"""The dist build with the code a session runs laid out together, for releases.

The kernel maps a binary's code 64 KiB at a time around each page a process touches, so code
that runs once at start-up keeps its neighbours resident too: in the plain dist build about
half of the resident code is never executed (docs/performance.md, "Memory"). This build links
the functions a real session executes (start-up, `tools/list`, reads, a search) next to each
other, with lld's symbol ordering, and so keeps far fewer pages resident. The code itself is
the same: only its order in the file changes.

    scripts/ordered-build.py [--out PATH]

Steps: a dist build (unstripped, linked with an empty ordering file) in target/ordered; one
session under callgrind against the fake forge of scripts/call-cost.py, recording the address
of every instruction run; the names of the functions those addresses fall in, in address
order, written to target/ordered/functions.order; the link again with that file; the binary
stripped and copied to PATH (default target/ordered/forgelens). Needs valgrind, nm and strip,
and a toolchain that links with lld (Rust 1.90 and later on x86_64 Linux do by default).
"""
import bisect, http.server, os, re, shutil, subprocess, sys, tempfile, threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "target", "ordered")
ORDER = os.path.join(TARGET, "functions.order")
BUILT = os.path.join(TARGET, "dist", "forgelens")

# The fake forge and the requests of scripts/call-cost.py, without running its measurements.
_source = open(os.path.join(ROOT, "scripts", "call-cost.py")).read().rsplit("\nmain()", 1)[0]
COST = {"__file__": os.path.join(ROOT, "scripts", "call-cost.py")}
exec(_source, COST)


def build():
    env = dict(os.environ,
               RUSTFLAGS=f"-C link-arg=-Wl,--symbol-ordering-file={ORDER} "
                         "-C link-arg=-Wl,--no-warn-symbol-ordering",
               CARGO_PROFILE_DIST_STRIP="false", CARGO_TARGET_DIR=TARGET)
    subprocess.run(["cargo", "build", "--profile", "dist"], cwd=ROOT, env=env, check=True)


def session(reads=60):
    """The requests of one session: start-up, the tool list, reads of every kind, a search."""
    return COST["session"](reads) + [COST["message"](reads + 2, *COST["OPS"]["search_tools"])]


def executed(url, out):
    """Runs one session under callgrind; the addresses of the instructions run in the binary."""
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--dump-instr=yes",
                             f"--callgrind-out-file={out}", BUILT, "--url", url,
                             "--cache-ttl-ms", "0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    for line in session():
        proc.stdin.write(line); proc.stdin.flush()
        if '"id"' in line:
            proc.stdout.readline()
    proc.stdin.close(); proc.stdout.read(); proc.stderr.read(); proc.wait()
    lines = open(out).read().splitlines()
    # An object is named where it first appears (`ob=(7) /path` or `cob=(7) /path`).
    names = {}
    for line in lines:
        m = re.match(r"c?ob=\((\d+)\) (.+)", line)
        if m:
            names[m.group(1)] = m.group(2)
    ours = os.path.realpath(BUILT)
    addresses, address, inside = set(), 0, False
    for line in lines:
        if line.startswith("ob="):
            key = re.match(r"ob=\((\d+)\)", line).group(1)
            inside = os.path.realpath(names.get(key, "")) == ours
            continue
        position = line.split(maxsplit=1)[0] if line.strip() else ""
        # Cost lines start with an address, absolute or relative to the one before.
        if position.startswith("0x"):
            address = int(position, 16)
        elif position[:1] in ("+", "-") and position[1:]:
            step = int(position[1:], 16) if position[1:].startswith("0x") else int(position[1:])
            address += step if position[0] == "+" else -step
        elif position != "*":
            continue
        if inside:
            addresses.add(address)
    return addresses


def functions(addresses):
    """The names of the functions `addresses` fall in, in address order, each once."""
    table = subprocess.run(["nm", "-n", "--defined-only", BUILT], capture_output=True,
                           text=True, check=True).stdout
    symbols = [(int(a, 16), name) for a, kind, name in
               (line.split(" ", 2) for line in table.splitlines() if line.count(" ") >= 2)
               if kind in "tTwW"]
    starts = [s for s, _ in symbols]
    seen, order = set(), []
    for address in sorted(addresses):
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and symbols[i][1] not in seen:
            seen.add(symbols[i][1])
            order.append(symbols[i][1])
    return order


def main():
    args = sys.argv[1:]
    out = args[args.index("--out") + 1] if "--out" in args else os.path.join(TARGET, "forgelens")
    os.makedirs(TARGET, exist_ok=True)
    open(ORDER, "w").close()
    build()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), COST["Forge"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory() as tmp:
        order = functions(executed(url, os.path.join(tmp, "callgrind.out")))
    with open(ORDER, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"{len(order)} functions run by a session, linked first")
    # Only the link changes: the ordering file is not a source cargo tracks.
    os.utime(os.path.join(ROOT, "src", "main.rs"))
    build()
    if os.path.abspath(out) != os.path.abspath(BUILT):
        shutil.copyfile(BUILT, out)
        shutil.copymode(BUILT, out)
    subprocess.run(["strip", out], check=True)
    print(out)


if __name__ == "__main__":
    main()
