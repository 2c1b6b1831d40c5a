#!/usr/bin/env bash
# How often the results cache serves an inert edit to a file nobody picked: for each tree, on a copy,
# the cache is filled, then N files drawn at random (a fixed seed: the same files for every binary)
# get one edit each, in turn, and each re-run is either served from the stored result or a whole
# analysis ("cache miss"; its reason is printed). Three kinds of edit, each a new copy:
#   append     a comment appended to the file
#   insert     a comment line inserted above one of its top-level defs or classes
#   docstring  the text of its first one-line triple-quoted docstring changed
#
#   bash bench/sampled-edits.sh BIN N TREE...      (BIN: a capguard binary; TREE: a package folder)
#
# Prints "MISS kind file: reason" lines and one "RESULT tree kind served S miss M" line per tree and
# kind. Each edit waits out the cache's racy window (2 s before and after), so N=8 on one tree
# takes about 3 minutes for the three kinds.
set -uo pipefail
bin=$(realpath "$1") n=$2
shift 2
sample() { # kind tree: prints "file[:line]" per edit
  python3 - "$1" "$2" "$n" <<'PY'
import os, random, re, sys
kind, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
cands = []
for d, _, fs in os.walk(root):
    for f in sorted(fs):
        if not f.endswith('.py'):
            continue
        p = os.path.join(d, f)
        try:
            lines = open(p, encoding='utf-8').read().split('\n')
        except (OSError, UnicodeDecodeError):
            continue
        if kind == 'append':
            cands.append(p)
        pat = r'^(def|class) ' if kind == 'insert' else r'^\s*"""[A-Z][^"]*"""\s*$'
        if kind != 'append':
            hits = [i + 1 for i, l in enumerate(lines) if re.match(pat, l)]
            if hits:
                cands.append((p, hits))
cands.sort()
rng = random.Random(7)
for _ in range(n if cands else 0):
    c = rng.choice(cands)
    if kind == 'append':
        print(c)
    elif kind == 'insert':
        print(f"{c[0]}:{rng.choice(c[1])}")
    else:
        print(f"{c[0]}:{c[1][0]}")
PY
}
for src in "$@"; do
  for kind in append insert docstring; do
    work=$(mktemp -d)
    cp -r "$src" "$work/"
    pkg=$(basename "$src")
    (cd "$work" && "$bin" check --exit-zero -q --output-format json --cache-dir "$work/cache" "$pkg" >/dev/null 2>&1)
    served=0 miss=0
    while read -r at; do
      f=$work/${at%%:*} line=${at##*:}
      sleep 2.1
      case $kind in
        append) echo "# appended note" >>"$f" ;;
        insert) sed -i "${line}s/^/# a note on what follows\n/" "$f" ;;
        docstring) sed -i "${line}s/\"\"\"\([A-Z]\)/\"\"\"Note: \1/" "$f" ;;
      esac
      sleep 2.1
      out=$(cd "$work" && CAPGUARD_TIMING=1 "$bin" check --exit-zero -q --output-format json --cache-dir "$work/cache" "$pkg" 2>&1 >/dev/null)
      if grep -q "cache miss" <<<"$out"; then
        miss=$((miss + 1))
        echo "MISS $kind $at: $(grep 'not reused' <<<"$out" | cut -c1-240)"
      else
        served=$((served + 1))
      fi
    done < <(cd "$work" && sample "$kind" "$pkg")
    echo "RESULT $src $kind served $served miss $miss"
    rm -rf "$work"
  done
done
