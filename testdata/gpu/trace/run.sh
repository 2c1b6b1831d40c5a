#!/usr/bin/env bash
# The GPU proof of `capguard trace` on the mini engine (testdata/gpu/trace/engine).
#
# Build here (the GPU machine has no Go) and carry the binary:
#   go build -o .gpu-bin/capguard ./cli/capguard
#   (run tool) command: bash testdata/gpu/trace/run.sh    carry: [".gpu-bin"]
# Needs python3 with torch (CUDA) and triton. Everything goes under $OUT
# (default testdata/gpu/trace/out), three files: summary.json (pass/fail per
# variant, every check, timings), report.txt (progress, capguard's output,
# the replay overhead table) and runs.tar.gz (every map, log and check).
# About 2 minutes; each run is cut at 150 s and the whole at 220 s.
# CPU=1 checks this script, compare.py and the summary without a GPU (CPU
# torch, cpushim/: stand-in graphs, torch attention; the Triton plants and
# the GPU-only checks fail there).
#
# Runs, in order (each its own process; triton's cache is shared):
#   plain      clean engine, no tracer                      (reference capture and replay times)
#   clean      clean engine, traced, allocation stacks on   (map vs the engine's record)
#   nostacks   clean engine, traced, --alloc-stacks=false   (capture time)
#   hidden     capture started via getattr on names built at run time, torch attention
#   rebind freed sync baked baked-pre   one planted hazard each, traced
# then capguard check on the engine alone and with each map, and compare.py
# per variant. Replay times: STEPS decode steps round-robin over 4 batch
# sizes; "steady" is every replay after each graph's first PREP (the tracer
# checks those, then puts the original replay back).
set -uo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/testdata/gpu/trace/out}
BIN=$(realpath "${CAPGUARD:-.gpu-bin/capguard}")
STEPS=${STEPS:-400}
PREP=${PREP:-3}
mkdir -p "$OUT"
W=${RESULTS:-$(mktemp -d)}   # RESULTS=DIR: only re-check a run's unpacked runs.tar.gz (no GPU)
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
ENG=testdata/gpu/trace/engine
SERVE_EXTRA=()
if [ -n "${CPU:-}" ]; then
  export PYTHONPATH=$ROOT/testdata/gpu/trace/cpushim${PYTHONPATH:+:$PYTHONPATH} CAPGUARD_TRACE_DEVICE_TYPES=cpu \
    CAPGUARD_TRACE_SKIP=$ROOT/testdata/gpu/trace/cpushim
  export PATH=$(dirname "${CPU_PYTHON:-/usr/bin/python3}"):$PATH  # a python3 with (CPU) torch
  SERVE_EXTRA=(--device cpu --attention torch)
fi
CMP="$ROOT/testdata/gpu/trace/compare.py"
[ -n "${RESULTS:-}" ] || {
  echo "command: bash testdata/gpu/trace/run.sh (STEPS=$STEPS PREP=$PREP)"
  date -u +%FT%TZ
  nvidia-smi -L
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
  "$BIN" --version
} > "$W/env.txt" 2>&1
cat "$W/env.txt"
cd "$ENG"   # names in the maps are relative to the engine's folder
run() { # name, then capguard trace flags or "plain", then serve.py flags
  local name=$1; shift
  local mode=$1; shift
  echo "== $name" | tee -a "$W/progress.log"
  if [ "$SECONDS" -gt 220 ]; then
    echo "$name skipped: past 220 s" | tee -a "$W/progress.log"
    echo 124 > "$W/$name.rc"
    return
  fi
  local t0=$(date +%s%N)
  if [ "$mode" = plain ]; then
    CAPGUARD_TRACE_PREP_REPLAYS=$PREP timeout 150 python3 serve.py --steps "$STEPS" --warm "$PREP" \
      --runlog "$W/$name.runlog.json" --timing "$W/$name.timing.json" ${SERVE_EXTRA[@]+"${SERVE_EXTRA[@]}"} "$@" > "$W/$name.log" 2>&1
  else
    timeout 150 "$BIN" trace $mode --prep-replays "$PREP" --out "$W/$name.map.json" -- python3 serve.py --steps "$STEPS" --warm "$PREP" \
      --runlog "$W/$name.runlog.json" --timing "$W/$name.timing.json" ${SERVE_EXTRA[@]+"${SERVE_EXTRA[@]}"} "$@" > "$W/$name.log" 2>&1
  fi
  local rc=$?
  echo "$rc" > "$W/$name.rc"
  echo "$name rc=$rc wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" | tee -a "$W/progress.log"
  tail -n 40 "$W/$name.log" >> "$W/progress.log"
}
TRACED="clean nostacks hidden rebind freed sync baked baked-pre"
if [ -z "${RESULTS:-}" ]; then
run plain plain
run clean "--alloc-stacks=true"
run nostacks "--alloc-stacks=false"
run hidden "--alloc-stacks=true" --capture-via getattr --attention torch
for p in rebind freed sync baked baked-pre; do run $p "--alloc-stacks=true" --plant $p; done
fi
# capguard check alone and with each map (RESULTS=DIR RECHECK=1 redoes this part, which needs no GPU,
# with the binary at hand: the maps stay the GPU run's).
if [ -z "${RESULTS:-}" ] || [ -n "${RECHECK:-}" ]; then
"$BIN" check --format json . > "$W/static.json" 2> "$W/static.stderr"
"$BIN" check . > "$W/static.txt" 2>&1
for v in $TRACED; do
  [ -f "$W/$v.map.json" ] || continue
  "$BIN" check --format json --capture-map "$W/$v.map.json" . > "$W/$v.merged.json" 2> "$W/$v.merged.stderr"
  "$BIN" check --capture-map "$W/$v.map.json" . > "$W/$v.merged.txt" 2>&1
done
fi
for v in plain $TRACED; do
  python3 "$CMP" "$v" "$W" > "$W/$v.check.json" 2>> "$W/progress.log"
done
python3 - "$W" "$TRACED" > "$OUT/summary.json" 2>> "$W/progress.log" <<'PY'
import json, os, sys
w, traced = sys.argv[1], sys.argv[2].split()
variants = ["plain"] + traced


def load(name):
    try:
        with open(os.path.join(w, name)) as f:
            return json.load(f)
    except Exception as e:
        return {"error": "%s: %s" % (type(e).__name__, e)}


def clean(x):  # no nulls anywhere in the summary
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return "n/a" if x is None else x


out = {"env": open(os.path.join(w, "env.txt")).read().splitlines(), "runs": {}}
for v in variants:
    out["runs"][v] = {"timing": load(v + ".timing.json"), "check": load(v + ".check.json")}
runs = out["runs"]
out["passed"] = {v: runs[v]["check"].get("passed") is True for v in variants}
out["failed_checks"] = {v: sorted(k for k, ok in (runs[v]["check"].get("checks") or {"check.json": False}).items() if ok is not True)
                        for v in variants}
# What the trace adds: variants whose planted lines static analysis alone
# does not report, and that check --capture-map does.
out["static_alone_misses"] = {v: runs[v]["check"].get("static_alone_misses") is True for v in traced}
out["trace_finds_what_static_misses"] = sorted(v for v in traced if out["static_alone_misses"][v] and runs[v]["check"].get("checks", {}).get("check_with_map_finds") is True)
out["all_passed"] = all(out["passed"].values()) and bool(out["trace_finds_what_static_misses"])
t = {v: runs[v]["timing"] for v in variants}
out["capture_seconds"] = {v: t[v].get("capture_s") for v in variants}
out["replay_ms"] = {v: {k: t[v].get(k) for k in ("replay_ms_mean", "replay_ms_first_mean", "replay_ms_steady_mean",
                                                 "replay_ms_steady_median", "replays", "replays_steady", "warm_replays")}
                    for v in variants}
out["replay_overhead_after_warmup"] = {v: runs[v]["check"].get("replay_overhead_after_warmup") or {} for v in traced}
json.dump(clean(out), sys.stdout, indent=1, sort_keys=True)
PY
{
  cat "$W/progress.log"
  echo
  echo "== static alone"; cat "$W/static.txt"
  for v in $TRACED; do echo "== check --capture-map $v"; cat "$W/$v.merged.txt" 2>/dev/null; done
  echo
  python3 - "$OUT/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("== replay overhead after warm-up (median ms of the replays after each graph's first N; plain = no tracer)")


def f(x, n=4):
    return ("%.*f" % (n, x)) if isinstance(x, (int, float)) else str(x)


print("%-10s %9s %9s %9s %7s %13s %13s" % ("variant", "steady", "plain", "delta", "ratio", "first-N mean", "plain first-N"))
for v, o in sorted(d["replay_overhead_after_warmup"].items()):
    print("%-10s %9s %9s %9s %7s %13s %13s%s" % (v, f(o.get("traced_steady_median_ms")), f(o.get("plain_steady_median_ms")), f(o.get("overhead_ms", "n/a")),
                                                 f(o.get("ratio", "n/a"), 3), f(o.get("traced_first_mean_ms"), 3), f(o.get("plain_first_mean_ms"), 3),
                                                 "" if o.get("same_workload_as_plain") else "   (another workload than plain)"))
print()
print("== verdicts")
for v, ok in d["passed"].items():
    print("%-10s %s%s" % (v, "PASS" if ok else "FAIL", "" if ok else "  " + ", ".join(d["failed_checks"][v])))
print("all passed:", d["all_passed"])
PY
} > "$OUT/report.txt"
tar -C "$W" -czf "$OUT/runs.tar.gz" .
tail -n 16 "$OUT/report.txt"
ls -la "$OUT"
