"""CG204 negative: a runner that captures on its first call takes the captured output apart with
torch's pytree (its leaves and their structure, kept for later), asks whether its input buffer is
among the leaves by identity (a set's membership hashes a tensor by identity; `is`), and replays
before it reads the leaves, on the call that captures too. Walking a structure reads no tensor's
data. GPU expectation: clean.

Its first version (2026-12-07) asked `self.static_x in leaves` of the list: that compares each leaf
before an identical one with `==`, and the truth of the (B, 64) comparison raised on the GPU
("Boolean value of Tensor with more than one value is ambiguous", verdict fault). So a list's
membership test reads the tensors' data; CG204 reports it as a read that names the assumption.
"""
# probe: CG204 negative
import torch
import torch.utils._pytree as pytree


class State:
    pass


class Runner:
    def __init__(self, w, B, dev):
        self.w = w
        self.static_x = torch.zeros((B, 64), device=dev)
        self.graph = None

    def head(self, x):
        probs = torch.softmax(x @ self.w, dim=-1)
        return {"probs": probs, "best": probs.amax(-1)}

    def run(self, x):
        self.static_x.copy_(x)
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                outs = self.head(self.static_x)
            self.leaves, self.spec = pytree.tree_flatten(outs)
            leaves = pytree.tree_leaves(outs)
            self.aliased = self.static_x in set(leaves) or any(t is self.static_x for t in leaves)
        self.graph.replay()
        out = pytree.tree_unflatten([t.clone() for t in self.leaves], self.spec)
        return out["probs"]


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.w = torch.randn((64, 64), generator=torch.Generator().manual_seed(7)).to(dev)
    st.runner = Runner(st.w, B, dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.softmax(st.x @ st.w, dim=-1)


def capture(st):
    return st.runner


def replay(st, runner):
    return runner.run(st.x)
