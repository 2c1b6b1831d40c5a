"""A module's `__all__` declares its public API whatever the names' spelling: an op library that
mirrors torch's underscored ops (`_masked_fill_impl`, as torch's `_index_put_impl_`) exports them
there, and a caller may capture them like any public launcher. A leading underscore still keeps a
launcher that `__all__` does not name out of the API."""
import torch
import triton
import triton.language as tl

__all__ = ["_masked_fill_impl", "masked_fill_rows"]


@triton.jit
def _fill_kernel(out_ptr, mask_ptr, value, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    m = tl.load(mask_ptr + offs, mask=keep, other=0)
    tl.store(out_ptr + offs, value, mask=keep & (m != 0))


def _masked_fill_impl(out, mask, value):  # context: launcher
    if value.numel() == 1:
        value = value.item()  # want: CG101~
    n = out.numel()
    _fill_kernel[(triton.cdiv(n, 1024),)](out, mask, value, n, BLOCK=1024)  # want: CG102~
    return out


def masked_fill_rows(out, mask, value: float):  # context: launcher
    n = out.numel()
    _fill_kernel[(triton.cdiv(n, 1024),)](out, mask, value, n, BLOCK=1024)
    return out


def _masked_fill_debug(out, mask, value):  # context: eager
    v = float(value.sum().item())
    n = out.numel()
    _fill_kernel[(triton.cdiv(n, 1024),)](out, mask, v, n, BLOCK=1024)
    return out


def masked_fill_traced(out, mask, value):  # context: launcher
    """Launched through `torch.library.wrap_triton`, as a `triton_op` body launches (traceable by
    torch.compile): the same kernel launch."""
    v = value.item()  # want: CG101~
    n = out.numel()
    torch.library.wrap_triton(_fill_kernel)[(triton.cdiv(n, 1024),)](out, mask, v, n, BLOCK=1024)  # want: CG102~
    return out
