#!/usr/bin/env bash
# CI check that the cuda build keeps compiling without a GPU: fetch the CUDA
# driver headers (scripts/cuda-env.sh; CUDA_HOME is honoured too), vet the cuda-tagged packages,
# build the cuda capguard and compile (not run) the cuda test binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/cuda-env.sh
pkgs=$(go list -tags cuda ./runtime/... ./cli/...)
echo "vet -tags cuda:" $pkgs
go vet -tags cuda $pkgs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags cuda -o "$tmp/capguard-cuda" ./cli/capguard
go test -c -tags cuda -o "$tmp/" ./runtime/ ./runtime/cuda
ls "$tmp"
echo "cuda build OK (compiled, not run: no GPU here)"
