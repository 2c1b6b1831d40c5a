"""Eager preprocessing: converts on the host side of the server, never under capture."""
import torch
import triton
import triton.language as tl


@triton.jit
def _pack_kernel(src_ptr, dst_ptr, n):
    i = tl.program_id(0)
    tl.store(dst_ptr + i, tl.load(src_ptr + i))


def pack(tokens):
    src = tokens.to(torch.int32)
    dst = torch.empty_like(src)
    _pack_kernel[(src.numel(),)](src, dst, src.numel())
    return dst


def prepare_batch(requests):
    ids = torch.tensor([r.token for r in requests], device="cuda")
    return pack(ids), ids[ids > 0]
