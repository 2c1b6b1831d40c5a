#!/usr/bin/env bash
# Issue 14's runs of `capguard selftest --device all`, on whatever GPUs the machine has, written
# under $OUT. Build here and carry the binary (the GPU machine has no Go):
#   bash scripts/build-cuda.sh .gpu-bin/capguard-cuda
#   (run tool) command: bash testdata/gpu/runtime/multi/run.sh    carry: [".gpu-bin"]
# It records: every device's verdicts and times with --device all, cold (first run of the process
# image on the machine) and warm, with both placements; N processes started at once, each with its
# own --device (one per GPU; on a machine with fewer than 8 GPUs, 8 processes share the GPUs round
# robin, as ranks of a tensor-parallel server would share devices); a device index that does not
# exist (exit 2 and its message).
set -u
BIN=$(realpath "${CAPGUARD_CUDA:-.gpu-bin/capguard-cuda}")
OUT=${OUT:-/tmp/capguard-multi}
mkdir -p "$OUT"
R=$OUT/multi.txt
TIMEFORMAT='wall %R s'
log() { echo "$@" | tee -a "$R"; }
nvidia-smi -L > "$OUT/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv >> "$OUT/nvidia-smi.txt" 2>&1
N=$(nvidia-smi -L | grep -c '^GPU ')
log "== $(date -u +%FT%TZ) GPUs: $N"
log "== cold: capguard-cuda selftest --device all --format json"
{ time "$BIN" selftest --device all --format json > "$OUT/all-cold.json"; } 2>> "$R"; log "rc=$?"
for i in 1 2 3; do
  log "== warm $i: capguard-cuda selftest --device all --format json"
  { time "$BIN" selftest --device all --format json > "$OUT/all-warm-$i.json"; } 2>> "$R"; log "rc=$?"
done
for p in remap realloc; do
  log "== --device all --placement $p"
  { time "$BIN" selftest --device all --placement $p --format json > "$OUT/all-$p.json"; } 2>> "$R"; log "rc=$?"
done
for round in $(seq 1 "${ROUNDS:-1}"); do
log "== round $round: 8 processes at once, --device i mod $N"
start=$(date +%s%N)
pids=()
for r in 0 1 2 3 4 5 6 7; do
  d=$(( r % N ))
  ( s=$(date +%s%N); "$BIN" selftest --device $d --format json > "$OUT/rank$r.json" 2> "$OUT/rank$r.err"; rc=$?
    echo "round $round rank $r device $d rc=$rc wall_ms=$(( ($(date +%s%N) - s) / 1000000 ))" >> "$OUT/ranks.txt" ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
log "all 8 done in $(( ($(date +%s%N) - start) / 1000000 )) ms"
grep "^round $round " "$OUT/ranks.txt" | sort -n -k4 | tee -a "$R"
python3 - "$OUT" >> "$R" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
bad = 0
for f in sorted(glob.glob(os.path.join(out, "rank*.json"))):  # this round's
    try:
        d = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable:", e); bad += 1; continue
    ok = d.get("passed")
    print(os.path.basename(f), "device", d.get("device"), "passed", ok, "seconds", d.get("seconds"))
    bad += 0 if ok else 1
print("ranks failed:", bad)
PY
mkdir -p "$OUT/round$round" && mv "$OUT"/rank*.json "$OUT"/rank*.err "$OUT/round$round/"
done
log "== --device $N (no such device)"
"$BIN" selftest --device "$N" > "$OUT/nodevice.txt" 2>&1; log "rc=$? $(cat "$OUT/nodevice.txt")"
# Bundle (at most 8 files come back).
cd "$OUT" && tar -czf runs.tar.gz round* ranks.txt all-*.json nodevice.txt && rm -rf round* ranks.txt all-*.json nodevice.txt
