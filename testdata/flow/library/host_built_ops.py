"""Library mode, reductions of host-built tensors: `torch.prod(torch.tensor(shape))` reduces a tensor
this code builds on the host from Python numbers, so `int()` of it reads those numbers back, not
device data: no sync, and nothing is baked that the numbers did not already fix (a shape, an
argument). The function form of a reduction (`torch.prod(t)`, `torch.sum(t)`) reduces its first
argument, as the method form (`t.prod()`) reduces its receiver. A reduction of a device tensor is
still a host read, and a host-built tensor of a host value read at capture still carries it."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rows_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def flatten_leading(x: torch.Tensor):  # context: launcher
    batch = x.shape[:-2]
    rows = int(torch.prod(torch.tensor(batch)))
    out = torch.empty((rows * x.shape[-2], x.shape[-1]), device=x.device)
    _rows_kernel[(rows,)](x, out, rows, BLOCK=128)
    return out


def flatten_named(x: torch.Tensor, dims):  # context: launcher
    total = int(torch.prod(torch.tensor(dims)))
    out = torch.empty((total,), device=x.device)
    _rows_kernel[(triton.cdiv(total, 128),)](x, out, total, BLOCK=128)
    return out


def count_selected(x: torch.Tensor, mask: torch.Tensor):  # context: launcher
    n = int(torch.sum(mask))  # want: CG101~
    out = torch.empty((n,), device=x.device)  # want: CG102~
    _rows_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)  # want: CG102~
    return out


def rows_from_lengths(x: torch.Tensor, lengths: torch.Tensor):  # context: launcher
    lens = lengths.tolist()  # want: CG101~
    total = int(torch.sum(torch.tensor(lens)))  # want: CG102~
    out = torch.empty((total,), device=x.device)  # want: CG102~
    _rows_kernel[(triton.cdiv(total, 128),)](x, out, total, BLOCK=128)  # want: CG102~
    return out
