"""A capture_begin()..capture_end() span on a CUDAGraph: what it calls is captured, what runs
after capture_end is not."""
import torch


def span_step(x):  # context: captured
    return x * x.max().item()  # want: CG101


def after_span(out):  # context: eager
    print(out.sum().item())


def capture_span(x):
    g = torch.cuda.CUDAGraph()
    g.capture_begin()
    out = span_step(x)
    g.capture_end()
    after_span(out)
    return g, out
