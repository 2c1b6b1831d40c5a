#!/usr/bin/env bash
# One GPU run: everything the runtime checker's proof needs, written under $OUT.
set -u
cd "$(dirname "$0")"
R=$OUT/runs.txt
log() { echo "$@" | tee -a "$R"; }
nvidia-smi -L > "$OUT/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >> "$OUT/nvidia-smi.txt" 2>&1
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
log "== $(date -u +%FT%TZ) $(uname -m) nvcc=$NVCC"
"$NVCC" --version >> "$R" 2>&1
ldd ./capguard-cuda | grep -i cuda >> "$R"
log "== nvcc -ptx -arch=sm_90 -o selftest.ptx selftest.cu"
cp ../templates/cuda/selftest.cu /tmp/selftest.cu
(cd /tmp && "$NVCC" -ptx -arch=sm_90 -o selftest.ptx selftest.cu) >> "$R" 2>&1; log "nvcc rc=$?"
cp /tmp/selftest.ptx "$OUT/selftest.ptx"
PTX=/tmp/selftest.ptx
TIMEFORMAT='wall %R s'
log "== cold: capguard-cuda selftest --format json --ptx selftest.ptx (first JIT of this PTX)"
{ time ./capguard-cuda selftest --format json --ptx $PTX > "$OUT/selftest-cuda.json"; } 2>> "$R"; log "rc=$?"
for i in 1 2 3; do
  log "== warm $i: capguard-cuda selftest --ptx selftest.ptx"
  { time ./capguard-cuda selftest --ptx $PTX >> "$R" 2>&1; } 2>> "$R"; log "rc=$?"
done
log "== capguard-cuda selftest --format json (embedded PTX)"
{ time ./capguard-cuda selftest --format json > /tmp/embedded.json 2>> "$R"; } 2>> "$R"; log "rc=$?"
grep -E '"(name|verdict|expected|passed|seconds|open_seconds)"' /tmp/embedded.json >> "$R"
log "== capguard-cuda selftest --placement realloc --format json --ptx selftest.ptx"
{ time ./capguard-cuda selftest --placement realloc --format json --ptx $PTX > "$OUT/selftest-cuda-realloc.json" 2>> "$R"; } 2>> "$R"; log "rc=$?"
log "== capguard-cuda selftest --backend sim --format json"
./capguard-cuda selftest --backend sim --format json > "$OUT/selftest-sim.json" 2>> "$R"; log "rc=$?"
log "== capguard-cuda selftest --device all"
./capguard-cuda selftest --device all --ptx $PTX >> "$R" 2>&1; log "rc=$?"
log "== capguard-cuda selftest --device 7"
./capguard-cuda selftest --device 7 >> "$R" 2>&1; log "rc=$?"
T=$OUT/tests.txt
export CAPGUARD_PTX=$PTX
echo "== CAPGUARD_PTX=selftest.ptx ./runtime.test -test.v -test.count=1" >> "$T"
./runtime.test -test.v -test.count=1 >> "$T" 2>&1; echo "rc=$?" >> "$T"
echo "== CAPGUARD_PTX=selftest.ptx ./cuda.test -test.v -test.count=1 -test.skip Fault" >> "$T"
./cuda.test -test.v -test.count=1 -test.skip Fault >> "$T" 2>&1; echo "rc=$?" >> "$T"
echo "== CAPGUARD_PTX=selftest.ptx ./cuda.test -test.v -test.count=1 -test.run Fault (alone: the fault is sticky)" >> "$T"
./cuda.test -test.v -test.count=1 -test.run Fault >> "$T" 2>&1; echo "rc=$?" >> "$T"
unset CAPGUARD_PTX
echo "== ./cuda.test -test.v -test.run Capture (embedded PTX)" >> "$T"
./cuda.test -test.v -test.count=1 -test.run Capture >> "$T" 2>&1; echo "rc=$?" >> "$T"
log "== done"
tail -5 "$T"
