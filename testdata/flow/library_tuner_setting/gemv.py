import torch
import triton
import triton.language as tl

from tuning import TUNING


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})],
    key=["n"],
    warmup=TUNING.WARMUP,
    use_cuda_graph=TUNING.USE_CUDA_GRAPH,
)
@triton.jit
def _gemv_kernel(w_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    acc = tl.sum(tl.load(w_ptr + row * n + cols, mask=m) * tl.load(x_ptr + cols, mask=m), axis=0)
    tl.store(out_ptr + row, acc)


def gemv(w, x):  # context: launcher
    out = torch.empty(w.shape[0], device=w.device, dtype=w.dtype)
    if x.isnan().any().item():  # want: CG101~
        x = torch.nan_to_num(x)
    _gemv_kernel[(w.shape[0],)](w, x, out, x.numel())
    return out
