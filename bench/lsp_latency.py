#!/usr/bin/env python3
"""The editor's wait after a burst of typing, through `capguard server` over stdio.

    python3 bench/lsp_latency.py CAPGUARD TREE FILE LINE [--burst N] [--gap S] [--rounds R] [--idle S]

Starts `CAPGUARD server` in TREE (the workspace), opens FILE (relative to TREE), waits for its
first diagnostics, then R times sends a burst of N edits GAP seconds apart (each inserts a
statement after line LINE with a new value, as typing in a host function does) and measures the
seconds from the burst's last edit to the diagnostics published for that edit's version. Prints
one line per round and the median.

With --idle S, each round is followed by S seconds without edits, and the line gives the server's
resident set (VmRSS, Linux) when the diagnostics came and after the idle time (capguard server
returns the memory an analysis left once idle for --free-after).

A run that an edit made stale is dropped either way; before capguard cancelled it
(guard.Options.Context), the run for the last edit waited for it to end.
"""
import os
import statistics
import sys
import time
import urllib.parse
import argparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lspclient import Client  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capguard")
    ap.add_argument("tree")
    ap.add_argument("file")
    ap.add_argument("line", type=int)
    ap.add_argument("--burst", type=int, default=3)
    ap.add_argument("--gap", type=float, default=0.5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle", type=float, default=0)
    a = ap.parse_args()
    tree = os.path.abspath(a.tree)
    path = os.path.join(tree, a.file)
    uri = "file://" + urllib.parse.quote(path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if a.line > len(lines):
        sys.exit(f"lsp_latency: {a.file} has {len(lines)} lines")

    client = Client([a.capguard, "server"], cwd=tree)
    proc, msgs, send = client.proc, client.msgs, client.send

    def wait_version(v, timeout=300):
        end = time.time() + timeout
        while True:
            m = msgs.get(timeout=max(0.01, end - time.time()))
            if m.get("method") == "textDocument/publishDiagnostics":
                p = m["params"]
                if p["uri"] == uri and p.get("version") == v:
                    return time.time()

    send({"id": 1, "method": "initialize", "params": {"processId": os.getpid(), "rootUri": "file://" + urllib.parse.quote(tree), "capabilities": {}}})
    send({"method": "initialized", "params": {}})
    version = 1
    send({"method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": "\n".join(lines)}}})
    t0 = time.time()
    wait_version(version)
    print(f"open: first diagnostics after {time.time() - t0:.2f} s", flush=True)
    waits = []
    for r in range(a.rounds):
        for k in range(a.burst):
            version += 1
            text = "\n".join(lines[: a.line] + [f"    _bench_lsp_edit = {version}"] + lines[a.line :])
            send({"method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}})
            last = time.time()
            if k + 1 < a.burst:
                time.sleep(a.gap)
        w = wait_version(version) - last
        waits.append(w)
        line = f"round {r + 1}: {a.burst} edits {a.gap} s apart, diagnostics {w:.2f} s after the last"
        if a.idle > 0:
            busy = rss(proc.pid)
            time.sleep(a.idle)
            line += f"; resident {busy} MB, after {a.idle:g} s idle {rss(proc.pid)} MB"
        print(line, flush=True)
        time.sleep(1.0)
    print(f"median {statistics.median(waits):.2f} s")
    send({"id": 2, "method": "shutdown"})
    send({"method": "exit"})
    proc.stdin.close()
    proc.wait(timeout=30)


def rss(pid):
    """The process' resident set in MB (VmRSS), or "?" off Linux."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for l in f:
                if l.startswith("VmRSS:"):
                    return str(int(l.split()[1]) // 1000)
    except OSError:
        pass
    return "?"


if __name__ == "__main__":
    main()
