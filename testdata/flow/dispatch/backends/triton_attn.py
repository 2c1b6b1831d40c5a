"""A Triton backend: the kernel object's .warmup() and .run() are Triton's, never a project
method of the same name (misc.ModelRunner.warmup / .run)."""
import torch
import triton
import triton.language as tl

from .base import AttnBackend


@triton.jit
def _copy_kernel(q_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(q_ptr + offs, mask=mask), mask=mask)


class TritonBackend(AttnBackend):
    def plan(self, positions):  # context: captured resolution: hierarchy
        if positions.min().item() < 0:  # want: CG101~
            raise ValueError("negative position")

    def attend(self, q):  # context: captured resolution: hierarchy
        out = torch.empty_like(q)
        _copy_kernel.warmup(q, out, q.numel(), BLOCK=1024, grid=(1,))
        _copy_kernel.run(q, out, q.numel(), BLOCK=1024, grid=(1,), warmup=False)
        return out


BACKEND_CLS = TritonBackend
