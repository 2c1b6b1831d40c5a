"""A CPU stand-in for a graph-captured engine, for the tracer's tests: CPU
torch (no CUDA) with a stand-in graph class whose capture_begin /
capture_end / replay do nothing, run with CAPGUARD_TRACE_DEVICE_TYPES=cpu
so that the tracer treats CPU tensors as device tensors.

Planted, each on a line the test looks for by its marker comment:
  a rebind in replay-prep            (PLANT-REBIND)
  an external input freed            (PLANT-FREED, allocated at PLANT-FREED-ALLOC)
  a host sync (.item()) in capture   (PLANT-SYNC)
  an in-place write in replay-prep   (PLANT-PREP)
"""

import sys

import torch


class StandInGraph(object):
    """The CUDAGraph protocol, doing nothing."""

    def capture_begin(self, pool=None, capture_error_mode="global"):
        pass

    def capture_end(self):
        pass

    def replay(self):
        pass

    def pool(self):
        return (1, 0)


def _hook():
    t = sys.modules.get("capguard_tracer")
    if t is not None and t.tracer() is not None:
        t.tracer().hook_graph_class(StandInGraph, "cuda")


class Backend(object):
    def __init__(self, n):
        self.block_table = torch.zeros(n, dtype=torch.int32)
        self.lens = torch.zeros(n, dtype=torch.int64)

    def prepare_replay(self, step):
        self.lens.copy_(torch.full_like(self.lens, step))  # PLANT-PREP
        if step == 2:
            self.block_table = torch.arange(self.block_table.numel(), dtype=torch.int32)  # PLANT-REBIND

    def forward(self, x, scale):
        y = x * self.block_table.to(torch.float32)
        return combine(y, self.lens, scale)


def combine(y, lens, scale):
    inner = lambda a: a + 1  # noqa: E731
    return inner(y * scale + lens.to(torch.float32))


class Runner(object):
    def __init__(self, backend, step_fn):
        self.backend = backend
        self.step_fn = step_fn
        self.graphs = {}

    def capture(self, n, sync):
        x = torch.ones(n)
        scale = torch.full((n,), 2.0)  # PLANT-FREED-ALLOC
        g = StandInGraph()
        g.capture_begin()
        out = self.step_fn(x, scale)
        if sync:
            float(out.sum().item())  # PLANT-SYNC
        g.capture_end()
        self.graphs[n] = (g, x, out)
        del scale  # PLANT-FREED

    def serve(self, n, steps):
        g = self.graphs[n][0]
        for step in range(steps):
            self.backend.prepare_replay(step)
            g.replay()


def main():
    _hook()
    backend = Backend(4)
    runner = Runner(backend, backend.forward)
    runner.capture(4, sync="--sync" in sys.argv)
    runner.serve(4, 4)
    print("cpu engine done")


if __name__ == "__main__":
    main()
