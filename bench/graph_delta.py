#!/usr/bin/env python3
"""How much of the call graph and of the contexts a code edit changes.

    python3 bench/graph_delta.py CAPGUARD TREE N SEED

Copies TREE into /tmp/graphdelta-SEED and makes N random code edits there, one after another, of
server_diff.py's kinds (a statement binding a parameter added, a call statement deleted or doubled).
Around each it runs `capguard graph --format json` and counts the call edges (caller, callee, kind)
and the functions' contexts that differ. Prints each edit and, at the end, how many edits left the
call graph and the contexts as they were: what an early cut-off of the contexts stage on an
unchanged call graph could save.
"""
import json, os, random, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from random_edits import make_edit  # noqa: E402

cg, tree, n, seed = sys.argv[1], os.path.abspath(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)
work = f"/tmp/graphdelta-{seed}/" + os.path.basename(tree)
shutil.rmtree(os.path.dirname(work), ignore_errors=True)
shutil.copytree(tree, work, ignore=shutil.ignore_patterns(".git", ".capguard_cache"), symlinks=True)
base = os.path.dirname(work)
def graph():
    r = subprocess.run([cg, "graph", "--format", "json", os.path.basename(work)], cwd=base, capture_output=True, text=True)
    j = json.loads(r.stdout)
    edges, ctx = set(), {}
    for f in j["functions"]:
        ctx[f["name"]] = f.get("context")
        for e in f.get("edges") or []:
            edges.add((f["name"], e.get("to"), e.get("kind")))
    return edges, ctx
pyfiles = sorted(os.path.relpath(os.path.join(d, f), work) for d, _, fs in os.walk(work) for f in fs if f.endswith(".py"))
e0, c0 = graph()
same_edges = same_ctx = done = 0
for k in range(n):
    for _ in range(50):
        rel = rnd.choice(pyfiles)
        text = open(os.path.join(work, rel), encoding="utf-8", errors="replace").read()
        e = make_edit(text.split("\n"), rnd)
        if e: break
    kind, line, new = e
    new_text = "\n".join(new)
    try: compile(new_text, rel, "exec")
    except SyntaxError: continue
    open(os.path.join(work, rel), "w", encoding="utf-8").write(new_text)
    e1, c1 = graph()
    de = len(e0 ^ e1); dc = sum(1 for f in set(c0) | set(c1) if c0.get(f) != c1.get(f))
    done += 1; same_edges += de == 0; same_ctx += dc == 0
    print(f"edit {k}: {rel}:{line} {kind}: edges changed {de} of {len(e1)}, contexts changed {dc}")
    e0, c0 = e1, c1
print(f"{os.path.basename(tree)}: {done} edits; call graph unchanged {same_edges}, contexts unchanged {same_ctx}")
