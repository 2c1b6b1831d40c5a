#!/usr/bin/env bash
# bench/resume.sh BIN N TREE... — what a solve resumed after adding one file would give, against the
# whole solve. For each tree, N files spread over the ones capguard analyses (every (N+1)-th of them
# in path order) are taken in turn: every other file is built and solved to the end first (the
# propagation, the seeds, the name fallback), then that file's constraints are added and each
# stratum runs on from there (CAPGUARD_RESUME_LAST, flow.Options.ResumeLast). One row a file: the
# whole solve's time (the points-to stage of the plain run), the resumed part's, and what differs
# from the plain run (bench/graphdiff.py: call edges, edges in one run only, edges whose kind
# differs, dropped calls, contexts, findings, their texts). An incremental solve that only added
# constraints would give this; one that is right must print zeros after the edges column.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: bench/resume.sh BIN N TREE..." >&2
  exit 2
fi
bin=$(realpath "$1"); n=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() { # NAME [ENV=VALUE...]: graph and check of the current tree into $tmp/NAME.*
  local name=$1; shift
  env "$@" "$bin" graph --format json . >"$tmp/$name.graph.json" 2>/dev/null || true
  env CAPGUARD_TIMING=1 "$@" "$bin" check --no-cache --exit-zero --no-progress --output-format json . \
    >"$tmp/$name.check.json" 2>"$tmp/$name.err" || true
}
printf "%-22s %-44s %8s %8s %8s %10s %10s %10s %10s %10s %12s\n" tree file "solve s" "resumed" edges "one-run" "kind-diff" dropped contexts findings "finding-text"
for tree in "$@"; do
  name=$(basename "$tree")
  cd "$tree"
  run whole
  pts=$(awk '/points-to and call graph/{print $(NF-1)}' "$tmp/whole.err")
  mapfile -t files < <(python3 -c 'import json,sys; print("\n".join(sorted({f["path"] for f in json.load(open(sys.argv[1]))["functions"]})))' "$tmp/whole.graph.json")
  total=${#files[@]}
  for k in $(seq 1 "$n"); do
    f=${files[$((k * total / (n + 1)))]}
    run resumed CAPGUARD_RESUME_LAST="$f"
    rs=$(awk '/resumed solve after adding/{print $(NF-1)}' "$tmp/resumed.err")
    printf "%-22s %-44s %8s %8s %s\n" "$name" "$f" "$pts" "${rs:--}" \
      "$(python3 "$here/graphdiff.py" "$tmp"/whole.graph.json "$tmp"/whole.check.json "$tmp"/resumed.graph.json "$tmp"/resumed.check.json)"
  done
  cd - >/dev/null
done
