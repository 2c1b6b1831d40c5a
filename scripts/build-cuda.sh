#!/usr/bin/env bash
# Build capguard with the cuda backend (build tag cuda) against the CUDA driver
# headers and link stub that scripts/fetch-cuda-headers.sh puts in .cache/cuda/.
#
#   bash scripts/build-cuda.sh [OUTPUT]     # default output: ./capguard-cuda
#
# The binary links libcuda.so.1 and needs the NVIDIA driver where it runs; it
# exits with status 2 and a message where there is none. Set CUDA_HOME to use an
# installed toolkit instead (CUDA_HOME/include/cuda.h, CUDA_HOME/lib64/stubs).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-capguard-cuda}
. scripts/cuda-env.sh
go build -tags cuda -o "$out" ./cli/capguard
echo "built $out (cuda backend; headers from $cuda_inc)"
