"""A model builder that compiles with torch.compile in the mode its parameter's default names
(`compile_mode="max-autotune"`, a mode that captures CUDA graphs): the project captures through
torch.compile whenever a caller keeps the default, so it is no library, and its kernel launchers
are not launcher roots."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) * s, mask=m)


def scale(x):  # context: eager
    s = x.abs().max().item()
    out = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, s, x.numel(), BLOCK=256)
    return out


class Encoder(torch.nn.Module):
    def forward(self, x):  # context: eager
        return scale(x)


def build_fast(compile_mode="max-autotune"):  # context: eager
    model = Encoder()
    model.forward = torch.compile(model.forward, mode=compile_mode)
    return model


def scale_into(x, out):  # context: claimed
    # graph-safe: no host reads, writes the caller's buffer
    _scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, 1.0, x.numel(), BLOCK=256)
    return out
