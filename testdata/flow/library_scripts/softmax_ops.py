"""Library mode with scripts beside the library: a public launcher is a root a caller may capture;
a script's `main`, and what only its `if __name__ == "__main__":` block calls, are a program, not
an API (their host reads are no finding); files under a folder whose name ends with "benchmarks"
are benchmarks."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax_rows(x):  # context: launcher
    if x.shape[1] > 4096 and x.abs().max().item() > 1e4:  # want: CG101~
        x = x / 16
    out = torch.empty_like(x)
    _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def _report(x):  # context: eager
    out = softmax_rows(x)
    print("max", out.max().item())


if __name__ == "__main__":
    _report(torch.randn(4, 64, device="cuda"))
