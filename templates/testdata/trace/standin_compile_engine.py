"""torch.compile'd calls under the tracer without Dynamo (any torch with
mode stacks, CPU tensors, a stand-in graph class the test hooks,
CAPGUARD_TRACE_DEVICE_TYPES=cpu): for the tests of machines whose torch has
no torch.compile. compile_engine.py is the same engine on real Dynamo.

A stand-in for Dynamo's compile context (the shape the tracer hooks: a
_TorchDynamoContext whose instances run their enter_exit_hooks around each
compiled call) whose guards are what Dynamo's are made of: the types on the
torch-function mode stack, the dispatch mode stack's depth and the thread's
Python dispatch key, and the input's shape. A call whose state matches no
entry "compiles" a new one. A stand-in for torch.set_default_device's mode,
which must stay at the bottom of the function-mode stack (its exit pops every
mode above it and requires the last to be itself), as torch 2's does.

Writes to COMPILE_OUT (JSON): the outputs, the compiles, the guard states
each compiled call saw, and the dispatch state at the end."""

import json
import os
import sys
import types

import torch
from torch.overrides import TorchFunctionMode

C = torch._C


class StandInGraph(object):
    def capture_begin(self, pool=None, capture_error_mode="global"):
        pass

    def capture_end(self):
        pass

    def replay(self):
        pass

    def pool(self):
        return (1, 0)


def guard_state(x):
    stack = [type(C._get_function_stack_at(i)).__name__ for i in range(C._len_torch_function_stack())]
    inc = getattr(C, "_dispatch_tls_is_dispatch_key_included", None)
    key = bool(inc(C.DispatchKey.Python)) if inc is not None else None
    return (tuple(stack), C._len_torch_dispatch_stack(), key, tuple(x.shape))


class _TorchDynamoContext(object):
    compiles = []
    seen = []

    def __init__(self, callback):
        self.callback = callback
        self.enter_exit_hooks = []
        self.entries = set()

    def __call__(self, fn):
        ctx = self

        def compile_wrapper(x, *a):
            cleanups = [enter() for enter in ctx.enter_exit_hooks]
            try:
                st = guard_state(x)
                _TorchDynamoContext.seen.append(list(map(list, st[:1])) + list(st[1:]))
                if st not in ctx.entries:
                    ctx.entries.add(st)
                    _TorchDynamoContext.compiles.append(fn.__name__)
                return fn(x, *a)  # COMPILED-CALL
            finally:
                for c in cleanups:
                    c()

        return compile_wrapper


def fake_dynamo():
    ef = types.ModuleType("standin_eval_frame")
    ef._TorchDynamoContext = _TorchDynamoContext
    ef.skipped = []
    ef.skip_code = lambda code: ef.skipped.append(code.co_name)
    return ef


class DeviceContext(TorchFunctionMode):
    """torch.set_default_device's mode, as torch 2 keeps it: at the bottom."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        cur = [torch.overrides._pop_mode() for _ in range(C._len_torch_function_stack())]
        torch.overrides._push_mode(self)
        for m in reversed(cur):
            torch.overrides._push_mode(m)

    def __exit__(self, *a):
        cur = [torch.overrides._pop_mode() for _ in range(C._len_torch_function_stack() - 1)]
        bottom = torch.overrides._pop_mode()
        if not isinstance(bottom, DeviceContext):
            raise AssertionError("Found nested DeviceContext on the mode stack where none expected")
        for m in reversed(cur):
            torch.overrides._push_mode(m)


_DEVICE = [None]


def set_default_device():
    if _DEVICE[0] is not None:
        _DEVICE[0].__exit__(None, None, None)
    _DEVICE[0] = DeviceContext()
    _DEVICE[0].__enter__()


def rms_norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def main():
    out = os.environ.get("COMPILE_OUT", "")
    ef = fake_dynamo()
    t = sys.modules.get("capguard_tracer")
    tr = t.tracer() if t is not None else None
    if tr is not None:
        tr.on_dynamo(ef)  # what the tracer does when torch._dynamo.eval_frame is imported
        tr.hook_graph_class(StandInGraph, "cuda")
    norm = _TorchDynamoContext(callback=lambda *a: None)(rms_norm)
    buf = torch.zeros(4, 8)
    graphs, outs = {}, {}
    set_default_device()
    for bs in (4, 2, 1):
        norm(buf[:bs])  # warm-up: "compiles" for this size
        g = StandInGraph()
        g.capture_begin()
        outs[bs] = norm(buf[:bs]) * 2
        g.capture_end()
        graphs[bs] = g
    set_default_device()  # again after the captures, inside the replay-prep window
    res = []
    gen = torch.Generator().manual_seed(0)
    for i in range(9):
        bs = (4, 2, 1)[i % 3]
        buf[:bs].copy_(torch.randn(bs, 8, generator=gen))
        norm(buf[:bs])  # a compiled call in replay prep
        graphs[bs].replay()
        res.append(round(float(norm(buf[:bs]).sum()), 5))
    _DEVICE[0].__exit__(None, None, None)
    inc = getattr(C, "_dispatch_tls_is_dispatch_key_included", None)
    state = [C._len_torch_dispatch_stack(), C._len_torch_function_stack(),
             bool(inc(C.DispatchKey.Python)) if inc is not None else None]
    rec = {"outputs": res, "compiles": len(_TorchDynamoContext.compiles), "seen": _TorchDynamoContext.seen,
           "state": state, "skipped": sorted(set(ef.skipped))}
    with open(out, "w") as f:
        json.dump(rec, f)


if __name__ == "__main__":
    main()
