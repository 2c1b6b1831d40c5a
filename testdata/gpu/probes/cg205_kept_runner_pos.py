"""CG205 positive: a draft loop keeps every output of a hand-made graph runner (copy the input into
the static buffer, replay, return the static output) in a list and concatenates them after the
loop. Each call replays into the same static output, so every kept output holds the last call's
values. GPU expectation: stale-read (nothing in PyTorch checks a runner's outputs).
"""
# probe: CG205 positive
import torch


class State:
    pass


class Runner:
    def __init__(self, w, B, dev):
        self.w = w
        self.static_x = torch.zeros((B, 64), device=dev)
        self.graph = torch.cuda.CUDAGraph()
        self.static_out = None

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.static_out = self.static_x * 2.0 + self.w

    def forward(self, x):
        self.static_x.copy_(x)
        self.graph.replay()
        return self.static_out


_RUNNER = None


@torch.no_grad()
def generate(x, n):
    outs = []
    for i in range(n):
        y = _RUNNER.forward(x * (i + 1))  # want: CG205
        outs.append(y)
    return torch.cat(outs)


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.w = torch.randn((64,), generator=torch.Generator().manual_seed(7)).to(dev)
    st.B, st.dev = B, dev
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.cat([(st.x * (i + 1)) * 2.0 + st.w for i in range(3)])


def capture(st):
    global _RUNNER
    _RUNNER = Runner(st.w, st.B, st.dev)
    _RUNNER.capture()
    return _RUNNER


def replay(st, runner):
    return generate(st.x, 3)
