#!/usr/bin/env bash
# Every GPU measurement of issue 11 in one run (about 2-3 minutes on one H200; the parts are bounded
# at 5 + 3 minutes): the truth-table probes, then the fix proof of the motivating reader.
#
#   bash testdata/gpu/probes/run.sh              from the repository root, on a machine with a GPU,
#                                                torch and triton; no Go needed
#   CAPGUARD_COMMIT=$(git rev-parse --short HEAD) bash testdata/gpu/probes/run.sh
#                                                where the checkout's git metadata may not be the
#                                                tree's (the device tool copies the working tree;
#                                                its git said eb5c4b3 for 57b2386's tree)
#
# Writes 5 files under $OUT (default /tmp/capguard-gpu):
#   verdicts.json       one verdict per probe (testdata/gpu/probes/harness.py --all)
#   probes.log          every probe's output
#   gpu_fix_proof.json  bench/gpu_fix_proof.py --json
#   gpu_fix_proof.txt   its report
#   env.txt             GPU, driver, torch, triton, commit, date
# Then, here: copy verdicts.json to testdata/gpu/probes/, gpu_fix_proof.{json,txt} to
# testdata/gpu/fix/, and run `go test ./guard -run TestProbeTruth -update` (TRUTH.md, the rules' docs).
set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/capguard-gpu}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
COMMIT=${CAPGUARD_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  "$PY" -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)' 2>&1
  echo "commit $COMMIT"
  date -u +%Y-%m-%dT%H:%M:%SZ
} > "$OUT/env.txt"
cat "$OUT/env.txt"

start=$(date +%s)
timeout 300 "$PY" testdata/gpu/probes/harness.py --all testdata/gpu/probes --jobs 4 \
  --out "$OUT/verdicts.json" --log "$OUT/probes.log"
probes=$?
echo "probes: exit $probes, $(( $(date +%s) - start )) s"

# Say in the verdicts how they were made.
"$PY" - "$OUT/verdicts.json" "$COMMIT" <<'PY'
import json, sys, time
path, commit = sys.argv[1], sys.argv[2]
try:
    doc = json.load(open(path))
except Exception as e:
    sys.exit("no verdicts: %s" % e)
doc["command"] = "bash testdata/gpu/probes/run.sh"
doc["commit"] = commit
doc["date"] = time.strftime("%Y-%m-%d", time.gmtime())
json.dump(doc, open(path, "w"), indent=1, sort_keys=True)
open(path, "a").write("\n")
for p in doc["probes"]:
    print("%-42s %-6s %-9s %s" % (p["probe"], p["rule"], p["role"], p["verdict"]))
PY

start=$(date +%s)
timeout 180 "$PY" bench/gpu_fix_proof.py --json "$OUT/gpu_fix_proof.json" > "$OUT/gpu_fix_proof.txt" 2>&1
proof=$?
tail -5 "$OUT/gpu_fix_proof.txt"
echo "fix proof: exit $proof, $(( $(date +%s) - start )) s"
exit $(( probes != 0 || proof != 0 ))
