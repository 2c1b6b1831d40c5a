// Kernels of the capguard runtime self-test, modelled on the motivating bf16
// index reader at driver level: the reader's page table arrives as int64 (as a
// torch index tensor does) and is converted to int32 before a gather of bf16
// keys. Whether the int32 copy is a temporary made inside the capture, a
// temporary made before it, or a persistent buffer refreshed inside it decides
// whether the captured graph is safe.
//
// The PTX beside this file is what the self-test loads. It was made with
//   nvcc -ptx -arch=sm_90 -o selftest.ptx selftest.cu
// (see README.md here); no header is needed.

// cvt_i64_i32: dst[i] = (int32)src[i], the `.to(torch.int32)` of the reader.
extern "C" __global__ void cvt_i64_i32(const long long* __restrict__ src,
                                       int* __restrict__ dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = (int)src[i];
}

// gather_bf16: out[i] = float(keys[idx[i] & mask]), the reader's gather of
// bf16 index keys through the int32 page table. keys holds mask+1 bf16 values
// (mask+1 a power of two). The mask keeps a stale or poisoned index inside the
// key pool, so a stale read shows as wrong values rather than an illegal
// address (which the checker would report as a fault).
extern "C" __global__ void gather_bf16(const int* __restrict__ idx,
                                       const unsigned short* __restrict__ keys,
                                       float* __restrict__ out, int n, int mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned int k = keys[idx[i] & mask];       // bf16 bits
    out[i] = __uint_as_float(k << 16);          // bf16 -> fp32 is exact
  }
}
