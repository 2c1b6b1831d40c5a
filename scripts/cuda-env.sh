# Sourced by build-cuda.sh and vet-cuda.sh: points cgo at the CUDA driver
# headers and link stub, from CUDA_HOME (CUDA_HOME/include/cuda.h,
# CUDA_HOME/lib64/stubs) or else from the Debian package that
# scripts/fetch-cuda-headers.sh unpacks into .cache/cuda/. Sets $cuda_inc.
if [ -n "${CUDA_HOME:-}" ]; then
  cuda_inc="$CUDA_HOME/include" cuda_stubs="$CUDA_HOME/lib64/stubs"
else
  cuda_root=$(bash scripts/fetch-cuda-headers.sh | tail -1)
  cuda_inc="$cuda_root/usr/include" cuda_stubs="$cuda_root/usr/lib/x86_64-linux-gnu/stubs"
fi
export CGO_ENABLED=1
export CGO_CFLAGS="-I$cuda_inc ${CGO_CFLAGS:-}"
export CGO_LDFLAGS="-L$cuda_stubs ${CGO_LDFLAGS:-}"
