#!/bin/bash
# stdin_edit_ab.sh TREE FILE LINE ROUNDS BIN...: the stdin route after a code edit, binaries interleaved.
# Each round, for each binary: a fresh cache filled by `check .` in TREE, then 3 runs of
# `check --stdin-filename FILE -` with a buffer that adds a statement after line LINE of FILE (another
# one each run: the first analysis of each buffer). Prints the 3 wall times a binary and round.
TREE=$1 F=$2 L=$3 R=$4; shift 4
cd "$TREE" || exit 2
buf=$(mktemp --suffix=.py)
for r in $(seq "$R"); do for b in "$@"; do
  c=$(mktemp -d)
  "$b" check --exit-zero -q --cache-dir "$c" . >/dev/null 2>&1
  ts=()
  for i in 1 2 3; do
    sed "${L}s/\$/\n    _stdin_ab_$r$i = $i/" "$F" >"$buf"
    t0=$(date +%s%N)
    "$b" check --exit-zero --format json --cache-dir "$c" --stdin-filename "$F" - <"$buf" >/dev/null 2>&1
    t1=$(date +%s%N)
    ts+=("$(awk "BEGIN{printf \"%.3f\", ($t1-$t0)/1e9}")")
  done
  echo "$(basename "$TREE") $(basename "$b") ${ts[*]}"
  rm -rf "$c"
done; done
rm -f "$buf"
