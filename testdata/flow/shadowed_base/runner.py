"""A class named like its base: `class RopeImpl(RopeImpl, nn.Module)` after `from .api import
RopeImpl`. Python evaluates the bases before it binds the name, so the base is the imported
interface, and a class defined after it (`class ScaledRope(RopeImpl)`) derives from the new one.
Taking the module's first binding of the name for every base made ScaledRope a subclass of the
interface alone, no torch module, so calling it reached no forward."""
import torch

from layers.default import build


class Runner:
    def __init__(self, scaled):
        self.rope = build(scaled)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x, positions):
        with torch.cuda.graph(self.graph):
            self.out = self.rope(x, positions)
