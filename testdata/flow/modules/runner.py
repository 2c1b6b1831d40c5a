"""Modules: PEP 420 namespace packages, relative imports, __init__ re-exports, `import a.b as c`,
`__all__` and star imports. The capture reaches what each spelling names.

engine/ and engine/ops/ have no __init__.py (namespace packages); engine/layers/ is a regular
package that re-exports. tools/ops/ (another namespace package) holds look-alikes with the same
module and function names (ops/norm.py: rms_norm); only eager code reaches them.
"""
import torch

import engine.ops.norm as norm_ops
from engine.layers import Attention, act
from engine.layers.mlp import *  # binds gated_mlp only (its __all__), not mlp.act
from engine.ops import sampling
from tools.ops import norm as offline_norm


class Runner:
    def __init__(self, dim):
        self.attn = Attention(dim)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            h = norm_ops.rms_norm(x)
            h = self.attn.attend(h)
            h = act(h)
            h = gated_mlp(h)
            self.out = sampling.greedy(h)

    def calibrate(self, x):  # context: eager
        # Eager: the look-alike in tools/ops/ runs here only.
        return offline_norm.rms_norm(x)
