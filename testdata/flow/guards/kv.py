"""Capture guards: code under `if torch.cuda.is_current_stream_capturing():` runs only while a
stream captures, so it is captured even in a function only eager code calls; code under the
negation, and the else branch, never runs under capture, even in a captured function."""
import torch
from torch.cuda import is_current_stream_capturing


def record_graph_stats(x):  # context: captured
    return x.abs().max().item()  # want: CG101


def fast_path(q):  # context: captured
    return q * q.max().item()  # want: CG101


def validate(q):  # context: eager
    if q.isnan().any().item():
        raise FloatingPointError("nan q")


def write_kv(cache, x):  # context: eager
    if torch.cuda.is_current_stream_capturing():
        record_graph_stats(x)
        if x.isinf().any().item():  # want: CG101
            raise FloatingPointError("inf in kv")
    cache.copy_(x)


def attention(q, cache):  # context: captured
    if not torch.cuda.is_current_stream_capturing():
        validate(q)
        if q.isinf().any().item():
            raise FloatingPointError("inf q")
    if is_current_stream_capturing():
        q = fast_path(q)
    else:
        validate(q)
    return q @ cache.t()


class Runner:
    def __init__(self, cache):
        self.cache = cache
        self.graph = torch.cuda.CUDAGraph()

    def prefill(self, x):  # context: eager
        write_kv(self.cache, x)

    def capture(self, q):
        with torch.cuda.graph(self.graph):
            self.out = attention(q, self.cache)
