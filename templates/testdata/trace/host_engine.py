"""Host reads under capture, for the tracer's tests: CPU torch with a
stand-in graph class and a stand-in triton (stubtriton/), run with
CAPGUARD_TRACE_DEVICE_TYPES=meta so that CPU tensors are host tensors.

Graph 0 reads CPU tensor data while it captures, each on a line the test
looks for by its marker: int() (PLANT-INT, passed to the kernel as
max_len), float() (PLANT-FLOAT), bool() (PLANT-BOOL), .item() (PLANT-ITEM),
.tolist() (PLANT-TOLIST), .numpy() (PLANT-NUMPY): each a CG102 finding.
Between graph 0's end and graph 1's capture, the runner reads a value from
tensor data (PLANT-PRE) and hands it to the kernel graph 1 launches: a
CG102 "host-value-arg" finding; a read of 1 handed over the same way
(PLANT-ONE) is not (0 and 1 are too common to link). Each graph replays 5
times: after the first 3 (the default prep-replays) the tracer puts the
original replay back (written to HOST_RECORD)."""

import json
import os
import sys

import torch
import triton


class StandInGraph(object):
    def capture_begin(self, pool=None, capture_error_mode="global"):
        pass

    def capture_end(self):
        pass

    def replay(self):
        pass

    def pool(self):
        return (1, 0)


ORIG_REPLAY = StandInGraph.__dict__["replay"]


@triton.jit
def _kernel(x, max_len, scale, n_one, BLOCK):
    return x[:max_len] * scale + n_one


def _hook():
    t = sys.modules.get("capguard_tracer")
    if t is not None and t.tracer() is not None:
        t.tracer().hook_graph_class(StandInGraph, "cuda")


class Runner(object):
    def __init__(self):
        self.lens = torch.tensor([3, 9, 4], dtype=torch.int32)
        self.scale = torch.tensor([0.5, 0.25])
        self.flag = torch.tensor([True, False])
        self.x = torch.ones(16)
        self.graphs = []

    def capture_reads(self):
        g = StandInGraph()
        g.capture_begin()
        max_len = int(self.lens[:2].max())  # PLANT-INT
        s = float(self.scale.sum())  # PLANT-FLOAT
        on = bool(self.flag[0])  # PLANT-BOOL
        first = self.lens[0].item()  # PLANT-ITEM
        all_lens = self.lens.tolist()  # PLANT-TOLIST
        arr = self.lens.numpy()  # PLANT-NUMPY
        _kernel[(1,)](self.x, max_len, 2.0, 0, BLOCK=16)  # LAUNCH-0
        g.capture_end()
        self.graphs.append(g)
        return max_len, s, on, first, all_lens, int(arr[0])

    def capture_pre(self):
        n = int(self.lens.sum())  # PLANT-PRE
        one = int(self.flag.sum())  # PLANT-ONE
        g = StandInGraph()
        g.capture_begin()
        _kernel[(1,)](self.x, n, 2.0, one, BLOCK=16)  # LAUNCH-1
        g.capture_end()
        self.graphs.append(g)

    def serve(self, n):
        for _ in range(n):
            for g in self.graphs:
                g.replay()


def main():
    _hook()
    r = Runner()
    r.capture_reads()
    r.capture_pre()
    during = StandInGraph.__dict__.get("replay") is not ORIG_REPLAY
    r.serve(5)
    after = StandInGraph.__dict__.get("replay") is ORIG_REPLAY
    out = os.environ.get("HOST_RECORD")
    if out:
        with open(out, "w") as f:
            json.dump({"wrapped_before_replays": during, "original_after": after}, f)
    print("host engine done")


if __name__ == "__main__":
    main()
