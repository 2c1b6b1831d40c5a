"""An engine on the stand-in torch (stubtorch/), for the tracer's tests on
any interpreter: a model registry, layers built by a factory, a graph runner
that receives the step function, a capture started through getattr on a name
built at run time, a background thread that runs Python during capture, a
child process that captures too, and (with --sync) a host sync under capture.

RECORD is the independent record: each function of the engine appends its
own name when it runs under capture."""

import os
import subprocess
import sys
import threading

import torch

RECORD = []


def here(name):
    from torch.cuda import graphs

    if graphs._CAPTURING:
        RECORD.append(name)


REGISTRY = {}


def register(name):
    def deco(cls):
        REGISTRY[name] = cls
        return cls

    return deco


class Layer(object):
    def __init__(self, i):
        self.i = i

    def __call__(self, x):
        here("Layer.__call__")
        return mix(x, self.i)


def mix(x, i):
    here("mix")

    def inner(v):
        here("mix.inner")
        return v + i

    return inner(x)


def make_layer(i):
    return Layer(i)


@register("tiny")
class TinyModel(object):
    def __init__(self, n):
        self.layers = [make_layer(i) for i in range(n)]

    def forward(self, x, sync=False):
        here("TinyModel.forward")
        for layer in self.layers:
            x = layer(x)
        if sync:
            torch.cuda.synchronize()  # PLANT-SYNC
        return x


class Runner(object):
    def __init__(self, step):
        self.step = step
        self.graphs = []

    def capture(self, x, sync):
        g = torch.cuda.CUDAGraph()
        begin = getattr(g, "_".join(["capture", "begin"]))
        begin()
        try:
            self.step(x, sync)
        finally:
            g.capture_end()
        self.graphs.append(g)

    def capture_with(self, x):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.step(x)
        self.graphs.append(g)

    def replay_all(self):
        for g in self.graphs:
            g.replay()


def busy(stop):
    while not stop.is_set():
        noise()


def noise():
    return sum(range(10))


def main(argv):
    sync = "--sync" in argv
    model = REGISTRY[os.environ.get("STUB_MODEL", "tiny")](3)
    runner = Runner(model.forward)
    stop = threading.Event()
    th = threading.Thread(target=busy, args=(stop,))
    th.start()
    try:
        runner.capture_with(1)
        try:
            runner.capture(2, sync)
        except RuntimeError as e:
            print("capture failed:", e)
    finally:
        stop.set()
        th.join()
    runner.replay_all()
    if "--child" not in argv and "--no-child" not in argv:
        subprocess.check_call([sys.executable, os.path.abspath(__file__), "--child"])
    out = os.environ.get("STUB_RECORD")
    if out:
        with open(out + (".child" if "--child" in argv else ""), "w") as f:
            f.write("\n".join(sorted(set(RECORD))) + "\n")
    print("stub engine done", len(RECORD))


if __name__ == "__main__":
    main(sys.argv[1:])
