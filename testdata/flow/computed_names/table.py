"""Reads under a computed name: `getattr(OPS, name)` may be any attribute that `setattr(OPS, name,
fn)` stored, on a class, an instance or a module alike. Which one is a guess, so the call it makes
is a `name` edge and its findings are warnings that name the guess, not errors."""
import torch

import registry


class OPS:
    pass


def scale(x):  # context: captured resolution: name
    return x * x.abs().max().item()  # want: CG101~


def shift(x):  # context: captured resolution: name
    return x + x.min().item()  # want: CG101~


def clamp(x):  # context: captured resolution: name
    return x.clamp(max=float(x.mean()))  # want: CG101~ CG102~


for _fn in (scale, shift):
    setattr(OPS, _fn.__name__, _fn)
for _fn in (clamp,):
    setattr(registry, _fn.__name__ + "_op", _fn)


class Runner:
    def __init__(self):  # context: eager
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, name, x):  # context: eager
        fn = getattr(OPS, name)
        with torch.cuda.graph(self.graph):
            self.out = fn(x)

    def capture_module_op(self, name, x):  # context: eager
        fn = getattr(registry, name)
        with torch.cuda.graph(self.graph):
            self.out = fn(x)
