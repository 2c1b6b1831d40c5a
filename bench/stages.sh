#!/bin/bash
# stages.sh A B TREE...: interleaved cold runs (2 each) of two capguard binaries on each tree:
# wall and peak RSS (/usr/bin/time) and the points-to, contexts and rules stages
# (CAPGUARD_TIMING=1). Run it with nothing else running; compare only within one run.
# (bench/compare.sh sets the same two binaries against a bare parse, best of RUNS, without the stages.)
set -u
if [ $# -lt 3 ]; then
  echo "usage: bench/stages.sh BIN_A BIN_B TREE..." >&2
  exit 2
fi
A=$1 B=$2
shift 2
for t in "$@"; do
  for i in 1 2; do
    for b in "$A" "$B"; do
      out=$( { CAPGUARD_TIMING=1 /usr/bin/time -f "TIME %e %M" "$b" check --no-cache --exit-zero --no-progress --output-format json "$t" >/dev/null; } 2>&1 )
      w=$(echo "$out" | awk '/^TIME/{print $2}'); m=$(echo "$out" | awk '/^TIME/{printf "%d", $3/1024}')
      p=$(echo "$out" | awk '/points-to and call graph/{print $(NF-1)}')
      c=$(echo "$out" | awk '/capguard: contexts/{print $(NF-1)}'); r=$(echo "$out" | awk '/capguard: rules/{print $(NF-1)}')
      printf "%-45s %-16s run %d  wall %6s s  peak %5s MiB  points-to %6s  contexts %6s  rules %6s\n" "$t" "$(basename "$b")" "$i" "$w" "$m" "$p" "$c" "$r"
    done
  done
done
