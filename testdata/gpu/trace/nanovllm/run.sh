#!/usr/bin/env bash
# capguard trace on a real engine (nano-vllm, random weights, the pure-torch
# flash-attn stand-in of shims/) and on torch.compile'd code, on a GPU.
#
# Build here (the GPU machine has no Go) and carry the worktree:
#   go build -ldflags=-s\ -w -o .gpu-bin/capguard ./cli/capguard
#   go test -c -ldflags=-s\ -w -o .gpu-bin/capguard.test ./cli/capguard
#   cp PREVIOUS-CAPGUARD .gpu-bin/capguard-prev        # optional: the tracer before the fix
#   mkdir -p .corpus/nano-vllm && cp -r /work/corpus/train/nano-vllm/nanovllm .corpus/nano-vllm/   # ignored, never committed
#   (device) bash testdata/gpu/trace/nanovllm/run.sh
# Writes under $OUT: env.txt, progress.log, gotest.log, compile.log,
# runs.tar.gz (results, logs and maps of the compile_engine and SGLang-style
# runs) and nv.tar.gz (nano-vllm's results, logs and map: they name the
# corpus's functions and files, so they are never committed).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/testdata/gpu/trace/nanovllm/out}
BIN=$ROOT/.gpu-bin/capguard
mkdir -p "$OUT"
W=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 TRITON_CACHE_DIR=$W/triton-cache TORCHINDUCTOR_CACHE_DIR=$W/inductor-cache
{
  echo "command: bash testdata/gpu/trace/nanovllm/run.sh"
  date -u +%FT%TZ
  nvidia-smi -L
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
  "$BIN" --version
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
log() { echo "$*" | tee -a "$OUT/progress.log"; }

# 1. The tracer's real-torch tests (CPU tensors, stand-in graph class), in the
# background: torch.compile'd calls (TestTraceCompiledCallsRealTorch), the
# dispatch state, host reads.
if [ -x "$ROOT/.gpu-bin/capguard.test" ]; then
  (cd cli/capguard && CAPGUARD_TEST_TORCH_PYTHON=$(command -v python3) timeout 200 "$ROOT/.gpu-bin/capguard.test" \
     -test.run 'TestTraceCompiledCallsRealTorch|TestTraceDispatchStateRealTorch|TestTraceCPUTorch|TestTraceHostReads|TestTracerTorch2Ops' \
     -test.v -test.count=1 > "$OUT/gotest.log" 2>&1; echo "rc=$?" >> "$OUT/gotest.log") &
  TESTS=$!
fi
# 2. compile_engine.py untraced, with this tracer and with the previous one
# (Dynamo's graph counts: the previous tracer made it recompile).
CE=$ROOT/templates/testdata/trace/compile_engine.py
(
  cd "$W"
  COMPILE_OUT=$W/ce-plain.json python3 "$CE"
  CAPGUARD_TRACE_DEVICE_TYPES=cpu COMPILE_OUT=$W/ce-traced.json "$BIN" trace --alloc-stacks=false --out "$W/ce-traced.map.json" -- python3 "$CE"
  if [ -x "$ROOT/.gpu-bin/capguard-prev" ]; then
    CAPGUARD_TRACE_DEVICE_TYPES=cpu COMPILE_OUT=$W/ce-prev.json "$ROOT/.gpu-bin/capguard-prev" trace --alloc-stacks=false --out "$W/ce-prev.map.json" -- python3 "$CE"
  fi
) > "$OUT/compile.log" 2>&1 &
CEP=$!

# 3. nano-vllm with and without the tracer (names in its map are relative
# to the copy's folder).
NV=$ROOT/.corpus/nano-vllm
if [ -d "$NV/nanovllm" ]; then
  cd "$NV"
  for mode in plain traced; do
    t0=$(date +%s%N)
    if [ $mode = plain ]; then
      timeout 150 python3 "$ROOT/testdata/gpu/trace/nanovllm/drive.py" --engine . --out "$W/nv-$mode.json" > "$W/nv-$mode.log" 2>&1
    else
      timeout 170 "$BIN" trace --out "$W/nv-traced.map.json" -- python3 "$ROOT/testdata/gpu/trace/nanovllm/drive.py" --engine . --out "$W/nv-$mode.json" > "$W/nv-$mode.log" 2>&1
    fi
    log "nv-$mode rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 )) $(grep -h '^nanovllm:' "$W/nv-$mode.log" | tail -1)"
  done
  python3 - "$W" <<'EOF' | tee -a "$OUT/progress.log"
import json, sys, os
w = sys.argv[1]
try:
    a = json.load(open(os.path.join(w, "nv-plain.json")))
    b = json.load(open(os.path.join(w, "nv-traced.json")))
    for k in ("warm_tokens", "timed_tokens"):
        n = sum(len(t) for t in a[k])
        print("nv %s: %d tokens untraced, %d traced, identical %s" % (k, n, sum(len(t) for t in b[k]), a[k] == b[k]))
    print("nv graphs untraced %s traced %s; timed generate %.3fs untraced %.3fs traced" % (a["graphs"], b["graphs"], a["timed_s"], b["timed_s"]))
except Exception as e:
    print("nv compare failed:", e)
EOF
  cd "$ROOT"
fi
wait $CEP
grep -h "compile_engine:" "$OUT/compile.log" | tee -a "$OUT/progress.log"
# 4. Tracing cost on the SGLang-style engine (alone on the GPU once the tests end).
[ -n "${TESTS:-}" ] && wait $TESTS
log "go tests: $(tail -1 "$OUT/gotest.log") ($(grep -c -- '^--- PASS' "$OUT/gotest.log") passed, $(grep -c -- '^--- FAIL' "$OUT/gotest.log") failed, $(grep -c -- '--- SKIP' "$OUT/gotest.log") skipped)"
cd "$ROOT/testdata/gpu/trace/sgl"
for run in plain-none traced-none plain-none2 traced-none2 plain-compile traced-compile; do
  [ "$SECONDS" -gt 340 ] && { log "$run skipped: past 340 s"; continue; }
  flags=(--plant none); case $run in *compile) flags+=(--compile);; esac
  t0=$(date +%s%N)
  if [ "${run%%-*}" = plain ]; then
    timeout 60 python3 serve.py --steps 40 --out "$W/$run.json" "${flags[@]}" > "$W/$run.log" 2>&1
  else
    timeout 60 "$BIN" trace --out "$W/$run.map.json" -- python3 serve.py --steps 40 --out "$W/$run.json" "${flags[@]}" > "$W/$run.log" 2>&1
  fi
  log "$run rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 )) $(grep -h '^sgleng:' "$W/$run.log" | tail -1)"
done
tar -czf "$OUT/nv.tar.gz" -C "$W" $(cd "$W" && ls -d nv-* 2>/dev/null)
tar -czf "$OUT/runs.tar.gz" -C "$W" --exclude triton-cache --exclude inductor-cache --exclude 'nv-*' .
log "done in ${SECONDS}s"
