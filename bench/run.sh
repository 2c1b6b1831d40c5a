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
# The standard library without site-packages: the same folder, with site-packages excluded by both
# tools (capguard through a config file, parse-only through its -exclude flag).
printf 'exclude = ["site-packages"]\n' >"$out/capguard.toml"
lines() { find "$stdlib" -name '*.py' -not -path '*/__pycache__/*' "$@" -print0 | xargs -0 cat | wc -l; }

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

row() { # name "capguard flags" "parseonly flags" "find filter"
  local name=$1 cflags=$2 pflags=$3 filter=$4
  # shellcheck disable=SC2086
  read -r cs cm < <(best_of "$out/capguard" check --exit-zero --format json $cflags "$stdlib")
  # shellcheck disable=SC2086
  read -r ps pm < <(best_of "$out/parseonly" $pflags "$stdlib")
  # shellcheck disable=SC2086
  printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10d\n" "$name" "$(lines $filter)" "$ps" "$cs" \
    "$(awk "BEGIN{print $cs/$ps}")" "$((cm / 1024))" "$((pm / 1024))"
}

echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%d)"
printf "%-28s %9s %12s %12s %10s %10s %10s\n" "tree" "lines" "parse-only s" "capguard s" "ratio" "peak MiB" "parse MiB"
row "stdlib (no site-packages)" "--config $out/capguard.toml" "-exclude site-packages" "-not -path */site-packages/*"
row "whole tree (with site-pkgs)" "" "" ""

# capguard fix on the testdata readers: every fixable fixture project.
start=$(date +%s.%N)
for d in testdata/readers testdata/sglang_like testdata/graphed; do
  "$out/capguard" fix --unsafe-fixes "$d" >/dev/null 2>&1 || true
done
end=$(date +%s.%N)
printf "fix on testdata readers: %.3f s for 3 projects\n" "$(awk "BEGIN{print $end-$start}")"
