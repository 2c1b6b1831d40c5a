#!/usr/bin/env bash
# Cold time and peak memory of two capguard binaries against a bare tree-sitter parse of the same
# files, in one run, the runs alternating (before, after, parse-only) so that the machine's load
# falls on all three alike.
#
#   BEFORE=/path/to/old/capguard AFTER=/path/to/new/capguard bash bench/compare.sh TREE...
#
# Prints, per tree: lines, parse-only's best wall seconds, each binary's best wall seconds and its
# ratio to parse-only, and each one's peak resident set (the largest of its runs, MiB). RUNS (default
# 3) runs each. The binaries run `check --no-cache` (the analysis, not the results cache).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BEFORE:?BEFORE=old capguard binary}" "${AFTER:?AFTER=new capguard binary}"
runs=${RUNS:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/parseonly" ./bench/parseonly

# one CMD...: prints "seconds maxrss_kib" of one run.
one() {
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$out/t" "$@" >/dev/null 2>"$out/err" || true
  t1=$(date +%s%N)
  echo "$(awk "BEGIN{printf \"%.4f\", ($t1-$t0)/1e9}") $(tail -n 1 "$out/t")"
}

echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%d), best of $runs"
printf "%-30s %8s %9s %10s %7s %10s %7s %8s %8s\n" tree lines "parse s" "before s" ratio "after s" ratio "before MiB" "after MiB"
for tree in "$@"; do
  bs="" as="" ps="" bm=0 am=0
  for _ in $(seq "$runs"); do
    read -r s m < <(one "$BEFORE" check --no-cache --exit-zero --no-progress --output-format json "$tree")
    if [ -z "$bs" ] || awk "BEGIN{exit !($s < $bs)}"; then bs=$s; fi
    [ "$m" -gt "$bm" ] && bm=$m
    read -r s m < <(one "$AFTER" check --no-cache --exit-zero --no-progress --output-format json "$tree")
    if [ -z "$as" ] || awk "BEGIN{exit !($s < $as)}"; then as=$s; fi
    [ "$m" -gt "$am" ] && am=$m
    read -r s m < <(one "$out/parseonly" "$tree")
    if [ -z "$ps" ] || awk "BEGIN{exit !($s < $ps)}"; then ps=$s; fi
  done
  lines=$(find "$tree" -name '*.py' -not -path '*/.*' -print0 | xargs -0 cat | wc -l)
  printf "%-30s %8d %9.2f %10.2f %7.2f %10.2f %7.2f %8d %8d\n" "$(basename "$(dirname "$tree")")/$(basename "$tree")" "$lines" "$ps" \
    "$bs" "$(awk "BEGIN{print $bs/$ps}")" "$as" "$(awk "BEGIN{print $as/$ps}")" "$((bm / 1024))" "$((am / 1024))"
done
