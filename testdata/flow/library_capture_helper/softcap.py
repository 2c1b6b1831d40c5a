"""Negative of library_bench_capture: the same library with a capture helper that is not a
benchmark (it returns the graph to replay in serving). The project captures of its own, so it
is no library: softcap is not a launcher root; serve_step captures it through the helper, and
there it is checked as captured code."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softcap_kernel(x_ptr, out_ptr, cap, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) / cap, mask=m)


def softcap(x, cap):  # context: captured
    if x.abs().max().item() == 0:  # want: CG101
        return x
    out = torch.empty_like(x)
    _softcap_kernel[(triton.cdiv(x.numel(), 256),)](x, out, cap, x.numel(), BLOCK=256)
    return out


def graph_step(fn):  # context: eager
    fn()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def serve_step(x):  # context: eager
    return graph_step(lambda: softcap(x, 30.0))
