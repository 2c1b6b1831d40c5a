#!/usr/bin/env bash
# A few seconds of each fuzz target (CI). Longer runs: FUZZTIME=10m bash scripts/fuzz-ci.sh
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-5s}
while read -r pkg target; do
  echo "-- $target ($pkg, $t)"
  go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$t"
done <<'TARGETS'
./guard FuzzCheck
./patcher FuzzPatch
./patcher FuzzApply
./patcher FuzzEnsureHelper
./patcher FuzzUnifiedDiff
./runtime/sim FuzzAllocator
TARGETS
