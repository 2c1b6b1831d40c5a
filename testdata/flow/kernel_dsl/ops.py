"""Library mode with kernel DSLs other than Triton: a CuTe DSL kernel launched through its
`@cute.jit` host function, a TileLang kernel builder (`@tilelang.jit`) whose `T.prim_func`
body is device code, and a kernel compiled once with `cute.compile` and called from a dict.
The DSL bodies are the compiler's (nothing in them runs as Python under capture); the public
functions that launch them run wherever their callers put them, so they are launchers."""
import cutlass
import cutlass.cute as cute
import tilelang
import tilelang.language as T
import torch


@cute.kernel
def _scale_kernel(mX, mOut, factor):
    tidx, _, _ = cute.arch.thread_idx()
    if mX[tidx] > 0:
        mOut[tidx] = mX[tidx] * factor


@cute.jit
def _scale_launch(mX, mOut, factor, n: cutlass.Int32):
    _scale_kernel(mX, mOut, factor).launch(grid=[n, 1, 1], block=[128, 1, 1])


def scale(x, factor):  # context: launcher
    n = int(x.abs().max().item())  # want: CG101~
    out = torch.empty_like(x)
    _scale_launch(x, out, factor, n)  # want: CG102~
    return out


@tilelang.jit(out_idx=[1])
def _row_sum(M, N, block=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            acc = T.alloc_fragment((block,), "float32")
            T.reduce_sum(A[bx * block, 0], acc, dim=1)
            T.copy(acc, B[bx * block])

    return main


def row_sum(x):  # context: launcher
    if x.numel() == 0 or bool(x.isnan().any()):  # want: CG101~
        raise ValueError("empty or nan input")
    kernel = _row_sum(x.shape[0], x.shape[1])
    return kernel(x)


_COMPILED = {}


def scale_compiled(x, factor):  # context: launcher
    key = (x.dtype, x.shape[0])
    if key not in _COMPILED:
        _COMPILED[key] = cute.compile(_scale_launch, x, x, factor, x.shape[0])
    out = torch.empty_like(x)
    _COMPILED[key](x, out, factor)
    return out, out.sum().item()  # want: CG101~


def describe(x):  # context: eager
    return f"{x.shape} {x.abs().max().item()}"


class RowScaler:
    """A CuTe DSL op object: its `__call__` is the DSL's host function, traced once per
    signature; nothing in it runs as Python where the op is called."""

    def __init__(self, factor):  # context: launcher
        self.factor = factor

    @cute.jit
    def __call__(self, mX, mOut, n: cutlass.Int32):
        if n > 0:
            _scale_kernel(mX, mOut, self.factor).launch(grid=[n, 1, 1], block=[128, 1, 1])


def scale_rows(x, factor):  # context: launcher
    out = torch.empty_like(x)
    RowScaler(factor)(x, out, x.shape[0])
    return out
