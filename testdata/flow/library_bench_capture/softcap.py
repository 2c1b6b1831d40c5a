"""A kernel library whose only capture is a timing helper: bench_graph captures the callable
it is given to time its replays. That times runs; it is not the library capturing its own
code, so the library stays in library mode and its public launchers are launcher roots."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softcap_kernel(x_ptr, out_ptr, cap, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) / cap, mask=m)


def softcap(x, cap):  # context: launcher
    if x.abs().max().item() == 0:  # want: CG101~
        return x
    out = torch.empty_like(x)
    _softcap_kernel[(triton.cdiv(x.numel(), 256),)](x, out, cap, x.numel(), BLOCK=256)
    return out


def bench_graph(fn, reps=10):  # context: eager
    fn()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        g.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps



@triton.jit
def _clip_kernel(x_ptr, out_ptr, lo, hi, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.minimum(tl.maximum(tl.load(x_ptr + i, mask=m), lo), hi), mask=m)


def clip(x, lo, hi):  # context: captured launcher
    out = torch.empty_like(x)
    _clip_kernel[(triton.cdiv(x.numel(), 256),)](x, out, lo, hi, x.numel(), BLOCK=256)
    return out


def bench_clip(x, reps=10):  # context: eager
    """Public and reaching a launch, but it runs a capture of its own: a capture cannot nest, so no
    caller captures it and it is no launcher root."""
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        clip(x, -1.0, 1.0)
    for _ in range(reps):
        g.replay()
    torch.cuda.synchronize()


def profile_softcap(x, reps=10):  # context: eager
    """Public and reaching a launch, but it profiles (its name says so, as for a benchmarking
    function's capture): it times runs of the op, and no caller captures it."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        softcap(x, 30.0)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps
