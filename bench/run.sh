#!/usr/bin/env bash
# capguard's speed and memory, against a bare tree-sitter parse of the same files, in one run.
#
#   bash bench/run.sh            # standard library, whole installed tree, fix on the testdata readers
#
# Prints wall seconds, peak RSS and ratios (capguard / parse-only). Each timing is the best of 3 runs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/capguard" ./cli/capguard
go build -o "$out/parseonly" ./bench/parseonly

stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# The standard library without site-packages: its top-level entries but that one.
mapfile -t std_args < <(find "$stdlib" -mindepth 1 -maxdepth 1 ! -name site-packages ! -name __pycache__ | sort)
whole_args=("$stdlib")
lines() { find "$@" -name '*.py' -not -path '*/__pycache__/*' -print0 | xargs -0 cat | wc -l; }

# best_of CMD...: prints "seconds maxrss_kib" of the fastest of 3 runs.
best_of() {
  local best="" mem=0
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$out/t" "$@" >/dev/null 2>"$out/err" || true
    read -r s m < <(tail -n 1 "$out/t")
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
    [ "$m" -gt "$mem" ] && mem=$m
  done
  echo "$best $mem"
}

row() { # name args...
  local name=$1; shift
  read -r cs cm < <(best_of "$out/capguard" check --exit-zero --format json "$@")
  read -r ps pm < <(best_of "$out/parseonly" "$@")
  printf "%-28s %9s %12.2f %12.2f %10.3f %10d\n" "$name" "$(lines "$@")" "$ps" "$cs" \
    "$(awk "BEGIN{print $cs/$ps}")" "$((cm / 1024))"
}

echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%d)"
printf "%-28s %9s %12s %12s %10s %10s\n" "tree" "lines" "parse-only s" "capguard s" "ratio" "peak MiB"
row "stdlib (no site-packages)" "${std_args[@]}"
row "whole tree (with site-pkgs)" "${whole_args[@]}"

# capguard fix on the testdata readers: every fixable fixture project.
start=$(date +%s.%N)
for d in testdata/readers testdata/sglang_like testdata/graphed; do
  "$out/capguard" fix --unsafe-fixes "$d" >/dev/null 2>&1 || true
done
end=$(date +%s.%N)
printf "fix on testdata readers: %.3f s for 3 projects\n" "$(awk "BEGIN{print $end-$start}")"
