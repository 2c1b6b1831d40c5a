#!/usr/bin/env bash
# capguard's speed and memory, against a bare tree-sitter parse of the same files, in one run.
#
#   bash bench/run.sh            # standard library, whole installed tree, fix on the testdata readers,
#                                # and a re-run from the results cache
#   FLAGGEMS=/path/to/FlagGems LMDEPLOY=/path/to/lmdeploy bash bench/run.sh
#                                # also FlagGems' src/ (a Triton kernel library) and lmdeploy's
#                                # lmdeploy/pytorch (an engine), where the analysis cannot skip files
#   EDIT_ONLY=1 FLAGGEMS=... LMDEPLOY=... bash bench/run.sh
#                                # the one-file edit rows only (edit_rows)
#   EDIT_ONLY=1 EDITTREE=/path/to/pkg bash bench/run.sh
#                                # the edit rows of any other package (a validation repository's)
#
# Prints wall seconds, peak RSS and ratios (capguard / parse-only; for the fix row, fix / check, with
# check's time in the parse-only column; for the cache row, a re-run on the unchanged tree / the first
# run, which fills the cache, in the parse-only column). Each timing is the best of 3 runs. The
# analysis rows run with --no-cache.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/capguard" ./cli/capguard
go build -o "$out/parseonly" ./bench/parseonly
go build -o "$out/serveredit" ./bench/serveredit

stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# The standard library without site-packages: the same folder, with site-packages excluded by both
# tools (capguard through a config file, parse-only through its -exclude flag).
printf 'exclude = ["site-packages"]\n' >"$out/capguard.toml"
lines() { find "$stdlib" -name '*.py' -not -path '*/__pycache__/*' "$@" -print0 | xargs -0 cat | wc -l; }

# best_of CMD...: prints "seconds maxrss_kib" of the fastest of 3 runs (wall time from the
# nanosecond clock, peak memory from /usr/bin/time).
best_of() {
  local best="" mem=0 t0 t1 s m
  for _ in 1 2 3; do
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$out/t" "$@" >/dev/null 2>"$out/err" || true
    t1=$(date +%s%N)
    s=$(awk "BEGIN{printf \"%.4f\", ($t1-$t0)/1e9}")
    m=$(tail -n 1 "$out/t")
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
    [ "$m" -gt "$mem" ] && mem=$m
  done
  echo "$best $mem"
}

row() { # name "capguard flags" "parseonly flags" "find filter" [tree]
  local name=$1 cflags=$2 pflags=$3 filter=$4 tree=${5:-$stdlib}
  # shellcheck disable=SC2086
  read -r cs cm < <(best_of "$out/capguard" check --no-cache --exit-zero --no-progress --format json $cflags "$tree")
  # shellcheck disable=SC2086
  read -r ps pm < <(best_of "$out/parseonly" $pflags "$tree")
  # shellcheck disable=SC2086
  printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10d\n" "$name" "$(tlines "$tree" $filter)" "$ps" "$cs" \
    "$(awk "BEGIN{print $cs/$ps}")" "$((cm / 1024))" "$((pm / 1024))"
}
tlines() { local t=$1; shift; find "$t" -name '*.py' -not -path '*/__pycache__/*' "$@" -print0 | xargs -0 cat | wc -l; }

echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%d)"
printf "%-28s %9s %12s %12s %10s %10s %10s\n" "tree" "lines" "parse-only s" "capguard s" "ratio" "peak MiB" "parse MiB"
if [ -z "${EDIT_ONLY:-}" ]; then # EDIT_ONLY=1: the edit rows only
row "stdlib (no site-packages)" "--config $out/capguard.toml" "-exclude site-packages" "-not -path */site-packages/*"
row "whole tree (with site-pkgs)" "" "" ""
if [ -n "${FLAGGEMS:-}" ]; then row "FlagGems src/ (library)" "" "" "" "$FLAGGEMS/src"; fi
if [ -n "${LMDEPLOY:-}" ]; then row "lmdeploy/pytorch (engine)" "" "" "" "$LMDEPLOY/lmdeploy/pytorch"; fi

# capguard fix on the testdata readers (every fixture project with fixes), against capguard check
# on the same projects: fix analyses at least twice (fix, then re-check) and writes a diff.
projects=(testdata/readers testdata/sglang_like testdata/graphed)
read -r fs fm < <(best_of "$out/capguard" fix --unsafe-fixes "${projects[@]}")
read -r ks km < <(best_of "$out/capguard" check --no-cache --exit-zero "${projects[@]}")
printf "%-28s %9s %12.3f %12.3f %10.3f %10d %10s\n" "fix testdata (vs check)" \
  "$(find "${projects[@]}" -name '*.py' -print0 | xargs -0 cat | wc -l)" "$ks" "$fs" "$(awk "BEGIN{print $fs/$ks}")" "$((fm / 1024))" "-"

# The results cache on the whole tree: the first run (a new cache folder each time: it analyses,
# hashes every file and stores the result) against a re-run on the unchanged tree (it lists the
# walked folders' and the files' stats, and reads the stored result).
cold_best=""
cold_mem=0
for _ in 1 2 3; do
  rm -rf "$out/cache"
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$out/t" "$out/capguard" check --exit-zero --format json --cache-dir "$out/cache" "$stdlib" >/dev/null 2>"$out/err" || true
  t1=$(date +%s%N)
  s=$(awk "BEGIN{printf \"%.4f\", ($t1-$t0)/1e9}")
  m=$(tail -n 1 "$out/t")
  if [ -z "$cold_best" ] || awk "BEGIN{exit !($s < $cold_best)}"; then cold_best=$s; fi
  [ "$m" -gt "$cold_mem" ] && cold_mem=$m
done
sleep 2 # past the cache's racy window: files and folders changed within 2 s of a run are read again
"$out/capguard" check --exit-zero --format json --cache-dir "$out/cache" "$stdlib" >/dev/null 2>&1 || true
read -r ws wm < <(best_of "$out/capguard" check --exit-zero --format json --cache-dir "$out/cache" "$stdlib")
printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10s\n" "cache re-run (whole tree)" "$(lines)" "$cold_best" "$ws" \
  "$(awk "BEGIN{print $ws/$cold_best}")" "$((wm / 1024))" "-"
fi

# One-file edits on a copy of each corpus tree, through the results cache: the run that fills an
# empty cache (in the parse-only column) against a re-run after an edit to one comment of one file
# (an inert comment: the cache serves the stored result with its offsets moved), after a comment
# line and a blank line inserted above it and a comment appended to the file (served too: the
# findings move with their lines), after a statement added inside a Triton kernel body (device code:
# served while the kernel stores through the same parameters), after a module-level literal bound
# to a name no file holds is appended and then changed (served: guard.InertUnit) and after a statement
# is inserted in a host function's body (analysed again: host code; and the same edit as an unsaved
# buffer through the server's analysis, bench/serveredit), and over 8 files spread over
# the tree, a comment appended to each (how many were served; the median and slowest run), then the
# same 8 files checked one by one (check FILE: served from the project's entry). The peak memory row is the cold run's peak over the bytes of source
# it read (about 80-100 for a capguard run; parse-only holds one file's tree at a time).
edit_rows() { # name tree
  local name=$1 src=$2 copy="$out/edit-tree" tree f line cold cm s m i
  rm -rf "$copy" "$out/ecache"
  mkdir -p "$copy"
  cp -r "$src" "$copy/"
  tree="$copy/$(basename "$src")"
  # The edited file: the first, in sorted order, with an indented full-line comment of plain words
  # (no suppression, claim, type or prefilter token), past its first two lines.
  read -r f line < <(grep -rnE --include='*.py' '^[[:space:]]+# [a-z][a-z ]*$' "$tree" |
    grep -viE 'noqa|capguard|type:|coding|pragma|afe|compatible|friendly|cuda|triton|torch|graph|capture|replay|eager|autotune|npu|hpu|init_forward' |
    awk -F: '$2 > 2 {print $1, $2}' | sort | head -n 1)
  timed() { # prints "seconds maxrss_kib" of one run
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$out/t" "$out/capguard" check --exit-zero --format json --cache-dir "$out/ecache" "$tree" >/dev/null 2>"$out/err" || true
    t1=$(date +%s%N)
    echo "$(awk "BEGIN{printf \"%.4f\", ($t1-$t0)/1e9}") $(tail -n 1 "$out/t")"
  }
  # edit_row LABEL: a re-run past the cache's racy window after an edit, as one row against the cold run
  edit_row() {
    local s m
    sleep 2.1
    read -r s m < <(timed)
    printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10s\n" "$name $1" "$(tlines "$tree")" "$cold" "$s" \
      "$(awk "BEGIN{print $s/$cold}")" "$((m / 1024))" "-"
  }
  # stdin_row LABEL FILE BUFFER: one run of check with BUFFER on standard input as FILE, against the cold run
  stdin_row() {
    local t0 t1 s
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$out/t" "$out/capguard" check --exit-zero --format json --cache-dir "$out/ecache" \
      --stdin-filename "$2" - <"$3" >/dev/null 2>"$out/err" || true
    t1=$(date +%s%N)
    s=$(awk "BEGIN{printf \"%.4f\", ($t1-$t0)/1e9}")
    printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10s\n" "$name $1" "$(tlines "$tree")" "$cold" "$s" \
      "$(awk "BEGIN{print $s/$cold}")" "$(($(tail -n 1 "$out/t") / 1024))" "-"
  }
  read -r cold cm < <(timed)
  local bytes
  bytes=$(find "$tree" -name '*.py' -print0 | xargs -0 cat | wc -c)
  printf "%-28s %9s %12s %12s %10.1f %10d %10s\n" "$name peak/source MiB" "$(tlines "$tree")" \
    "$((bytes / 1048576))" "$((cm / 1024))" "$(awk "BEGIN{print $cm*1024/$bytes}")" "$((cm / 1024))" "-"
  sleep 2.1 # past the cache's racy window
  read -r s m < <(best_of "$out/capguard" check --exit-zero --format json --cache-dir "$out/ecache" "$tree")
  printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10s\n" "$name unchanged" "$(tlines "$tree")" "$cold" "$s" \
    "$(awk "BEGIN{print $s/$cold}")" "$((m / 1024))" "-"
  # best of 3 comment edits (each a new text, so that none is a plain hit)
  local best=""
  for i in 1 2 3; do
    sed -i "${line}s/\$/ e$i/" "$f"
    sleep 2.1
    read -r s m < <(timed)
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
  done
  printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10s\n" "$name comment edit" "$(tlines "$tree")" "$cold" "$best" \
    "$(awk "BEGIN{print $best/$cold}")" "$((m / 1024))" "-"
  # a comment line and a blank line inserted above the edited comment: every line after them moves
  sed -i "${line}s/^/# inserted\n\n/" "$f"
  edit_row "inserted lines"
  echo "# appended" >>"$f"
  edit_row "appended comment"
  # a statement added inside a Triton kernel body (device code: served when the kernel stores through
  # the same parameters, guard.FileDigest), on a line past the body's first
  local kf kl
  read -r kf kl < <(kernel_line "$tree") || true
  if [ -n "${kf:-}" ]; then
    sed -i "${kl}s/\$/; _capguard_bench_k = 0/" "$kf"
    python3 -m py_compile "$kf" 2>/dev/null || echo "# kernel body edit: $kf:$kl no longer compiles"
    edit_row "kernel body edit"
  fi
  # a module-level literal bound to a name no file holds, appended (served: guard.InertUnit), then
  # given another value (served again)
  for i in 1 2; do
    if [ "$i" = 1 ]; then printf '\n_bench_unread_limit = 1\n' >>"$f"; else sed -i 's/^_bench_unread_limit = 1$/_bench_unread_limit = 2/' "$f"; fi
    edit_row "unread literal $i"
  done
  # a statement inserted as the first of a host function's body (host code: analysed again)
  local hf hl
  read -r hf hl < <(host_def_line "$tree") || true
  if [ -n "${hf:-}" ]; then
    sed -i "${hl}s/\$/\n    _bench_edit_x = 1/" "$hf"
    python3 -m py_compile "$hf" 2>/dev/null || echo "# code edit: $hf:$hl no longer compiles"
    edit_row "code edit"
    # The editor's route (capguard server's analysis, in one process): the same host function edited
    # again and again as an unsaved buffer, the trees and digests kept from the run before
    # (bench/serveredit); its own cold run in the parse-only column, the median edit, the slowest.
    local sc se sx sf sp
    read -r _ sc _ se sx _ sf _ sp < <("$out/serveredit" -n 5 "$tree" "$hf" "$hl")
    printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10s\n" "$name server code edit" "$(tlines "$tree")" "$sc" "$se" \
      "$(awk "BEGIN{print $se/$sc}")" "$sp" "max $sx"
    # The same edits, until the edited file's own diagnostics are known (the server publishes an open
    # buffer's then, before the other files' rules run: guard.Options.Early); the median.
    printf "%-28s %9s %12.2f %12.2f %10.3f %10s %10s\n" "$name server edit: own file" "$(tlines "$tree")" "$sc" "$sf" \
      "$(awk "BEGIN{print $sf/$sc}")" "-" "-"
    # The stdin route (check --stdin-filename F -, an editor's linter): the host function edited again
    # in an unsaved buffer (the file on disk unchanged), the same buffer again, then a comment typed in it.
    local buf="$out/buffer.py"
    sed "${hl}s/\$/\n    _bench_edit_y = 2/" "$hf" >"$buf"
    stdin_row "stdin code edit" "$hf" "$buf"
    stdin_row "stdin same buffer" "$hf" "$buf"
    sed -i "$((hl + 1))s/^/    # typed note\n/" "$buf"
    stdin_row "stdin comment edit" "$hf" "$buf"
  fi
  # A comment appended to each of 8 files spread over the tree (every ninth of its sorted files): the
  # rows above edit the first file that suits them, these the files a developer might happen to
  # touch. One row: how many were served from the stored result, the median and the slowest run.
  local files n k served=0 times=() med slow
  mapfile -t files < <(find "$tree" -name '*.py' | sort)
  n=${#files[@]}
  for k in 1 2 3 4 5 6 7 8; do
    echo "# sampled edit $k" >>"${files[$((k * n / 9))]}"
    sleep 2.1
    read -r s m < <(CAPGUARD_TIMING=1 timed)
    times+=("$s")
    grep -q "cache miss" "$out/err" || served=$((served + 1))
  done
  med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END{print (a[4]+a[5])/2}')
  slow=$(printf '%s\n' "${times[@]}" | sort -g | tail -n 1)
  printf "%-28s %9s %12.2f %12.2f %10.3f %10d %10s\n" "$name 8 files: $served served" "$(tlines "$tree")" "$cold" "$med" \
    "$(awk "BEGIN{print $med/$cold}")" "$((m / 1024))" "max $slow"
  # The same 8 files checked one by one (check FILE, as an editor's linter runs it): each run analyses
  # the file's project (the tree's top package) and reports on the file; the first fills the project's
  # entry and the rest are served from it (cli's projectOnly). One row: how many were served, the
  # median and the slowest run.
  served=0 times=()
  for k in 1 2 3 4 5 6 7 8; do
    local t0 t1
    t0=$(date +%s%N)
    CAPGUARD_TIMING=1 "$out/capguard" check --exit-zero --format json --cache-dir "$out/ecache" "${files[$((k * n / 9))]}" >/dev/null 2>"$out/err" || true
    t1=$(date +%s%N)
    times+=("$(awk "BEGIN{printf \"%.4f\", ($t1-$t0)/1e9}")")
    grep -q "cache hit" "$out/err" && served=$((served + 1))
  done
  med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END{print (a[4]+a[5])/2}')
  slow=$(printf '%s\n' "${times[@]}" | sort -g | tail -n 1)
  printf "%-28s %9s %12.2f %12.2f %10.3f %10s %10s\n" "$name 8 file runs: $served served" "$(tlines "$tree")" "$cold" "$med" \
    "$(awk "BEGIN{print $med/$cold}")" "-" "max $slow"
  rm -rf "$copy" "$out/ecache"
}
# host_def_line TREE: "file line" of a one-line top-level `def ...:` with no decorator (host code,
# no kernel), whose next line is indented four spaces (the first such, in sorted file order).
host_def_line() {
  find "$1" -name '*.py' | sort | while read -r hfile; do
    awk '
      /^def [A-Za-z_][A-Za-z0-9_]*\(.*\).*:[[:space:]]*$/ && prev !~ /^@/ { cand = FNR; prev = $0; next }
      cand && /^    [^ ]/ { print FILENAME, cand; exit }
      { cand = 0; prev = $0 }
    ' "$hfile"
  done | head -n 1
}
# kernel_line TREE: "file line" of a simple assignment, four spaces in, past the first statement of a
# top-level @triton.jit kernel's body (the first file in sorted order that has one; a body that begins
# with a docstring is passed over).
kernel_line() {
  find "$1" -name '*.py' -print0 | xargs -0 grep -l '^@triton.jit' | sort | while read -r kfile; do
    awk '
      /^@triton\.jit/ { dec = 1; next }
      dec && /^def / { head = 1; dec = 0 }
      head { if ($0 ~ /:[[:space:]]*$/) { head = 0; body = 1; first = 1 }; next }
      body && /^[^ \t#]/ { body = 0 }
      body && /^[[:space:]]*(#|$)/ { next }
      body && first && /"""|\047\047\047/ { body = 0; next }
      body && /^    [A-Za-z_][A-Za-z0-9_]* = [^#;]*[A-Za-z0-9_)\]]$/ { if (first) { first = 0; next }; print FILENAME, FNR; exit }
      body { first = 0 }
    ' "$kfile"
  done | head -n 1
}
if [ -n "${FLAGGEMS:-}" ]; then edit_rows "FlagGems src/" "$FLAGGEMS/src"; fi
if [ -n "${LMDEPLOY:-}" ]; then edit_rows "lmdeploy pkg" "$LMDEPLOY/lmdeploy"; fi
if [ -n "${EDITTREE:-}" ]; then edit_rows "$(basename "$EDITTREE") (other)" "$EDITTREE"; fi
