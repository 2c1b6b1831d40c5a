"""Which binding a rule reads: the one that reaches the read. A kernel argument bound in the other arm
of the same `if` is not the argument the launch gets, so a raw allocation there (memory outside the
graph's pool) says nothing about a launch in this arm; one in the launch's own arm does. `step` is
captured with `external` False, so only its `else` arm runs under capture, and the launch there gets
the persistent buffer; `step_any` is captured with a flag the capture does not fix, so its raw
allocation reaches the launch beside it under that condition."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(buf_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(buf_ptr + offs, tl.load(buf_ptr + offs, mask=offs < n) * 2, mask=offs < n)


class Scaler:
    def __init__(self, n):  # context: eager
        self.n = n
        self.buf = torch.zeros(n, device="cuda")

    def step(self, external):  # context: captured
        ptr = self.buf
        if external:
            ptr = torch.cuda.caching_allocator_alloc(self.n * 4)
            _scale_kernel[(1,)](ptr, self.n, BLOCK=1024)
        else:
            _scale_kernel[(1,)](ptr, self.n, BLOCK=1024)
        return self.buf

    def step_any(self, external):  # context: captured
        ptr = self.buf
        if external:
            ptr = torch.cuda.caching_allocator_alloc(self.n * 4)  # want: CG301?
            _scale_kernel[(1,)](ptr, self.n, BLOCK=1024)
        else:
            _scale_kernel[(1,)](ptr, self.n, BLOCK=1024)
        return self.buf


def capture(s: Scaler, flag):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = s.step(False)
        out = s.step_any(flag)
    return g, out
