#!/usr/bin/env python3
"""graphdiff.py A.graph.json A.check.json B.graph.json B.check.json

Compares two runs of capguard on one tree (`capguard graph --format json` and `capguard check
--no-cache --output-format json` each) and prints one line of counts: the call edges of A, the edges
found in one run only, the edges whose kind (resolved, annotated, hierarchy, name) differs, the
dropped calls whose record differs, the functions whose context differs, and the findings that differ
(by place, rule and severity; then by their text, such as the chain they cite). bench/order.sh and
bench/resume.sh print it."""
import collections
import json
import sys


def graph(path):
    d = json.load(open(path))
    edges, ctx = {}, {}
    for f in d["functions"]:
        ctx[f["name"]] = f.get("context")
        for e in f.get("edges", []):
            edges[(f["name"], e["to"], e["line"])] = e["kind"]
    dropped = collections.Counter(json.dumps(x, sort_keys=True) for x in d.get("dropped", []))
    return edges, ctx, dropped


def findings(path):
    d = json.load(open(path))
    if isinstance(d, dict):
        d = d.get("findings", d.get("diagnostics", []))
    where = collections.Counter((x.get("path"), x.get("line"), x.get("column"), x.get("code") or x.get("rule"), x.get("severity")) for x in d)
    text = collections.Counter(json.dumps(x, sort_keys=True) for x in d)
    return where, text


def main(ag, ac, bg, bc):
    ea, ca, da = graph(ag)
    eb, cb, db = graph(bg)
    wa, ta = findings(ac)
    wb, tb = findings(bc)
    one = len(set(ea) ^ set(eb))
    kind = sum(1 for k in set(ea) & set(eb) if ea[k] != eb[k])
    drop = sum(((da - db) + (db - da)).values())
    ctx = sum(1 for k in set(ca) | set(cb) if ca.get(k) != cb.get(k))
    fw = sum(((wa - wb) + (wb - wa)).values())
    ft = sum(((ta - tb) + (tb - ta)).values())
    print(f"{len(ea):8d} {one:10d} {kind:10d} {drop:10d} {ctx:10d} {fw:10d} {ft:12d}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
