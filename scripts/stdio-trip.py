#!/usr/bin/env python3
"""Times the stdio trip of one or more forgelens binaries: `ping` round trips over pipes and
over a pair of Unix sockets (what clients built on libuv, such as Node's, give a server).

Usage: scripts/stdio-trip.py BINARY [BINARY ...] [--pings N]

`ping` never reaches the forge, so the figure is the client's write, the server's wake-up, its
parsing and answer, and the client's wake-up. The client is this script, whose own share is the
same for every binary: compare binaries within one run. Prints the median over the last 90% of
N pings, for each binary and wiring, twice (interleaved, to show the noise).
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time


def session(binary, wiring, pings):
    env = dict(os.environ, FORGEJO_URL="http://127.0.0.1:9", FORGEJO_TOKEN="unused")
    if wiring == "sockets":
        ours_in, theirs_in = socket.socketpair()
        ours_out, theirs_out = socket.socketpair()
        child = subprocess.Popen([binary], stdin=theirs_in.fileno(), stdout=theirs_out.fileno(),
                                 stderr=subprocess.DEVNULL, env=env)
        theirs_in.close()
        theirs_out.close()
        write, read = ours_in.makefile("wb", buffering=0), ours_out.makefile("rb")
        sockets = (ours_in, ours_out)
    else:
        child = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env=env, bufsize=0)
        write, read = child.stdin, child.stdout
        sockets = ()

    def ask(message):
        write.write((json.dumps(message) + "\n").encode())
        return read.readline()

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "stdio-trip", "version": "0"}}})
    write.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    times = []
    for i in range(1, pings + 1):
        started = time.perf_counter()
        answer = ask({"jsonrpc": "2.0", "id": i, "method": "ping"})
        times.append(time.perf_counter() - started)
        if b'"result"' not in answer:
            sys.exit(f"{binary} over {wiring}: {answer!r}")
    write.close()
    for s in sockets:
        s.shutdown(socket.SHUT_WR)
        s.close()
    child.wait()
    return statistics.median(times[pings // 10:]) * 1e6


def main():
    args, pings = sys.argv[1:], 3000
    if "--pings" in args:
        at = args.index("--pings")
        pings = int(args[at + 1])
        del args[at:at + 2]
    if not args:
        sys.exit(__doc__)
    for _ in range(2):
        for binary in args:
            for wiring in ("pipes", "sockets"):
                print(f"{binary} over {wiring}: {session(binary, wiring, pings):.1f} µs")


main()
