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
here=$(cd "$(dirname "$0")" && pwd)
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
  printf "%-28s %s\n" "$name" "$(python3 "$here/graphdiff.py" "$tmp"/fwd.graph.json "$tmp"/fwd.check.json "$tmp"/rev.graph.json "$tmp"/rev.check.json)"
done
