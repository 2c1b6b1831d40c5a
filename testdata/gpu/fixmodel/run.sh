#!/usr/bin/env bash
# The GPU proof of issue 18's fix model (one `run` call): each right fix of
# testdata/verify/fixmodel_*.py verified original and --fixed with the
# session's binary; the per-instance buffer case also with the baseline
# binary's fix (a buffer per class and site), and eagerly against the
# original by eager_check.py; the CG202 static-input patterns by
# cg202_check.py. Outputs under $OUT (default: this folder).
#
#   go build -o .wt/fixes/.gpu-bin/capguard ./cli/capguard   (in the worktree)
#   cp /work/bin/capguard-base .wt/fixes/.gpu-bin/capguard-base
#   (run tool) command: cd .wt/fixes && bash testdata/gpu/fixmodel/run.sh   carry: [".wt/fixes"]
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-testdata/gpu/fixmodel}
BIN=${CAPGUARD:-.gpu-bin/capguard}
BASE=${CAPGUARD_BASE:-.gpu-bin/capguard-base}
export PYTHONUNBUFFERED=1
{
  echo "command: cd .wt/fixes && bash testdata/gpu/fixmodel/run.sh"
  date -u +%FT%TZ
  nvidia-smi -L
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
} > "$OUT/env.txt" 2>&1
v() { # name binary extra-flags...
  local name=$1 bin=$2 case=$3; shift 3
  "$bin" verify "testdata/verify/fixmodel_$case.py:$(sed -n 's/^# target: //p' testdata/verify/fixmodel_$case.toml)" \
    --inputs "testdata/verify/fixmodel_$case.toml" --fixed "$@" --batch-sizes 1,4,32 --replays 5 --jobs 1 --timeout 90s \
    --format json > "$OUT/$name.json" 2> "$OUT/$name.stderr"
  echo "$name exit=$?" >> "$OUT/exits.txt"
}
: > "$OUT/exits.txt"
v gather "$BIN" gather &
v data_reload "$BIN" data_reload &
v layer_scales "$BIN" layer_scales --unsafe-fixes &
v layer_scales.baseline "$BASE" layer_scales --unsafe-fixes &
python3 testdata/gpu/fixmodel/cg202_check.py > "$OUT/cg202_check.json" 2> "$OUT/cg202_check.stderr" &
python3 testdata/gpu/fixmodel/eager_check.py > "$OUT/eager_check.json" 2> "$OUT/eager_check.stderr" &
wait
for f in "$OUT"/*.stderr; do echo "== $f"; tail -5 "$f"; done > "$OUT/progress.log"
cat "$OUT/exits.txt" "$OUT/progress.log" "$OUT/cg202_check.json" "$OUT/eager_check.json"
for n in gather data_reload layer_scales layer_scales.baseline; do
  python3 - "$OUT/$n.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for side in ("original", "fixed"):
    r = d.get(side) or {}
    print(sys.argv[1].rsplit("/", 1)[-1], side, [(c.get("batch_size"), c.get("verdict"), c.get("diverged")) for c in r.get("cases", [])], r.get("error", ""))
PY
done
