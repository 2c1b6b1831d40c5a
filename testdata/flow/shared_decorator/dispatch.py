"""An API decorator of the shape kernel libraries log and trace with: the wrapper calls the
function through a local alias, after optional tracing. A captured call through a registry
lookup (`KERNELS[name](...)`) names no function, so the wrapper may run any function it was
given: which one is a guess, and the host reads in them are warnings that say so (debug_stats,
never registered under the name the capture looks up, is among them: a guess is not a proof). A
call that names its function (`fused_rope(...)`) reaches only that one, an error where it reads
the host."""
import functools
import os

import torch

KERNELS = {}


def traced_api(fn):  # context: eager
    _inner = fn
    _trace = os.environ.get("TRACE_API")

    @functools.wraps(_inner)
    def _api_wrapper(*args, **kwargs):  # context: captured
        if _trace:
            try:
                print(_inner.__name__, [getattr(a, "shape", a) for a in args])
            except Exception:
                pass
        return _inner(*args, **kwargs)

    KERNELS[fn.__name__] = _api_wrapper
    return _api_wrapper


@traced_api
def fused_rope(q, positions):  # context: captured
    if positions.max().item() > 65536:  # want: CG101
        raise ValueError("position beyond the rope table")
    return q


@traced_api
def gather_pages(k, block_table):  # context: captured resolution: name
    n = int(block_table.ne(-1).sum().item())  # want: CG101~
    return k[:n]  # want: CG102~


@traced_api
def debug_stats(x):  # context: captured resolution: name
    print(x.float().mean().item())  # want: CG101~
    return x


class RopeGraph:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q, positions):
        with torch.cuda.graph(self.graph):
            self.out = fused_rope(q, positions)


class PagesGraph:
    def __init__(self, kernel):
        self.graph = torch.cuda.CUDAGraph()
        self.kernel = kernel

    def capture(self, k, block_table):
        gather = KERNELS[self.kernel]
        with torch.cuda.graph(self.graph):
            self.out = gather(k, block_table)


def serve(q, k, positions, block_table):  # context: eager
    debug_stats(q)
    RopeGraph().capture(q, positions)
    PagesGraph("gather_pages").capture(k, block_table)
