"""Objects of torch classes are no tensors: a version compared with a string, an optimizer tested
for truth, a distribution's parameters. None of them reads the device, so a function that captures
them (a kernel library's launcher, here) has no host sync; a tensor type (`torch.LongTensor`) still
makes a tensor, from host data, on the host."""
import torch
import triton
import triton.language as tl
from torch.torch_version import TorchVersion


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) * 2, mask=m)


def scale(x, params=None):  # context: launcher
    block = 512 if TorchVersion(torch.__version__) >= "2.11" else 256
    if torch.torch_version.TorchVersion(torch.__version__) < (2, 9):
        block = 128
    opt = torch.optim.SGD(params, lr=0.1) if params else None
    if opt:
        opt.zero_grad()
    out = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out


def scale_checked(x):  # context: launcher
    flags = torch.LongTensor([0]).to(x.device)  # want: CG103~
    if flags.any():  # want: CG101~
        x = x.clone()
    return scale(x)


def _at_least(version):  # context: eager
    """Private and launching nothing: no launcher root."""
    return TorchVersion(torch.__version__) >= version
