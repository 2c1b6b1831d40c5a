"""A decorator whose wrapper captures what it wraps: the capture region around the wrapper's
call of its function captures every function decorated with it (each decoration site's call
runs its own, but the region is in the one wrapper)."""
import functools

import torch


def graphed(fn):  # context: eager
    @functools.wraps(fn)
    def wrapper(*args):  # context: eager
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = fn(*args)
        return graph, out

    return wrapper


@graphed
def decode_step(x, out):  # context: captured
    if x.sum().item() > 0:  # want: CG101
        out.copy_(x)
    return out


@graphed
def verify_step(x, out):  # context: captured
    out.copy_(x * float(x.max()))  # want: CG101
    return out


def plain_step(x):  # context: eager
    return x.sum().item()
