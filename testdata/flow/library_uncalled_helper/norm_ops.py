"""An op library that ships a capture helper for the engines that capture its ops, and calls it
nowhere itself (the helpers only call each other): the helper's name is no evidence that the
library captures, so its public ops are launcher roots (library mode)."""
import contextlib

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_kernel(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * eps, mask=mask)


def rms_norm(x, eps=1e-6):  # context: launcher
    if x.abs().max().item() == 0:  # want: CG101~
        return x
    out = torch.empty_like(x)
    _rms_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), eps, BLOCK=1024)
    return out


class Group:
    """A communicator group whose capture context the engine enters around its captures."""

    def __init__(self):  # context: eager
        self.stream = None

    @contextlib.contextmanager
    def graph_capture(self):  # context: eager
        self.stream = torch.cuda.Stream()
        with torch.cuda.stream(self.stream):
            yield self.stream


_GROUP = Group()


@contextlib.contextmanager
def graph_capture():  # context: eager
    with _GROUP.graph_capture() as stream:
        yield stream
