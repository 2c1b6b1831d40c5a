#!/usr/bin/env bash
# The fix stress run of issue 18, as a user would make it: copy each
# repository to a scratch folder (never into git), run
#   capguard fix --unsafe-fixes --write --show-fixes <package>
# in the copy, then py_compile every file it changed and keep the diff.
#
#   bench/fixreview/stress.sh CAPGUARD CORPUS_DIR OUT [SET] [WHERE]
#     CAPGUARD    the binary (go build -o /tmp/capguard ./cli/capguard)
#     CORPUS_DIR  the folder holding the repositories (/work/corpus/train)
#     OUT         scratch folder for the copies and reports (/tmp/fixstress)
#     SET         the targets.txt set to run (train | val), default train
#     WHERE       pkg: the package targets.txt names for the repository (default);
#                 root: the whole repository (`capguard fix ... .` at its root)
#
# CONFIG=FILE passes --config FILE (bench/fixreview/strict.toml: the
# documented opt-ins a team that wants no temporaries at all sets).
#
# Per repository it writes OUT/REPO.fixes (the --show-fixes report: each
# fix's path, line, rule and applicability), OUT/REPO.diff (the whole
# change, diff -ru of the copy before and after), OUT/REPO.compile (the
# py_compile result of each changed file); OUT/summary.txt sums them up.
set -uo pipefail
BIN=$(realpath "$1"); CORPUS=$(realpath "$2"); OUT=$3; SET=${4:-train}; WHERE=${5:-pkg}
TARGETS=${TARGETS:-/work/measure/targets.txt}
mkdir -p "$OUT"; OUT=$(realpath "$OUT")
: > "$OUT/summary.txt"
grep "^$SET " "$TARGETS" | while read -r _ repo pkg; do
  [ -d "$CORPUS/$repo" ] || continue
  [ "$WHERE" = root ] && pkg=.
  rm -rf "$OUT/orig/$repo" "$OUT/tree/$repo"
  mkdir -p "$OUT/orig" "$OUT/tree"
  # Python sources and project configuration only (the fixer reads nothing else).
  (cd "$CORPUS/$repo" && find . -path ./.git -prune -o \( -name '*.py' -o -name '*.pyi' -o -name 'pyproject.toml' -o -name 'capguard.toml' -o -name '.capguard.toml' \) -type f -print0 |
    tar --null -T - -cf - | (mkdir -p "$OUT/orig/$repo" && tar -xf - -C "$OUT/orig/$repo"))
  cp -a "$OUT/orig/$repo" "$OUT/tree/$repo"
  (cd "$OUT/tree/$repo" && timeout 1200 "$BIN" fix --unsafe-fixes --write --show-fixes --no-progress ${CONFIG:+--config "$CONFIG"} "$pkg") > "$OUT/$repo.fixes" 2>&1
  rc=$?
  (cd "$OUT" && diff -ru "orig/$repo" "tree/$repo") > "$OUT/$repo.diff"
  changed=$(cd "$OUT" && diff -rq "orig/$repo" "tree/$repo" | sed -n -e 's/^Files .* and \(.*\) differ$/\1/p' -e 's/^Only in \(tree\/[^:]*\): \(.*\)$/\1\/\2/p')
  : > "$OUT/$repo.compile"
  nbad=0; nchanged=0
  for f in $changed; do
    nchanged=$((nchanged+1))
    if PYTHONPYCACHEPREFIX="$OUT/pycache" python3 -m py_compile "$OUT/$f" 2>>"$OUT/$repo.compile"; then echo "ok $f" >> "$OUT/$repo.compile"
    else echo "FAIL $f" >> "$OUT/$repo.compile"; nbad=$((nbad+1)); fi
  done
  safe=$(grep -c ' (safe):' "$OUT/$repo.fixes"); unsafe=$(grep -c ' (unsafe):' "$OUT/$repo.fixes")
  echo "$repo exit=$rc changed_files=$nchanged py_compile_failures=$nbad safe_fixes=$safe unsafe_fixes=$unsafe $(tail -1 "$OUT/$repo.fixes")" | tee -a "$OUT/summary.txt"
done
