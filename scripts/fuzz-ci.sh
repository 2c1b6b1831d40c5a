#!/usr/bin/env bash
# Each fuzz target for a while: a few seconds in CI (the default), longer by hand:
#
#   FUZZTIME=10m FUZZPARALLEL=1 bash scripts/fuzz-ci.sh 2>&1 | tee bench/fuzz-10m.txt
#
# Go prints the executions count of each target on its last "fuzz:" line. A crash
# lands in the package's testdata/fuzz/<target>/ folder, where `go test` then
# replays it as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-5s}
par=()
[ -n "${FUZZPARALLEL:-}" ] && par=(-parallel "$FUZZPARALLEL")
while read -r pkg target; do
  echo "-- $target ($pkg, $t) $(date -u +%H:%M:%S)"
  go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$t" "${par[@]}"
done <<'TARGETS'
./guard FuzzCheck
./guard FuzzConfig
./patcher FuzzPatch
./patcher FuzzApply
./patcher FuzzEnsureHelper
./patcher FuzzUnifiedDiff
./runtime/sim FuzzAllocator
TARGETS
