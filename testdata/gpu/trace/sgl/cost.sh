#!/usr/bin/env bash
# Tracing cost on the SGLang-style engine (clean variant), alone on the GPU:
# untraced, with the tracer of .gpu-bin/capguard-prev (if carried) and with
# .gpu-bin/capguard, interleaved, REPS times each, STEPS decode steps.
#   (device) OUT=$OUT bash testdata/gpu/trace/sgl/cost.sh
# Writes $OUT/cost.log (one line per run) and $OUT/cost.tar.gz (the results).
set -uo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../../.. && pwd)
OUT=${OUT:-$PWD/out}; STEPS=${STEPS:-80}; REPS=${REPS:-3}
mkdir -p "$OUT"; W=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 TRITON_CACHE_DIR=$W/triton-cache
for r in $(seq "$REPS"); do
  for who in plain prev new; do
    bin=$ROOT/.gpu-bin/capguard; [ $who = prev ] && bin=$ROOT/.gpu-bin/capguard-prev
    [ $who != plain ] && [ ! -x "$bin" ] && continue
    n=$who-$r
    if [ $who = plain ]; then
      timeout 90 python3 serve.py --steps "$STEPS" --out "$W/$n.json" > "$W/$n.log" 2>&1
    else
      timeout 90 "$bin" trace --out "$W/$n.map.json" -- python3 serve.py --steps "$STEPS" --out "$W/$n.json" > "$W/$n.log" 2>&1
    fi
    echo "$n rc=$? $(python3 - "$W/$n.json" "$W/$n.map.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
st = sorted(x["replay_s"] * 1e3 for x in r["step_log"] if x["replay_s"] is not None and x["replay_index"] > 3)
try:
    m = json.load(open(sys.argv[2]))
    checked = [g["replays_checked"] for g in m["graphs"]]
except Exception:
    checked = None
print("capture %.2fs steady replay median %.3f min %.3f ms (n=%d) wrong %d checked %s" % (
    r["capture_s"], st[len(st) // 2], st[0], len(st), r["wrong_steps"], checked))
PY
)" | tee -a "$OUT/cost.log"
  done
done
tar -czf "$OUT/cost.tar.gz" -C "$W" --exclude triton-cache .
