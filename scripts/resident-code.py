#!/usr/bin/env python3
"""Which of a binary's code is resident after a session, by crate: what the peak RSS's file
pages are made of.

    scripts/resident-code.py BINARY [READS]

BINARY must keep its symbols (`CARGO_PROFILE_DIST_STRIP=false cargo build --profile dist`).
Such a build has other symbol names than the stripped dist build, so build.rs's ordering does
not apply to it: this shows the compiler's layout. Starts it against the fake forge
of scripts/call-cost.py, sends `tools/list` and READS reads (default 2000), then reads which of
its pages are present (/proc/PID/pagemap, as root) and names each code page by the function at
its middle. Not a timing: a figure for docs/performance.md, with its command.
"""
import bisect, collections, http.server, os, re, struct, subprocess, sys, threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_source = open(os.path.join(ROOT, "scripts", "call-cost.py")).read().rsplit("\nmain()", 1)[0]
COST = {"__file__": os.path.join(ROOT, "scripts", "call-cost.py")}
exec(_source, COST)
PAGE = 4096


def crate(name):
    """The first path segment of a demangled name (`tokio::…`, `<serde_json::…`)."""
    bare = re.sub(r"^(dyn |impl |mut |const )", "", name.lstrip("<&*_ "))
    m = re.match(r"[A-Za-z0-9_]+", bare)
    return m.group(0) if m else "?"


def main():
    binary, reads = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), COST["Forge"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    proc = subprocess.Popen([binary, "--url", url], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in COST["session"](reads):
        proc.stdin.write(line); proc.stdin.flush()
        if '"id"' in line:
            proc.stdout.readline()
    ours = os.path.realpath(binary)
    maps = []
    for line in open(f"/proc/{proc.pid}/maps"):
        parts = line.split()
        if len(parts) >= 6 and os.path.realpath(parts[5]) == ours:
            start, end = (int(x, 16) for x in parts[0].split("-"))
            maps.append((start, end, parts[1], int(parts[2], 16)))
    base = min(start - offset for start, _, _, offset in maps)
    present = {}
    with open(f"/proc/{proc.pid}/pagemap", "rb") as pagemap:
        for start, end, perms, _ in maps:
            pagemap.seek(start // PAGE * 8)
            data = pagemap.read((end - start) // PAGE * 8)
            for i in range(len(data) // 8):
                if struct.unpack_from("<Q", data, i * 8)[0] >> 63:
                    present[start + i * PAGE] = perms
    status = dict(line.split(":", 1) for line in open(f"/proc/{proc.pid}/status"))
    proc.stdin.close(); proc.wait()
    print(" ".join(f"{key} {status[key].strip()}" for key in ("VmHWM", "RssFile", "RssAnon")))
    for perms, pages in sorted(collections.Counter(present.values()).items()):
        print(f"{perms}: {pages * PAGE / 2**20:.1f} MiB resident")
    table = subprocess.run(["nm", "-n", "-C", "--defined-only", binary], capture_output=True,
                           text=True, check=True).stdout
    symbols = sorted((int(m.group(1), 16) + base, m.group(2)) for m in
                     (re.match(r"([0-9a-f]+) [tTwW] (.*)", line) for line in table.splitlines())
                     if m)
    starts = [s for s, _ in symbols]
    by_crate = collections.Counter()
    for page, perms in present.items():
        if "x" in perms:
            i = bisect.bisect_right(starts, page + PAGE // 2) - 1
            by_crate[crate(symbols[i][1]) if i >= 0 else "?"] += 1
    for name, pages in by_crate.most_common(15):
        print(f"{pages * PAGE / 2**20:6.2f} MiB  {name}")


if __name__ == "__main__":
    main()
