import torch
import triton
import triton.language as tl


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(out_ptr + i, x * tl.load(cos_ptr + i, mask=m) + x * tl.load(sin_ptr + i, mask=m), mask=m)


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(a_ptr + i, mask=m) + tl.load(b_ptr + i, mask=m), mask=m)


def rope_tuner(configs, use_cuda_graph=False):  # context: eager
    """Times each config (in graphs when use_cuda_graph): its own timing runs, not the library's
    code; a tuner's graph option does not make the library an engine."""
    def wrap(kernel):
        return kernel

    return wrap


def make_tuner(configs, use_cuda_graph=None):  # context: eager
    return rope_tuner(configs, use_cuda_graph=use_cuda_graph)


TUNED = make_tuner([256, 1024], use_cuda_graph=True)


def apply_rope(x, cos, sin, positions):  # context: launcher
    if positions.max().item() >= cos.shape[0]:  # want: CG101~
        raise IndexError("position past the rope table")
    out = torch.empty_like(x)
    _rope_kernel[(triton.cdiv(x.numel(), 1024),)](x, cos, sin, out, x.numel(), BLOCK=1024)
    return out


def fused_add(a, b):  # context: captured launcher
    out = torch.empty_like(a)
    _add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK=1024)
    return out
