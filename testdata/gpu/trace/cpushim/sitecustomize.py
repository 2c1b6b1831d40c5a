"""CPU=1 bash run.sh: check run.sh, compare.py and the summary without a GPU.

On PYTHONPATH (after capguard trace's own sitecustomize, which chains to
this one) it replaces the torch.cuda calls the mini engine makes with CPU
stand-ins: a graph whose capture_begin/capture_end do nothing and whose
replay is a no-op, streams that are null contexts, synchronize a no-op.
run.sh then runs the engine with --device cpu --attention torch and the
tracer with CAPGUARD_TRACE_DEVICE_TYPES=cpu. Nothing here is evidence about
CUDA graphs; the Triton plants (sync, baked, baked-pre) cannot show."""

import sys

import torch

_CAPTURING = []


class StandInGraph(object):
    def capture_begin(self, pool=None, capture_error_mode="global"):
        _CAPTURING.append(self)

    def capture_end(self):
        _CAPTURING.remove(self)

    def replay(self):
        pass

    def pool(self):
        return (1, 0)


class _Null(object):
    def __init__(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def wait_stream(self, other):
        pass


class graph(object):
    def __init__(self, g, pool=None, stream=None):
        self.g = g

    def __enter__(self):
        self.g.capture_begin()

    def __exit__(self, *a):
        self.g.capture_end()
        return False


c = torch.cuda
c.CUDAGraph = StandInGraph
c.graph = graph
c.Stream = _Null
c.stream = lambda s=None: _Null()
c.current_stream = lambda *a: _Null()
c.synchronize = lambda *a: None
c.is_current_stream_capturing = lambda: bool(_CAPTURING)
_t = sys.modules.get("capguard_tracer")
if _t is not None and _t.tracer() is not None:
    _t.tracer().hook_graph_class(StandInGraph, "cuda")
    _t.tracer()._hook_sync(c, "torch.cuda")
