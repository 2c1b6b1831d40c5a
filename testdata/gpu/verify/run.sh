#!/usr/bin/env bash
# The GPU proof of `capguard verify`: every testdata/verify case (one per row
# of DESIGN.md's measured table), original and --fixed, batch sizes 1, 4, 32,
# 5 replays each, JSON reports under $OUT (default: testdata/gpu/verify).
#
# Run on the GPU machine from the repository root, with the linux/amd64
# binary built here and carried:
#   go build -o .gpu-bin/capguard ./cli/capguard
#   (run tool) command: bash testdata/gpu/verify/run.sh   carry: [".gpu-bin"]
#
# The five targets run at once, each with --jobs 1 (one process per batch
# size, one at a time): five processes share the GPU, so the timings are
# those of a shared GPU; the verdicts do not depend on it. --unsafe-fixes because the CG201 fix (prep_rebind) is
# unsafe; it changes no other case's fix.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-testdata/gpu/verify}
BIN=${CAPGUARD:-.gpu-bin/capguard}
export PYTHONUNBUFFERED=1
{
  echo "command: bash testdata/gpu/verify/run.sh"
  date -u +%FT%TZ
  nvidia-smi -L
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
} > "$OUT/env.txt" 2>&1
for c in inside_capture patched_persistent prep_rebind host_baked pinned_h2d; do
  "$BIN" verify "testdata/verify/$c.py:bf16_index_logits" --inputs "testdata/verify/$c.toml" \
    --fixed --unsafe-fixes --batch-sizes 1,4,32 --replays 5 --jobs 1 --timeout 60s \
    --format json > "$OUT/$c.json" 2> "$OUT/$c.stderr" &
done
wait
for c in inside_capture patched_persistent prep_rebind host_baked pinned_h2d; do
  echo "== $c"; cat "$OUT/$c.stderr"; rm -f "$OUT/$c.stderr"
done > "$OUT/progress.log"
cat "$OUT/progress.log"
