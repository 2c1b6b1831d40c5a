#!/bin/bash
# bench/scale.sh BIN TREE...: a cold run of `BIN check --no-cache` at each TREE's root, as a new user
# runs it, and one line a tree: Python lines (wc -l), wall seconds, peak RSS, findings, errors, and
# whether the points-to analysis passed its fact budget (its warning). Needs GNU time.
set -u
bin=$(readlink -f "$1"); shift
for t in "$@"; do
  (
    cd "$t" || exit 1
    out=$(mktemp) err=$(mktemp) tm=$(mktemp)
    /usr/bin/time -f "%e %M" -o "$tm" "$bin" check --no-cache --exit-zero --output-format json . > "$out" 2> "$err"
    lines=$(find . -name '*.py' -exec cat {} + 2>/dev/null | wc -l)
    python3 - "$t" "$lines" "$out" "$err" "$tm" <<'PY'
import json, os, sys
t, lines, out, err, tm = sys.argv[1:]
wall, rss = open(tm).read().split()[-2:]
fs = json.load(open(out))["findings"]
errors = sum(1 for f in fs if f["severity"] == "error")
budget = "budget passed" if "passed its budget of facts" in open(err).read() else "-"
print(f"{os.path.basename(t.rstrip('/')):28s} {int(lines):>9,} lines {float(wall):7.2f} s {int(rss) / 1024:7.0f} MiB "
      f"{len(fs):5d} findings {errors:3d} errors  {budget}")
PY
    rm -f "$out" "$err" "$tm"
  )
done
