"""The dispatch-state test on real torch (CPU tensors, a stand-in graph
class the test hooks, CAPGUARD_TRACE_DEVICE_TYPES=cpu): graphs captured
outside any inference-mode region, decode steps under torch.inference_mode()
(which saves and restores the thread's dispatch keys) that replay them, and a
factory call without a tensor argument after every step, past the tracer's
unhook. The tracer of c611929 left the Python dispatch key set there and the
factory call died with "Hit Python dispatch key but no arguments had
PyInterpreter". Prints the steps' outputs and the dispatch state at the end.
The prep copies a prefix of the buffer the graphs read (PREP-COPY, a stale
tail after a longer copy) and both captures bind one attribute (STORED),
read after every replay (READ-STORED): the runtime CG203 and CG201 on real
torch."""

import os
import sys

import torch


class State(object):
    pass


class StandInGraph(object):
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


def main():
    _hook()
    buf = torch.zeros(4)
    graphs = []
    state = State()
    for bs in (4, 2):
        g = StandInGraph()
        g.capture_begin()
        out = buf[:bs] * 2 + 1
        state.last = out + 0  # STORED (one slot, bound by both captures)
        g.capture_end()
        graphs.append((g, out))
    res = []
    for i in range(12):
        with torch.inference_mode():
            g, out = graphs[i % 2]
            buf[: 2 + i % 3].copy_(torch.arange(2 + i % 3, dtype=torch.float32))  # PREP-COPY (no tail reset)
            g.replay()
            res.append(float(out.sum()))
            res.append(float(state.last.sum()))  # READ-STORED
        res.append(torch.full((2,), 7).tolist())  # a factory call without a tensor argument
    C = torch._C
    print("outputs", res)
    inc = getattr(C, "_dispatch_tls_is_dispatch_key_included", None)  # (not in torch 1.13)
    state = "state %s %s %s" % (C._len_torch_dispatch_stack(), C._len_torch_function_stack(),
                                inc(C.DispatchKey.Python) if inc is not None else "n/a")
    print(state)
    if os.environ.get("DISPATCH_OUT"):
        with open(os.environ["DISPATCH_OUT"], "w") as f:
            f.write("outputs %s\n%s\n" % (res, state))


if __name__ == "__main__":
    main()
