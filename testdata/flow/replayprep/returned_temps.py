"""Replay prep whose helpers return temporaries: where each call's result goes decides. Copied
into the graph's static input (or used eagerly, or returned to a caller that copies it), the
temporary can go when the prep returns; stored where the captured code reads it, or kept by a
caller in a container, it is the temporary itself a graph may read, freed once it is
replaced."""
import torch


def lens_i32(lens):  # context: replay-prep
    return lens.to(torch.int32)


def pos_i64(pos):  # context: replay-prep
    return pos.to(torch.int64)


def through(pos):  # context: replay-prep
    return pos_i64(pos)


def table_i32(table):  # context: replay-prep
    return table.to(torch.int32)  # want: CG301 "returned to `returned_temps.Runner.prep`, which stores it in `self.meta["


def scales_of(x):  # context: replay-prep
    return x.to(torch.float16), x.to(torch.bfloat16)


def kept_scale(x):  # context: replay-prep
    return x.to(torch.float16)  # want: CG301 "adds it to a container"


def window(x):  # context: replay-prep
    return (x * 2).to(torch.int32)  # want: CG301 "which stores it in `self.meta["


class Runner:
    def __init__(self, bs):  # context: eager
        self.lens = torch.zeros(bs, dtype=torch.int32, device="cuda")
        self.pos = torch.zeros(bs, dtype=torch.int64, device="cuda")
        self.amax = torch.zeros(bs, device="cuda")
        self.sign = torch.zeros(bs, 8, device="cuda")
        self.history = []
        self.meta = {}
        self.graph = torch.cuda.CUDAGraph()

    def prep(self, lens, pos, table, x):  # context: replay-prep
        self.lens.copy_(lens_i32(lens))
        self.pos.copy_(through(pos))
        self.meta["table"] = table_i32(table)
        amax, sign = scales_of(x)
        self.amax.copy_(amax)
        self.sign.copy_(sign)
        self.history.append(kept_scale(x))
        self.meta["window"] = window(x)

    def run(self, q):  # context: captured
        return q[self.pos] * self.lens + self.meta["table"].sum() + self.meta["window"].sum() + self.amax + self.history[-1]

    def capture(self, q):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.run(q)

    def step(self, lens, pos, table, x):  # context: eager
        self.prep(lens, pos, table, x)
        self.graph.replay()
        return self.out
