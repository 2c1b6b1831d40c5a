"""Negative of library_uncalled_helper: the same library, and a runner of its own that enters the
capture helper around the captures an outside graph runner makes. The project captures (by the
helper's name, called from its own code), so it is no library: rms_norm is no launcher root, and
the runner's captures are outside the project's view."""
import contextlib

import torch
import triton
import triton.language as tl

import graphrunner


@triton.jit
def _rms_kernel(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * eps, mask=mask)


def rms_norm(x, eps=1e-6):  # context: eager
    if x.abs().max().item() == 0:
        return x
    out = torch.empty_like(x)
    _rms_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), eps, BLOCK=1024)
    return out


class Group:
    """A communicator group whose capture context the runner enters around its captures."""

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


class Runner:
    def __init__(self, sizes):  # context: eager
        self.sizes = sizes
        self.runner = graphrunner.GraphRunner()

    def warm_up(self):  # context: eager
        with graph_capture():
            for bs in self.sizes:
                self.runner.record(bs)



def scale_rows(x, s):  # context: claimed
    """Scales each row by s; CUDA-graph safe."""
    return x * s
