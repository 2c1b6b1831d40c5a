"""CG102 positive: a host value read from a CPU mirror is passed to an op of a CUDA extension the
project compiles itself (`torch.utils.cpp_extension.load_inline` with CUDA sources).

The op launches its kernel with the scalar as a launch argument: capture records the launch with
the value it had then, and every replay reuses it while the mirror changes with the batch.
GPU expectation: stale-read (and the op's kernel is captured: the replay runs it).
"""
# probe: CG102 positive
import os

import torch
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor scale_rows(torch::Tensor x, double s);"
_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void scale_rows_kernel(const float* x, float* out, float s, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * s;
}
torch::Tensor scale_rows(torch::Tensor x, double s) {
    auto out = torch::empty_like(x);
    int64_t n = x.numel();
    scale_rows_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), (float)s, n);
    return out;
}
"""
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
_ext = load_inline(name="capguard_probe_scale_rows", cpp_sources=[_CPP], cuda_sources=[_CUDA], functions=["scale_rows"])


class State:
    pass


def build(B, dev):
    st = State()
    st.scale_cpu = torch.ones(1)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.scale_cpu.copy_(torch.rand(1, generator=gen) + 0.5)
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    s = float(st.scale_cpu[0])
    return _ext.scale_rows(st.x, s)  # want: CG102


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
