"""CG201 negative: the control of cg201_prep_fills_output_pos: the captured forward clamps the
sequence lengths in place (`self.lens.clamp_(max=w)`), and the runner copies each step's lengths
into that attribute before `.replay()`.

The attribute keeps the tensor the capture read and wrote: the copy refreshes it, and each replay
clamps the new lengths. GPU expectation: clean.
"""
# probe: CG201 negative
import torch


class Seqlen:
    def __init__(self, lens):
        self.lens = lens

    def clamp(self, window):
        self.lens.clamp_(max=window)
        return self


class Runner:
    def __init__(self, B, dev):
        self.x = torch.zeros((B, 64), device=dev)
        self.seq = Seqlen(torch.ones(B, dtype=torch.int64, device=dev))
        self.new_lens = torch.ones(B, dtype=torch.int64, device=dev)
        self.graph = None
        self.out = None

    def forward(self):
        s = self.seq.clamp(48)
        return self.x * s.lens[:, None].float()

    def capture(self):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = self.forward()
        self.graph = g
        return g

    def run(self):
        self.seq.lens.copy_(self.new_lens)
        self.graph.replay()
        return self.out


class State:
    runner: Runner


def build(B, dev):
    st = State()
    st.runner = Runner(B, dev)
    return st


def fill(st, gen):
    r = st.runner
    r.x.copy_(torch.randn(r.x.shape, generator=gen))
    r.new_lens.copy_(torch.randint(1, 64, r.new_lens.shape, generator=gen))


def step(st):
    st.runner.seq.lens.copy_(st.runner.new_lens)
    return st.runner.forward()


def reference(st):
    r = st.runner
    return r.x * torch.clamp(r.new_lens, max=48)[:, None].float()


def capture(st):
    return st.runner.capture()


def replay(st, g):
    return st.runner.run()
