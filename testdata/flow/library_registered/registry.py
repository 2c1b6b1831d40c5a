"""Library mode for an op library that registers private functions as ATen implementations through
torch.library: a registered implementation runs wherever the operator runs, under any caller's
capture, whatever its name. One is registered through a Library's impl (from a table a registrar
walks), one with the custom_op decorator; a private launcher registered nowhere stays eager."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


def _launch(x, scale):  # context: launcher
    out = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), scale, BLOCK=1024)
    return out


def _mul_scalar_impl(x, other):  # context: launcher
    scale = torch.tensor(float(other), device=x.device)  # want: CG103~
    return _launch(x, scale)


def _unused_variant(x):  # context: eager
    flag = torch.tensor(1.0, device=x.device)
    return _launch(x, flag)


@torch.library.custom_op("klib::fused_scale", mutates_args=())
def _fused_scale(x: torch.Tensor, s: float) -> torch.Tensor:  # context: launcher
    if x.abs().max().item() > 1e4:  # want: CG101~
        raise OverflowError("input out of range")
    return _launch(x, s)


class Registrar:
    def __init__(self, table, lib):  # context: eager
        self.table = table
        self.lib = lib

    def register_all(self):  # context: eager
        for name, fn in self.table:
            self.lib.impl(name, fn, "CUDA")


def enable():  # context: eager
    lib = torch.library.Library("aten", "IMPL")
    Registrar([("mul.Scalar", _mul_scalar_impl)], lib).register_all()
    return lib
