#!/usr/bin/env bash
# After stress.sh: for every repository whose tree it changed, check that
#  - `capguard fix --unsafe-fixes` in diff mode (no --write) over a fresh
#    copy of the original gives a diff that `patch -p1` applies, and the
#    patched copy is byte for byte the tree `--write` made (diff -r), and
#  - a second `capguard fix --unsafe-fixes` over the fixed tree applies
#    nothing (idempotent).
#
#   bench/fixreview/recheck.sh CAPGUARD OUT [SET] [WHERE]   (the same OUT, SET, WHERE as stress.sh; CONFIG too)
set -uo pipefail
BIN=$(realpath "$1"); OUT=$(realpath "$2"); SET=${3:-train}; WHERE=${4:-pkg}
TARGETS=${TARGETS:-/work/measure/targets.txt}
: > "$OUT/recheck.txt"
grep "^$SET " "$TARGETS" | while read -r _ repo pkg; do
  [ -s "$OUT/$repo.diff" ] || continue
  [ "$WHERE" = root ] && pkg=.
  rm -rf "$OUT/replay/$repo"; mkdir -p "$OUT/replay"
  cp -a "$OUT/orig/$repo" "$OUT/replay/$repo"
  (cd "$OUT/replay/$repo" && timeout 1200 "$BIN" fix --unsafe-fixes --no-progress ${CONFIG:+--config "$CONFIG"} "$pkg" > "$OUT/$repo.fixdiff" 2> /dev/null
   patch -s -p1 < "$OUT/$repo.fixdiff") > "$OUT/$repo.patch.log" 2>&1
  prc=$?
  if diff -r "$OUT/replay/$repo" "$OUT/tree/$repo" > /dev/null 2>&1; then same=yes; else same=no; fi
  again=$(cd "$OUT/tree/$repo" && timeout 1200 "$BIN" fix --unsafe-fixes --no-progress ${CONFIG:+--config "$CONFIG"} "$pkg" 2>&1 | tail -1)
  echo "$repo patch_exit=$prc patched_equals_written=$same second_fix: $again" | tee -a "$OUT/recheck.txt"
done
