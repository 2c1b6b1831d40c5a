#!/bin/bash
# file_ab.sh OLD NEW TREE F1 F2 [HOSTFILE HOSTLINE]: the runs over files a developer and an editor make,
# old binary then new, each on a fresh copy of the folder TREE in a project root (a .git marks it; run
# from it, paths relative to it)
# with a fresh cache filled by `check .`:
#   check F1, check F2, check F1 spelled absolute (file runs after check .), check --stdin-filename F1 -
#   (a check on save),
#   fix F1 and fix . (nothing changed since the check), and, where HOSTFILE:HOSTLINE names a def line,
#   a statement added to that function, then check F1 and check F2 (the first run after the edit
#   analyses; the second is served by the new binary from the same project entry).
# Prints wall seconds and the cache's verdict (CAPGUARD_TIMING) of each run, and whether each output
# equals --no-cache's.
OLD=$1 NEW=$2 TREE=$3 F1=$4 F2=$5 HF=${6:-} HL=${7:-}
for bin in $OLD $NEW; do
  w=$(mktemp -d) c=$(mktemp -d)
  mkdir -p "$w/t/.git" && cp -r "$TREE" "$w/t/"
  cd "$w/t"
  one() { # what, "stdin" (F1 on standard input) or "-", then the command's arguments
    local what=$1 in=/dev/null s e st same
    [ "$2" = stdin ] && in=$F1
    shift 2
    s=$(date +%s%N)
    CAPGUARD_CACHE_DIR=$c CAPGUARD_TIMING=1 $bin "$@" < "$in" > "$w/out" 2> "$w/err"
    e=$(date +%s%N)
    st=$(grep -o 'capguard: cache [a-z ]*' "$w/err" | head -1 | sed 's/capguard: cache //')
    $bin "$1" --no-cache "${@:2}" < "$in" > "$w/want" 2>/dev/null
    cmp -s "$w/out" "$w/want" && same=same || same=DIFFERS
    printf "%-12s %-34s %6.2f s  %-10s %s\n" "$(basename $bin)" "$what" "$(awk "BEGIN{print ($e-$s)/1e9}")" "${st:-none}" "$same"
  }
  CAPGUARD_CACHE_DIR=$c $bin check . > /dev/null 2>&1
  sleep 2.1 # past the cache's racy window
  one "check F1 after check ." - check --exit-zero --output-format json "$F1"
  one "check F2 after check ." - check --exit-zero --output-format json "$F2"
  one "check /abs/F1 after check ." - check --exit-zero --output-format json "$PWD/$F1"
  one "stdin F1 (on save)" stdin check --exit-zero --output-format json --stdin-filename "$F1" -
  one "fix F1 after check ." - fix "$F1"
  one "fix . after check ." - fix .
  if [ -n "$HF" ]; then
    sed -i "${HL}s/\$/\n    _bench_edit_x = 1/" "$HF"
    sleep 2.1
    one "check F1 after a code edit" - check --exit-zero --output-format json "$F1"
    one "then check F2" - check --exit-zero --output-format json "$F2"
  fi
  cd / && rm -rf "$w" "$c"
done
