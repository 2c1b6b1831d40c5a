"""The ops torch 2.x shows a dispatch mode for a host read, on CPU torch 1.x,
for the tracer's tests: torch 2.x (the GPU run: torch 2.11) hands the mode
`aten.item.default` for .item() / int() / float() and `aten.is_nonzero` for
bool(), and never the `_local_scalar_dense` inside them, which is all that
torch 1.x shows. This script runs the tracer's capture mode on those op
names directly (a stand-in graph; CAPGUARD_TRACE_DEVICE_TYPES=meta, so CPU
tensors are host tensors) and prints the findings as JSON."""

import json
import sys

import torch

import capguard_tracer


class StandInGraph(object):
    def capture_begin(self, pool=None, capture_error_mode="global"):
        pass

    def capture_end(self):
        pass

    def replay(self):
        pass

    def pool(self):
        return (1, 0)


class Op(object):
    """An OpOverload as torch 2.x passes it: printed as `name`, running `impl`."""

    def __init__(self, name, impl):
        self.name, self.impl = name, impl

    def __str__(self):
        return self.name

    def __call__(self, *args, **kwargs):
        return self.impl(*args, **kwargs)


def main():
    t = capguard_tracer.tracer()
    t.hook_graph_class(StandInGraph, "cuda")
    lens = torch.tensor([5, 7], dtype=torch.int32)
    top, first = int(lens.max()), bool(lens[0])
    g = StandInGraph()
    g.capture_begin()
    mode = t._mode
    # (the dispatcher would run the op with the mode off; here: the values read before the capture)
    mode.__torch_dispatch__(Op("aten.item.default", lambda x: top), (), (lens,), {})  # ITEM-OP
    mode.__torch_dispatch__(Op("aten.is_nonzero.default", lambda x: first), (), (lens,), {})  # NONZERO-OP
    g.capture_end()
    t.write()
    json.dump({"findings": [{k: f.get(k) for k in ("rule", "kind", "line", "values", "op")} for f in t.findings],
               "errors": t.errors}, sys.stdout)


if __name__ == "__main__":
    main()
