"""Modules and classes named by strings: `importlib.import_module` of a literal (the module it
names), of an f-string with holes (each module under the literal prefix: a guess), and of a value
the analysis cannot read (each module that a string somewhere in the project names by its full
dotted name, with or without a member: a guess); `getattr(module, name)` of a name it cannot
read (each member of that module that such a string names: a guess).

An engine that builds its model from a table of qualified class names (`"pkg.nets.tiny.TinyNet"`)
through `import_module(modname)` and `getattr(mod, clsname)` captures each class the table names.
A class of the same module that no string names is not reached.
"""
import torch

from zoo.kernels.dispatch import default_scale, device_scale
from zoo.loader import build


class Runner:
    def __init__(self, arch):
        self.model = build(arch)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            h = self.model(x)
            h = default_scale(h)
            self.out = device_scale("cuda")(h)
