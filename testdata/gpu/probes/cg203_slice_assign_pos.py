"""CG203 positive: a runner keeps one graph per batch size in a dict (`self.graphs[bs].replay()`), and
the replay method first calls a prep method that writes the batch into the prefix of the padded slot
mapping by slice assignment (`self.slot_mapping[:n] = slots`) and never resets the tail.

The graph was captured at the padded size B: the padded rows replay a previous batch's slots and
write into cache rows of the live batch. GPU expectation: stale-read (at B > 1; B = 1 has no padding).
"""
# probe: CG203 positive
import torch

ROWS = 256


class Runner:
    def __init__(self, B, dev):
        self.x = torch.zeros((B, 16), device=dev)
        self.slot_mapping = torch.zeros(B, dtype=torch.int64, device=dev)
        self.cache = torch.zeros((ROWS, 16), device=dev)
        self.graphs = {}
        self.outputs = {}

    def write_cache(self):
        self.cache.index_copy_(0, self.slot_mapping, self.x)
        return self.cache

    def capture(self, bs):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.outputs[bs] = self.write_cache()
        self.graphs[bs] = g

    def prepare(self, x, slots):
        n = x.shape[0]
        self.cache.zero_()
        self.x[:n] = x
        self.slot_mapping[:n] = slots  # want: CG203

    def run(self, bs, x, slots):
        self.prepare(x, slots)
        self.graphs[bs].replay()
        return self.outputs[bs]


class State:
    runner: Runner


def build(B, dev):
    st = State()
    st.B = B
    st.runner = Runner(B, dev)
    st.n = B
    st.x = torch.zeros((B, 16), device=dev)
    st.slots = torch.arange(B, dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.n = max(1, st.B - 1 - int(torch.randint(0, max(1, st.B // 2), (1,), generator=gen)))
    st.x = (torch.randn((st.n, 16), generator=gen) + 10.0).to(st.runner.x.device)
    st.slots = torch.randperm(ROWS - 1, generator=gen)[: st.n].to(st.runner.x.device)


def step(st):
    st.runner.prepare(st.x, st.slots)
    st.runner.slot_mapping[st.n:] = ROWS - 1
    return st.runner.write_cache().clone()


def capture(st: State):
    st.runner.capture(st.B)
    return st.runner.graphs[st.B]


def replay(st: State, g):
    return st.runner.run(st.B, st.x, st.slots)[: ROWS - 1]


def reference(st):
    cache = torch.zeros_like(st.runner.cache)
    cache.index_copy_(0, st.slots, st.x)
    return cache[: ROWS - 1]
