"""A library that ships kernels and a capture helper for the step its callers pass, and never
calls the helper itself: what the capture runs is its callers' choice. The library's public
callables that launch kernels and whose parameters the captured call can bind are captured by
assumption (a caller may pass them), so their findings are warnings that name it. A function
the call cannot run (it takes one argument, the call passes two) stays eager, and so does a
helper no public function of the library reaches."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr):
    i = tl.program_id(0)
    tl.store(x_ptr + i, tl.load(x_ptr + i) + tl.load(y_ptr + i))


def capture_pair(step, x, y):  # context: eager
    g = torch.cuda.CUDAGraph()
    fn = step
    with torch.cuda.graph(g):
        out = fn(x, y)
    return g, out


def add_rows(x, y):  # context: captured
    k = y.sum().item()  # want: CG101~
    _add_kernel[(k,)](x, y)  # want: CG102~
    return x


def pack(tokens):  # context: eager
    ids = torch.tensor(tokens, device="cuda")
    _add_kernel[(1,)](ids, ids)
    return ids


class Blend(torch.nn.Module):
    def forward(self, x, w):  # context: captured
        if w.max() > 1:  # want: CG101~
            w = w / w.max()
        _add_kernel[(x.shape[0],)](x, w)
        return x


def _capture_private(step, x):  # context: eager
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step(x)
    return g
