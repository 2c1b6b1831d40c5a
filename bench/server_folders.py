#!/usr/bin/env python3
"""capguard server on a multi-root workspace against `check --no-cache` on each folder, on real code.

    python3 bench/server_folders.py CAPGUARD TREE...

Starts `CAPGUARD server --no-cache` with the TREEs as its workspace folders (in that order), opens
in each folder the first file `check` reports (or its first Python file when it reports none),
collects every diagnostic the server publishes until it has been quiet for 3 s after the last
folder's open file, and compares each folder's diagnostics (absolute path, line, rule) with
`check --no-cache --output-format json .` run in that folder. Prints a line a folder (published,
checked, differences, seconds to its open file's diagnostics) and every difference; exits 1 when
any folder differs.
"""
import json, os, queue, subprocess, sys, time, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lspclient import Client  # noqa: E402

cg, trees = sys.argv[1], [os.path.abspath(t) for t in sys.argv[2:]]


def uri(p):
    return "file://" + urllib.parse.quote(p)


def path_of(u):
    return urllib.parse.unquote(urllib.parse.urlparse(u).path)


checked, opened = {}, {}
for t in trees:
    out = subprocess.run([cg, "check", "--no-cache", "--exit-zero", "--output-format", "json", "."], cwd=t,
                         capture_output=True, text=True, check=True).stdout
    fs = json.loads(out)["findings"]
    checked[t] = sorted((os.path.join(t, f["path"]), f["line"], f["rule"]) for f in fs)
    if fs:
        opened[t] = os.path.join(t, fs[0]["path"])
    else:
        for d, _, names in sorted(os.walk(t)):
            py = sorted(n for n in names if n.endswith(".py"))
            if py:
                opened[t] = os.path.join(d, py[0])
                break

c = Client([cg, "server", "--no-cache"], cwd=trees[0])
c.call("initialize", {"processId": None, "capabilities": {},
                      "workspaceFolders": [{"uri": uri(t), "name": os.path.basename(t)} for t in trees]})
c.send({"method": "initialized", "params": {}})
start = time.time()
for t in trees:
    with open(opened[t], encoding="utf-8", errors="replace") as f:
        text = f.read()
    c.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri(opened[t]), "languageId": "python", "version": 1, "text": text}}})
pub, when = {}, {}
waiting = set(opened[t] for t in trees)
while True:
    try:
        m = c.msgs.get(timeout=3 if not waiting else 600)
    except queue.Empty:
        break
    if m.get("method") != "textDocument/publishDiagnostics":
        continue
    p = path_of(m["params"]["uri"])
    pub[p] = [(p, d["range"]["start"]["line"] + 1, d.get("code")) for d in m["params"]["diagnostics"]]
    if p in waiting:
        waiting.discard(p)
        when[p] = time.time() - start
bad = 0
for t in trees:
    got = sorted(x for p, ds in pub.items() if p == t or p.startswith(t + os.sep) for x in ds)
    want = checked[t]
    diff = sorted(set(got) ^ set(want))
    bad += bool(diff) or len(got) != len(want)
    print(f"{t}: published {len(got)}, checked {len(want)}, {len(diff)} differences, "
          f"open file's diagnostics after {when.get(opened[t], float('nan')):.2f} s")
    for x in diff[:20]:
        print("   ", "published only" if x in got else "checked only", x)
c.proc.stdin.close()
c.proc.wait(timeout=30)
sys.exit(1 if bad else 0)
