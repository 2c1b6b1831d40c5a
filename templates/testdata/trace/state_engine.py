"""An engine in SGLang's style on the stand-in torch (stubtorch/), for the
tracer's tests of what it must never change and of the runtime findings
that need program state: a graph runner capturing two padded batch sizes,
an attention backend with capture and replay metadata methods, decode steps
under torch.inference_mode() (which saves and restores the thread's dispatch
keys), a factory call without a tensor argument between replays, a dispatch
mode and a function mode of the program's own around regions, and a thread
making tensors all along.

Plants (argv): --stale   replay prep copies seq_lens[:bs] without resetting
                         the padded tail (PLANT-STALE; the graph reads the
                         padded buffer)
               --stored  the captured forward binds self.last_hidden to a
                         tensor it makes (PLANT-STORED), read after replays
                         (READ-STORED)
               --bincount torch.bincount under capture (PLANT-BINCOUNT): every
                         capture fails, the runner drops the graphs and runs eagerly
               --compile a torch.compile'd function in the captured forward,
                         compiled under capture (the compiler's own host reads
                         are not the program's: no finding)
               --straddle a capture ended inside an inference-mode region
                         that began while it captured: the program's own
                         guard leaves the Python dispatch key set (the
                         tracer's dispatch-state check restores it)
Prints one line per step (the outputs) and "engine done", also into the
file STATE_OUT names (the tests compare it with an untraced run's)."""

import os
import sys
import threading

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

PLANTS = set(a.lstrip("-") for a in sys.argv[1:])
LOG = []


def say(*a):
    LOG.append(" ".join(str(x) for x in a))
    print(*a)
DEV = "cuda"


class OpCounter(TorchDispatchMode):
    """The program's own dispatch mode (as FlopCounterMode would be)."""

    def __init__(self):
        self.n = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.n += 1
        return func(*args, **(kwargs or {}))


class Annotate(TorchFunctionMode):
    """The program's own function mode around a region."""

    def __init__(self):
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


class AttentionBackend(object):
    def __init__(self, max_bs):
        self.seq_lens = torch.zeros(max_bs, dtype=torch.int32, device=DEV)

    def init_forward_metadata_capture(self, bs):
        return self.seq_lens[:bs]  # CAPTURE-META

    def init_forward_metadata_replay(self, bs, padded, seq_lens):
        if "stale" not in PLANTS:
            self.seq_lens[bs:padded].fill_(1)
        self.seq_lens[:bs].copy_(seq_lens)  # PLANT-STALE


def scale(h):
    return h * 1


if "compile" in PLANTS:
    scale = torch.compile(scale)


class Model(object):
    def forward(self, ids, seq_lens):
        h = scale(ids * 2 + seq_lens)
        if ids.shape[0] > 4:
            h = h * 0  # NOT-CAPTURED (no captured batch is larger than 4)
        if "bincount" in PLANTS:
            torch.bincount(ids)  # PLANT-BINCOUNT (every capture fails: the program runs eagerly)
        if "stored" in PLANTS:
            self.last_hidden = torch.cat([h]).contiguous()  # PLANT-STORED
        return h


class GraphRunner(object):
    def __init__(self, model, backend, sizes):
        self.model, self.backend, self.sizes = model, backend, sizes
        self.ids = torch.zeros(max(sizes), dtype=torch.int32, device=DEV)
        self.graphs, self.outs = {}, {}

    def capture(self):
        for bs in self.sizes:
            g = torch.cuda.CUDAGraph()
            if "straddle" in PLANTS and bs == self.sizes[-1]:
                g.capture_begin()
                out = self.model.forward(self.ids[:bs], self.backend.init_forward_metadata_capture(bs))
                with torch.inference_mode():
                    g.capture_end()
            else:
                try:
                    with torch.cuda.graph(g):
                        out = self.model.forward(self.ids[:bs], self.backend.init_forward_metadata_capture(bs))  # CAPTURE-SITE
                except RuntimeError as e:
                    say("capture failed:", e)
                    continue
            self.graphs[bs], self.outs[bs] = g, out

    def replay(self, ids, seq_lens):
        bs = len(ids)
        if not self.graphs:  # no capture succeeded: eager
            self.ids[:bs].copy_(ids)
            return self.model.forward(self.ids[:bs], seq_lens)
        padded = min(s for s in self.graphs if s >= bs)
        self.ids[bs:padded].fill_(0)
        self.ids[:bs].copy_(ids)
        self.backend.init_forward_metadata_replay(bs, padded, seq_lens)
        self.graphs[padded].replay()
        return self.outs[padded][:bs]


def background(stop, made):
    while not stop.is_set():
        made.append(torch.full((2,), 3, dtype=torch.int32, device=DEV).item())  # BACKGROUND
        if len(made) > 10000:
            del made[:]


@torch.inference_mode()
def step(runner, i, counter, model):
    bs = (4, 3, 1, 2)[i % 4]  # shrinking batches: a smaller one after a larger one on the same graph
    ids = torch.tensor([i + k for k in range(bs)], dtype=torch.int32, device=DEV)
    lens = torch.tensor([5 + k for k in range(bs)], dtype=torch.int32, device=DEV)
    if i % 3 == 0:
        with counter:
            out = runner.replay(ids, lens)
    else:
        out = runner.replay(ids, lens)
    res = out.tolist()
    if "stored" in PLANTS:
        res.append(int(model.last_hidden.sum()))  # READ-STORED
    return res


def main():
    model = Model()
    backend = AttentionBackend(4)
    runner = GraphRunner(model, backend, [4, 2])
    stop, made = threading.Event(), []
    th = threading.Thread(target=background, args=(stop, made))
    th.start()
    try:
        runner.capture()
        for g in runner.graphs.values():
            g.replay()  # a warm-up replay of each graph before the first step
        counter = OpCounter()
        annotate = Annotate()
        for i in range(24):
            if i % 5 == 1:
                annotate.__enter__()  # a function mode the program opens before one replay and closes after the next
            say("step", i, step(runner, i, counter, model))
            if i % 5 == 2:
                annotate.__exit__(None, None, None)
            # A factory call without a tensor argument between replays.
            say("full", torch.full((2,), 7, dtype=torch.int32, device=DEV).tolist())
    finally:
        stop.set()
        th.join()
    C = torch._C
    say("modes on the stacks at the end", C._len_torch_function_stack(), C._len_torch_dispatch_stack())
    say("engine done", counter.n > 0, annotate.calls > 0)
    if os.environ.get("STATE_OUT"):
        with open(os.environ["STATE_OUT"], "w") as f:
            f.write("\n".join(LOG) + "\n")


if __name__ == "__main__":
    main()
