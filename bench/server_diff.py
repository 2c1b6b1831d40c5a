#!/usr/bin/env python3
"""capguard server's edit path against `check --no-cache`, on real code.

    python3 bench/server_diff.py CAPGUARD TREE N SEED

Copies TREE twice into /tmp/srvdiff-SEED (a workspace for the server, a tree for check), starts
`CAPGUARD server` in the workspace, and N times makes a random code edit to a random file (a third
or more of them in files with findings or on their chains): a statement binding a parameter inserted,
a call statement deleted or doubled, or the line of a finding replaced by `pass`. Each edit goes to the
server as an unsaved buffer (the buffers stay open, so edits pile up) and to the disk of the second
copy; every diagnostic the server publishes after the edit (path, line, rule, message, chain,
resolution) is compared with `check --no-cache --output-format json` on the second copy. Prints each
edit, the two counts and every difference, then the number of edits that differed. An edit that does
not compile is skipped.
"""
import json, os, queue, random, shutil, subprocess, sys, time, urllib.parse

cg, tree, n, seed = sys.argv[1], os.path.abspath(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)
work = f"/tmp/srvdiff-{seed}"
shutil.rmtree(work, ignore_errors=True)
base = os.path.basename(tree.rstrip("/"))
ws, disk = work + "/a/" + base, work + "/b/" + base
ign = shutil.ignore_patterns(".git", ".capguard_cache")
shutil.copytree(tree, ws, ignore=ign, symlinks=True)
shutil.copytree(tree, disk, ignore=ign, symlinks=True)
env = dict(os.environ, CAPGUARD_CACHE_DIR=work + "/cache")

pyfiles = []
for d, _, fs in os.walk(ws):
    for f in fs:
        if f.endswith(".py"):
            pyfiles.append(os.path.relpath(os.path.join(d, f), ws))
pyfiles.sort()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lspclient import Client  # noqa: E402
from random_edits import make_edit  # noqa: E402

client = Client([cg, "server", "--debounce", "50ms"], cwd=ws, env=env)
proc, msgs, send, call = client.proc, client.msgs, client.send, client.call


def uri(rel):
    return "file://" + urllib.parse.quote(os.path.join(ws, rel))


pub = {}  # rel -> diagnostics


def settle(want_uri, version, timeout=600):
    """Collect publishes until want_uri's version arrives and 1 s passes quiet."""
    end = time.time() + timeout
    got = False
    while True:
        try:
            m = msgs.get(timeout=1.0 if got else max(0.1, end - time.time()))
        except queue.Empty:
            if got:
                return
            raise SystemExit("timeout waiting for diagnostics")
        if m.get("method") == "textDocument/publishDiagnostics":
            p = m["params"]
            rel = os.path.relpath(urllib.parse.unquote(p["uri"][len("file://"):]), ws)
            pub[rel] = p["diagnostics"]
            if p["uri"] == want_uri and p.get("version") == version:
                got = True
        elif m.get("method") == "window/showMessage":
            print("SHOWMESSAGE", m["params"])


def server_set():
    out = set()
    for rel, ds in pub.items():
        for d in ds:
            dd = d.get("data") or {}
            out.add((rel, d["range"]["start"]["line"] + 1, d["code"], d["message"], tuple(dd.get("chain") or ()), dd.get("resolution")))
    return out


def check_set():
    r = subprocess.run([cg, "check", "--no-cache", "--output-format", "json", "."], cwd=disk, capture_output=True, text=True, env=env)
    j = json.loads(r.stdout)
    out = set()
    for f in j["findings"]:
        msg = f["message"]
        if f.get("context") and f["context"] != "eager":
            msg += " [" + f["context"] + "]"
        out.add((f["path"], f["line"], f["rule"], msg, tuple(f.get("chain") or ()), f.get("resolution")))
    return out


call("initialize", {"processId": None, "rootUri": "file://" + urllib.parse.quote(ws), "capabilities": {}})
send({"method": "initialized", "params": {}})



def chains_files():
    # files of the functions on published chains (module path from dotted name)
    out = set()
    for rel, ds in pub.items():
        for d in ds:
            for fn in (d.get("data") or {}).get("chain") or ():
                parts = fn.split(".")
                for k in range(len(parts), 0, -1):
                    cand = "/".join(parts[1:k]) + ".py"
                    if cand in pyset:
                        out.add((cand,))
                        break
    return out


pyset = set(pyfiles)
mism = 0
version = {}
for k in range(n):
    hot = sorted({x[0] for x in server_set()} | {c[0] for c in chains_files()})
    e = None
    if rnd.random() < 0.5:
        # kill: a line holding a finding becomes `pass`
        cands = sorted(server_set())
        rnd.shuffle(cands)
        for x in cands[:40]:
            rel = x[0]
            with open(os.path.join(ws, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
            lines = text.split("\n")
            i = x[1] - 1
            if i >= len(lines):
                continue
            l = lines[i]
            ind = l[: len(l) - len(l.lstrip())]
            if not ind or l.rstrip().endswith(("(", ",", "\\", ":", "[", "{")) or l.lstrip().startswith(("def ", "class ", "@", "with ", "if ", "for ", "while ", "return", "elif", "else", "try", "except", "finally")):
                continue
            if i + 1 < len(lines) and lines[i + 1].strip() and len(lines[i + 1]) - len(lines[i + 1].lstrip()) > len(ind):
                continue
            e = ("kill", i + 1, lines[:i] + [ind + "pass"] + lines[i + 1:])
            break
    for _ in range(0 if e else 50):
        rel = rnd.choice(hot) if hot and rnd.random() < 0.6 else rnd.choice(pyfiles)
        with open(os.path.join(ws, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        e = make_edit(text.split("\n"), rnd)
        if e:
            break
    kind, line, new = e
    new_text = "\n".join(new)
    try:
        compile(new_text, rel, "exec")
    except SyntaxError:
        print(f"edit {k}: {rel}:{line} {kind} does not compile, skipped")
        continue
    u = uri(rel)
    if rel not in version:
        version[rel] = 1
        send({"method": "textDocument/didOpen", "params": {"textDocument": {"uri": u, "languageId": "python", "version": 1, "text": text}}})
        settle(u, 1)
    version[rel] += 1
    t0 = time.time()
    send({"method": "textDocument/didChange", "params": {"textDocument": {"uri": u, "version": version[rel]}, "contentChanges": [{"text": new_text}]}})
    settle(u, version[rel])
    dt = time.time() - t0 - 1.0
    with open(os.path.join(disk, rel), "w", encoding="utf-8") as f:
        f.write(new_text)
    s, c = server_set(), check_set()
    print(f"edit {k}: {rel}:{line} {kind}: server {len(s)} check {len(c)} ({dt:.2f} s)")
    if s != c:
        mism += 1
        for x in sorted(s - c)[:10]:
            print("   only server:", x)
        for x in sorted(c - s)[:10]:
            print("   only check: ", x)
print(f"mismatches {mism} of {n}")
proc.stdin.close()
