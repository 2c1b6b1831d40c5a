#!/usr/bin/env bash
# Each fuzz target for a while: a few seconds in CI (the default), longer by hand:
#
#   FUZZTIME=10m FUZZPARALLEL=1 bash scripts/fuzz-ci.sh 2>&1 | tee bench/fuzz-10m.txt
#
# The default budget is a count of executions per target (about 5 s each here), not a
# duration: with a duration, Go 1.26's fuzz coordinator can report `context deadline
# exceeded` at the boundary with no failing input (golang/go#75804, fixed in Go 1.27),
# which turned CI red at random. A count has no deadline to race.
#
# Go prints the executions count of each target on its last "fuzz:" line. A crash
# lands in the package's testdata/fuzz/<target>/ folder, where `go test` then
# replays it as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
par=()
[ -n "${FUZZPARALLEL:-}" ] && par=(-parallel "$FUZZPARALLEL")
while read -r pkg target count; do
  t=${FUZZTIME:-$count}
  echo "-- $target ($pkg, $t) $(date -u +%H:%M:%S)"
  go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$t" "${par[@]}"
done <<'TARGETS'
./guard FuzzCheck 2000x
./guard FuzzConfig 3000x
./guard FuzzDeepExpression 200x
./guard/syntax FuzzDecode 100000x
./patcher FuzzPatch 600x
./patcher FuzzApply 30000x
./patcher FuzzEnsureHelper 5000x
./patcher FuzzUnifiedDiff 20000x
./runtime/sim FuzzAllocator 25000x
TARGETS
