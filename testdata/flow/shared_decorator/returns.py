"""A decorated function's return is its own, not its siblings': one wrapper decorates a
length helper that reads the device (eager only) and a buffer helper (captured). The
captured step adds the buffer helper's tensor into its output; that is a device tensor,
no host value baked into the graph, though the same wrapper also returns the length
helper's `int(...)`. A call of the length helper under capture is still reported."""
import functools

import torch


def cached_call(fn):  # context: eager
    last = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # context: captured
        key = tuple(id(a) for a in args)
        if key in last:
            return last[key]
        result = fn(*args, **kwargs)
        last.clear()
        last[key] = result
        return result

    return wrapper


@cached_call
def longest_sequence(cu_seqlens):  # context: captured
    return int((cu_seqlens[1:] - cu_seqlens[:-1]).max().item())  # want: CG101


@cached_call
def scratch_like(x):  # context: captured
    return torch.zeros_like(x)


def step(x, out):  # context: captured
    bias = scratch_like(x)
    torch.add(out, bias, out=out)


def step_varlen(x, cu_seqlens, out):  # context: captured
    n = longest_sequence(cu_seqlens)
    torch.add(out, n, out=out)  # want: CG102


class Runner:
    def __init__(self, x, cu_seqlens):
        self.graph = torch.cuda.CUDAGraph()
        self.x = x
        self.cu_seqlens = cu_seqlens
        self.out = torch.empty_like(x)

    def capture(self):
        with torch.cuda.graph(self.graph):
            step(self.x, self.out)
            step_varlen(self.x, self.cu_seqlens, self.out)


def prepare(cu_seqlens):  # context: eager
    return longest_sequence(cu_seqlens)
