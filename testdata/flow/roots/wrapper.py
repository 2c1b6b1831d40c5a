"""A project function that wraps a capture: the callable its call site passes as fn is called
inside the capture, so it is captured; on_done is called after the capture ends, so it is not."""
import torch


def capture_graph(fn, *args, on_done=None):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn(*args)
    if on_done is not None:
        on_done(out)
    return g, out


def decode_step(x):  # context: captured
    return x * x.max().item()  # want: CG101


def report(out):  # context: eager
    print(out.sum().item())


def build(x):  # context: eager
    return capture_graph(decode_step, x, on_done=report)
