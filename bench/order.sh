#!/usr/bin/env bash
# bench/order.sh BIN TREE... — how much capguard's output depends on the order the files are built
# in. For each tree it runs `capguard graph --format json` and `capguard check --no-cache
# --output-format json` twice, the files' constraints built in their order and in reverse
# (CAPGUARD_BUILD_ORDER=reverse), and prints one row: call edges, the edges found in one order only,
# the edges whose kind (resolved, annotated, hierarchy, name) differs, the dropped calls whose record
# differs, the functions whose context differs, and the findings that differ (by place, rule and
# severity; then by their text, such as the chain they cite). A solve that did not depend on the order
# would print zeros after the first column. An incremental solve resumes in another order than a
# whole one, so what this measures is also what such a solve could not reproduce.
set -euo pipefail
bin=$(realpath "$1"); shift
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf "%-28s %8s %10s %10s %10s %10s %10s %12s\n" tree edges "one-order" "kind-diff" dropped contexts findings "finding-text"
for tree in "$@"; do
  name=$(basename "$tree")
  for o in fwd rev; do
    if [ "$o" = rev ]; then export CAPGUARD_BUILD_ORDER=reverse; else unset CAPGUARD_BUILD_ORDER; fi
    (cd "$tree" && "$bin" graph --format json . >"$tmp/$o.graph.json" 2>/dev/null || true)
    (cd "$tree" && "$bin" check --no-cache --exit-zero --no-progress --output-format json . >"$tmp/$o.check.json" 2>/dev/null || true)
  done
  unset CAPGUARD_BUILD_ORDER
  python3 - "$tmp" "$name" <<'PY'
import json, sys, collections
tmp, name = sys.argv[1], sys.argv[2]
def graph(o):
    d = json.load(open(f"{tmp}/{o}.graph.json"))
    edges, ctx = {}, {}
    for f in d["functions"]:
        ctx[f["name"]] = f.get("context")
        for e in f.get("edges", []):
            edges[(f["name"], e["to"], e["line"])] = e["kind"]
    dropped = collections.Counter(json.dumps(x, sort_keys=True) for x in d.get("dropped", []))
    return edges, ctx, dropped
def findings(o):
    d = json.load(open(f"{tmp}/{o}.check.json"))
    if isinstance(d, dict):
        d = d.get("findings", d.get("diagnostics", []))
    where = collections.Counter((x.get("path"), x.get("line"), x.get("column"), x.get("code") or x.get("rule"), x.get("severity")) for x in d)
    text = collections.Counter(json.dumps(x, sort_keys=True) for x in d)
    return where, text
ea, ca, da = graph("fwd"); eb, cb, db = graph("rev")
wa, ta = findings("fwd"); wb, tb = findings("rev")
one = len(set(ea) ^ set(eb))
kind = sum(1 for k in set(ea) & set(eb) if ea[k] != eb[k])
drop = sum(((da - db) + (db - da)).values())
ctx = sum(1 for k in set(ca) | set(cb) if ca.get(k) != cb.get(k))
fw = sum(((wa - wb) + (wb - wa)).values())
ft = sum(((ta - tb) + (tb - ta)).values())
print(f"{name:28s} {len(ea):8d} {one:10d} {kind:10d} {drop:10d} {ctx:10d} {fw:10d} {ft:12d}")
PY
done
