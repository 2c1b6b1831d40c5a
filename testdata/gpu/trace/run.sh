#!/usr/bin/env bash
# The GPU proof of `capguard trace` on the mini engine (testdata/gpu/trace/engine).
#
# Build here (the GPU machine has no Go) and carry the binary:
#   go build -o .gpu-bin/capguard ./cli/capguard
#   (run tool) command: bash testdata/gpu/trace/run.sh    carry: [".gpu-bin"]
# Needs python3 with torch (CUDA) and triton. Everything goes under $OUT
# (default testdata/gpu/trace/out): summary.json, report.txt, runs.tar.gz.
#
# Runs, in order (each its own process; triton's cache is shared):
#   plain      clean engine, no tracer                      (capture and replay times)
#   clean      clean engine, traced, allocation stacks on   (map vs the engine's record)
#   nostacks   clean engine, traced, --alloc-stacks=false   (capture time)
#   hidden     capture started via getattr on names built at run time, torch attention
#   rebind freed sync baked   one planted hazard each, traced
# then capguard check on the engine alone and with each map, and compare.py.
set -uo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/testdata/gpu/trace/out}
BIN=$(realpath "${CAPGUARD:-.gpu-bin/capguard}")
mkdir -p "$OUT"
W=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
ENG=testdata/gpu/trace/engine
{
  echo "command: bash testdata/gpu/trace/run.sh"
  date -u +%FT%TZ
  nvidia-smi -L
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
  "$BIN" --version
} > "$W/env.txt" 2>&1
cat "$W/env.txt"
STEPS=24
cd "$ENG"   # names in the maps are relative to the engine's folder
run() { # name, then capguard trace flags or "plain", then serve.py flags
  local name=$1; shift
  local mode=$1; shift
  echo "== $name" | tee -a "$W/progress.log"
  local t0=$(date +%s%N)
  if [ "$mode" = plain ]; then
    timeout 240 python3 serve.py --steps $STEPS --runlog "$W/$name.runlog.json" --timing "$W/$name.timing.json" "$@" > "$W/$name.log" 2>&1
  else
    timeout 240 "$BIN" trace $mode --out "$W/$name.map.json" -- python3 serve.py --steps $STEPS \
      --runlog "$W/$name.runlog.json" --timing "$W/$name.timing.json" "$@" > "$W/$name.log" 2>&1
  fi
  local rc=$?
  echo "$name rc=$rc wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" | tee -a "$W/progress.log"
  tail -n 30 "$W/$name.log" >> "$W/progress.log"
}
run plain plain
run clean "--alloc-stacks=true"
run nostacks "--alloc-stacks=false"
run hidden "--alloc-stacks=true" --capture-via getattr --attention torch
for p in rebind freed sync baked; do run $p "--alloc-stacks=true" --plant $p; done
"$BIN" check --format json . > "$W/static.json" 2> "$W/static.stderr"
for v in clean hidden rebind freed sync baked; do
  [ -f "$W/$v.map.json" ] || continue
  "$BIN" check --format json --capture-map "$W/$v.map.json" . > "$W/$v.merged.json" 2> "$W/$v.merged.stderr"
  "$BIN" check --capture-map "$W/$v.map.json" . > "$W/$v.merged.txt" 2>&1
  python3 "$ROOT/testdata/gpu/trace/compare.py" $v "$W/$v.map.json" "$W/$v.runlog.json" "$W/static.json" "$W/$v.merged.json" > "$W/$v.check.json" 2>> "$W/progress.log"
done
"$BIN" check . > "$W/static.txt" 2>&1
python3 - "$W" > "$OUT/summary.json" <<'PY'
import json, os, sys
w = sys.argv[1]
out = {"env": open(os.path.join(w, "env.txt")).read().splitlines(), "runs": {}}
for v in ("plain", "clean", "nostacks", "hidden", "rebind", "freed", "sync", "baked"):
    r = {}
    for k, f in (("timing", v + ".timing.json"), ("check", v + ".check.json")):
        p = os.path.join(w, f)
        if os.path.exists(p):
            try:
                r[k] = json.load(open(p))
            except Exception as e:
                r[k] = {"error": str(e)}
    out["runs"][v] = r
t = {v: out["runs"][v].get("timing", {}) for v in out["runs"]}
out["capture_seconds"] = {v: t[v].get("capture_s") for v in t}
out["replay_ms_mean"] = {v: t[v].get("replay_ms_mean") for v in t}
out["passed"] = {v: out["runs"][v].get("check", {}).get("passed") for v in out["runs"] if "check" in out["runs"][v]}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
PY
{ cat "$W/progress.log"; echo; echo "== static alone"; cat "$W/static.txt"; for v in clean hidden rebind freed sync baked; do echo "== check --capture-map $v"; cat "$W/$v.merged.txt" 2>/dev/null; done; } > "$OUT/report.txt"
tar -C "$W" -czf "$OUT/runs.tar.gz" .
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"passed": d["passed"], "capture_seconds": d["capture_seconds"], "replay_ms_mean": d["replay_ms_mean"]}, indent=1))' "$OUT/summary.json"
