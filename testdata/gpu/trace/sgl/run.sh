#!/usr/bin/env bash
# capguard trace on the SGLang-style engine (testdata/gpu/trace/sgl), on a GPU.
#
# Build here (the GPU machine has no Go) and carry the binaries:
#   go build -o .gpu-bin/capguard ./cli/capguard
#   go test -c -o .gpu-bin/capguard.test ./cli/capguard
#   cp /work/bin/capguard-base .gpu-bin/capguard-base   # optional: the tracer before the fix
#   (run tool) command: bash testdata/gpu/trace/sgl/run.sh
# Writes under $OUT: env.txt, progress.log, gotest.log and runs.tar.gz (each
# run's result JSON, map and log). compare.py reads the unpacked runs here
# (no GPU needed) and runs capguard check alone and with each map.
#
# Runs: the tracer's CPU-torch tests (real torch's dispatcher); the tracer of
# c611929 on the clean engine (it died after unhooking); then per variant
# (none and one per planted hazard, and none with torch.compile) the engine
# untraced and traced. STEPS decode steps each, compared with eager. Then
# nano-vllm (testdata/gpu/trace/nanovllm) with and without the tracer, if a
# copy of it is in .corpus/nano-vllm (cp -r /work/corpus/train/nano-vllm/nanovllm .corpus/nano-vllm/).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/testdata/gpu/trace/sgl/out}
BIN=$ROOT/.gpu-bin/capguard
STEPS=${STEPS:-40}
mkdir -p "$OUT"
W=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 TRITON_CACHE_DIR=$W/triton-cache
ENG=$ROOT/testdata/gpu/trace/sgl
{
  echo "command: bash testdata/gpu/trace/sgl/run.sh (STEPS=$STEPS)"
  date -u +%FT%TZ
  nvidia-smi -L
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
  "$BIN" --version
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
log() { echo "$*" | tee -a "$OUT/progress.log"; }

# 1. The tracer's tests on real torch (CPU tensors, a stand-in graph class).
if [ -x "$ROOT/.gpu-bin/capguard.test" ]; then
  (cd cli/capguard && CAPGUARD_TEST_TORCH_PYTHON=$(command -v python3) timeout 120 "$ROOT/.gpu-bin/capguard.test" \
     -test.run 'TestTraceCPUTorch|TestTraceHostReads|TestTracerTorch2Ops' -test.v -test.count=1) > "$OUT/gotest.log" 2>&1
  log "go tests on real torch: rc=$? ($(grep -c -- '^--- PASS' "$OUT/gotest.log") passed, $(grep -c -- '^--- FAIL' "$OUT/gotest.log") failed, $(grep -c -- '--- SKIP' "$OUT/gotest.log") skipped)"
fi

cd "$ENG"   # names in the maps are relative to the engine's folder
one() { # name, tracer binary or "plain", serve.py flags
  local name=$1 bin=$2; shift 2
  local t0=$(date +%s%N) rc
  if [ "$bin" = plain ]; then
    timeout 120 python3 serve.py --steps "$STEPS" --out "$W/$name.json" "$@" > "$W/$name.log" 2>&1
  else
    timeout 120 "$bin" trace --out "$W/$name.map.json" -- python3 serve.py --steps "$STEPS" --out "$W/$name.json" "$@" > "$W/$name.log" 2>&1
  fi
  rc=$?
  echo "$rc" > "$W/$name.rc"
  log "$name rc=$rc wall_ms=$(( ($(date +%s%N) - t0) / 1000000 )) $(grep -h '^sgleng:' "$W/$name.log" | tail -1)"
}
# 2. Timing first, alone on the GPU: the clean engine untraced and traced
# (Triton's cache warm from the first).
one plain-none plain --plant none
one traced-none "$BIN" --plant none
# 3. The tracer of c611929, if carried.
if [ -x "$ROOT/.gpu-bin/capguard-base" ]; then
  one base-none "$ROOT/.gpu-bin/capguard-base" --plant none
  grep -m1 -h "INTERNAL ASSERT\|Error" "$W/base-none.log" | tee -a "$OUT/progress.log"
fi
# 4. Every variant untraced and traced, four processes at a time.
jobs_=()
for v in rebind stale resize stored baked dynamic compile; do
  flags=(--plant "$v"); [ "$v" = compile ] && flags=(--plant none --compile)
  for mode in plain traced; do
    [ "$SECONDS" -gt 230 ] && { log "$mode-$v skipped: past 230 s"; continue; }
    bin=plain; [ $mode = traced ] && bin=$BIN
    one "$mode-$v" "$bin" "${flags[@]}" &
    while [ "$(jobs -rp | wc -l)" -ge 4 ]; do sleep 1; done
  done
done
wait
# 5. A real engine: nano-vllm (copied from the corpus into the ignored .corpus/
# folder before the run, never committed), random weights, the pure-torch
# flash-attn stand-in of testdata/gpu/trace/nanovllm/shims; with and without
# the tracer. Names in its map are relative to the copy's folder.
NV=$ROOT/.corpus/nano-vllm
if [ -d "$NV/nanovllm" ] && [ "$SECONDS" -lt 280 ]; then
  cd "$NV"
  for mode in plain traced; do
    t0=$(date +%s%N)
    if [ $mode = plain ]; then
      timeout 100 python3 "$ROOT/testdata/gpu/trace/nanovllm/drive.py" --engine . --out "$W/nv-$mode.json" > "$W/nv-$mode.log" 2>&1
    else
      timeout 100 "$BIN" trace --out "$W/nv-traced.map.json" -- python3 "$ROOT/testdata/gpu/trace/nanovllm/drive.py" --engine . --out "$W/nv-$mode.json" > "$W/nv-$mode.log" 2>&1
    fi
    log "nv-$mode rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 )) $(grep -h '^nanovllm:' "$W/nv-$mode.log" | tail -1)"
  done
fi
tar -czf "$OUT/runs.tar.gz" -C "$W" --exclude triton-cache .
log "done in ${SECONDS}s"
