"""CG102 positive: a `torch.library.triton_op` takes a CPU mirror, reads a host value from it and
launches its Triton kernel through `torch.library.wrap_triton(kernel)[grid](...)` with the value as
a launch argument.

Calling the op runs its body (the dispatcher calls the decorated function), so capture records the
launch with the value it had then, and every replay reuses it while the mirror changes.
GPU expectation: stale-read (the op's kernel is captured: the replay runs it).
"""
# probe: CG102 positive
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def _scale_kernel(x_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


@triton_op("capguard_probe::scale_rows", mutates_args={})
def scale_rows(x: torch.Tensor, scale_cpu: torch.Tensor) -> torch.Tensor:
    s = float(scale_cpu[0])
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(_scale_kernel)[(triton.cdiv(n, 1024),)](x, out, s, n, BLOCK=1024)  # want: CG102
    return out


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
    return scale_rows(st.x, st.scale_cpu)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
