"""torch.compile'd code under the tracer, on real torch (CPU tensors, a
stand-in graph class the test hooks, CAPGUARD_TRACE_DEVICE_TYPES=cpu).

An engine in the style of the small serving engines: a compiled norm (a
function under torch.compile) called by the model's forward; for each batch
size a warm-up forward, then the capture of the same forward (so the capture
finds the compiled entry the warm-up made, as real engines rely on: a compile
under capture is not capturable); then decode steps whose replay prep also
calls a compiled function; torch.set_default_device before and after the
captures, as engines do (its mode must stay at the bottom of the
torch-function mode stack). Dynamo guards each compiled entry on the thread's
torch-function mode stack and dispatch keys, so a mode of the tracer's left
on while a compiled call runs makes it recompile: in the warm-up run inside
the previous graph's replay-prep window, and under capture.

Writes to COMPILE_OUT (JSON): the outputs, the number of graphs Dynamo
compiled and of frames it converted, and the dispatch state at the end; or
{"skip": why} on a torch without torch.compile."""

import json
import os
import sys

import torch


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


def rms_norm(x, w, eps):
    var = x.pow(2).mean(-1, keepdim=True)  # COMPILED-BODY
    return x * torch.rsqrt(var + eps) * w


def scale_positions(pos):
    return (pos * 2 + 1).to(torch.float32)


def load_generated():
    """Code torch writes and imports at run time (Inductor's output code, in
    TORCHINDUCTOR_CACHE_DIR): a module written there, as Inductor does, whose
    function the forward calls under capture. The tracer must not record it as
    the program's. None when the variable is not set."""
    d = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
    if not d:
        return None
    import importlib.util

    os.makedirs(os.path.join(d, "xy"), exist_ok=True)
    path = os.path.join(d, "xy", "cxygenerated.py")
    with open(path, "w") as f:
        f.write("def call(args):\n    (x,) = args\n    return x + 0\n")
    spec = importlib.util.spec_from_file_location("cxygenerated", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.call


class TinyModel(object):
    def __init__(self, norm, hidden=8, max_bs=4):
        self.norm = norm
        self.generated = load_generated()
        self.w = torch.linspace(0.5, 1.5, hidden)
        self.proj = torch.linspace(-1.0, 1.0, hidden * hidden).reshape(hidden, hidden)
        self.x = torch.zeros(max_bs, hidden)  # the graphs' input buffer
        self.pos = torch.zeros(max_bs)

    def forward(self, bs):
        h = self.norm(self.x[:bs], self.w, 1e-6)  # CALLS-COMPILED
        if self.generated is not None:
            h = self.generated((h,))
        return (h @ self.proj) + self.pos[:bs, None]


class Runner(object):
    def __init__(self, model, prep_fn):
        self.model = model
        self.prep_fn = prep_fn
        self.graphs = {}
        self.outs = {}

    def capture(self, sizes):
        for bs in sizes:
            self.model.forward(bs)  # warm-up: compiles for this size
            g = StandInGraph()
            g.capture_begin()
            self.outs[bs] = self.model.forward(bs)
            g.capture_end()
            self.graphs[bs] = g

    def step(self, x):
        bs = x.shape[0]
        self.model.x[:bs].copy_(x)
        self.model.pos[:bs].copy_(self.prep_fn(torch.arange(bs)))  # a compiled call in replay prep
        self.graphs[bs].replay()
        return self.outs[bs]


def main():
    out = os.environ.get("COMPILE_OUT", "")
    compile_fn = getattr(torch, "compile", None)
    if compile_fn is None:
        with open(out, "w") as f:
            json.dump({"skip": "torch %s has no torch.compile" % torch.__version__}, f)
        return
    _hook()
    from torch._dynamo.utils import counters

    norm = compile_fn(rms_norm, backend="eager", dynamic=False)
    prep = compile_fn(scale_positions, backend="eager", dynamic=False)
    model = TinyModel(norm)
    runner = Runner(model, prep)
    set_default = getattr(torch, "set_default_device", None)
    set_default("cpu")  # the engine's default device while it builds and captures
    runner.capture((4, 2, 1))
    set_default("cpu")  # and again once done (set_default_device's mode must stay at the bottom of the stack)
    res = []
    g = torch.Generator().manual_seed(0)
    for i in range(12):
        bs = (4, 2, 1)[i % 3]
        x = torch.randn(bs, 8, generator=g)
        runner.step(x)
        # what a replay would compute: the forward again, eagerly, outside capture
        res.append([round(v, 5) for v in model.forward(bs).sum(-1).tolist()])
    C = torch._C
    inc = getattr(C, "_dispatch_tls_is_dispatch_key_included", None)
    state = [C._len_torch_dispatch_stack(), C._len_torch_function_stack(),
             bool(inc(C.DispatchKey.Python)) if inc is not None else None]
    rec = {"outputs": res, "unique_graphs": counters["stats"]["unique_graphs"],
           "frames_ok": counters["frames"]["ok"], "state": state, "torch": torch.__version__}
    with open(out, "w") as f:
        json.dump(rec, f)
    print("compile_engine:", json.dumps({k: v for k, v in rec.items() if k != "outputs"}))


if __name__ == "__main__":
    main()
