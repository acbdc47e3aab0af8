#!/usr/bin/env python3
"""The list of functions a session runs, which build.rs has lld lay out together.

    scripts/session-functions.py            # how many listed functions the dist build has
    scripts/session-functions.py --record   # record the list afresh (needs valgrind)

The kernel maps a binary's code 64 KiB at a time around each page a process touches, so code
that runs once keeps its neighbours resident too; linked together, the functions a session runs
fill few pages (docs/performance.md, "Where the resident code goes"). build.rs passes
scripts/session-functions.txt to lld as a symbol-ordering file.

A symbol's name carries a hash of the compiler, the dependencies' versions, the profile and
the flags, so the list orders only the build it was recorded from: `cargo build --profile dist`
with the Rust and the Cargo.lock of that day, no RUSTFLAGS. A listed function the build lacks is
skipped, and the layout is only less good. Without `--record` the script links the dist build
and says how many of the listed functions it found: record the list again when that falls.

Both link the dist build with a linker map (build.rs writes one where FORGELENS_LINK_MAP says):
where each function of the stripped binary landed, which an unstripped build cannot tell, as its
symbols are another profile's. `--record` then runs one session (start-up, `tools/list`, reads of
every kind, a search; the requests of scripts/call-cost.py against its fake forge) under
callgrind, takes the address of every instruction run in the binary, writes the functions they
fall in to the list in address order, and links again in the new order.
"""
import bisect, http.server, os, re, subprocess, sys, tempfile, threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BUILT = os.path.join(TARGET, "dist", "forgelens")
MAP = os.path.join(TARGET, "dist", "forgelens.map")
LIST = os.path.join(ROOT, "scripts", "session-functions.txt")

# The fake forge and the requests of scripts/call-cost.py, without running its measurements.
_source = open(os.path.join(ROOT, "scripts", "call-cost.py")).read().rsplit("\nmain()", 1)[0]
COST = {"__file__": os.path.join(ROOT, "scripts", "call-cost.py")}
exec(_source, COST)


def build():
    """Links the dist build with a linker map; its functions in address order, as (address,
    symbol)."""
    env = dict(os.environ, FORGELENS_LINK_MAP=MAP)
    subprocess.run(["cargo", "build", "--profile", "dist"], cwd=ROOT, env=env, check=True)
    # lld's map: `VMA LMA size align` and then an output section, an input section or, in the
    # header's `Symbol` column, a symbol defined in the input section above.
    lines = open(MAP, errors="replace").read().splitlines()
    column = lines[0].index("Symbol")
    table = []
    for line in lines[1:]:
        if line[column - 1:column] == " " and line[column:column + 1] not in ("", " "):
            table.append((int(line.split(maxsplit=1)[0], 16), line[column:].strip()))
    return sorted(table)


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


def functions(addresses, table):
    """The symbols `addresses` fall in, in address order, each once."""
    starts = [s for s, _ in table]
    seen, order = set(), []
    for address in sorted(addresses):
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and table[i][1] not in seen:
            seen.add(table[i][1])
            order.append(table[i][1])
    return order


def record(table):
    """Runs one session under callgrind and writes what it ran to the list."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), COST["Forge"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory() as tmp:
        order = functions(executed(url, os.path.join(tmp, "callgrind.out")), table)
    with open(LIST, "w") as f:
        f.write("# The functions one session of forgelens runs, in the order they were found;\n"
                "# written by `scripts/session-functions.py --record`, read by build.rs.\n")
        f.write("\n".join(order) + "\n")
    print(f"{len(order)} functions run by a session, listed in {os.path.relpath(LIST, ROOT)}")


def main():
    table = build()
    if "--record" in sys.argv[1:]:
        record(table)
        # The list is one of build.rs's inputs: cargo links again, in the new order.
        table = build()
    present = {symbol for _, symbol in table}
    listed = [l for l in open(LIST).read().splitlines() if l and not l.startswith("#")]
    found = sum(symbol in present for symbol in listed)
    print(f"{found} of the {len(listed)} listed functions are in {os.path.relpath(BUILT, ROOT)}")


if __name__ == "__main__":
    main()
