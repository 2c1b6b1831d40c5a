#!/usr/bin/env bash
# The GPU proof of the fix model's in-place aliasing facts and of the
# stored-state probe's fix (one `run` call, worktree carried):
#   (run tool) command: cd .wt/fixes2 && bash testdata/gpu/fixmodel/alias/run.sh   carry: [".wt/fixes2"]
# Outputs under $OUT (default: this folder).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-testdata/gpu/fixmodel/alias}
export PYTHONUNBUFFERED=1
{
  echo "command: cd .wt/fixes2 && bash testdata/gpu/fixmodel/alias/run.sh"
  date -u +%FT%TZ
  nvidia-smi -L
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
} > "$OUT/env.txt" 2>&1
: > "$OUT/exits.txt"
timeout 200 python3 testdata/gpu/fixmodel/alias/alias_check.py > "$OUT/alias_check.json" 2> "$OUT/alias_check.stderr" &
for p in cg301_stored_state_pos fixed/cg301_stored_state_pos; do
  timeout 150 python3 testdata/gpu/probes/harness.py "testdata/gpu/probes/$p.py" > "$OUT/$(echo $p | tr / _).json" 2> "$OUT/$(echo $p | tr / _).stderr"
  echo "$p exit=$?" >> "$OUT/exits.txt"
done
wait
echo "alias_check done" >> "$OUT/exits.txt"
cat "$OUT/exits.txt" "$OUT/alias_check.json"; tail -n 20 "$OUT"/*.stderr
