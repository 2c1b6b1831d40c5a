"""CG205 positive: a decode loop keeps every output of a step that torch.compile compiles with
mode="reduce-overhead" in a list, and concatenates them after the loop. Each call replays the step's
graph into the same output storage, so every kept output is overwritten by the next call. GPU
expectation: fault (CUDA Graph Trees raise on reading an overwritten output) or stale-read.
"""
# probe: CG205 positive
import torch


class State:
    pass


@torch.compile(mode="reduce-overhead", dynamic=False)
def decode_step(x, w):
    # Exact in any order of evaluation (a product by 2, one sum): the compiled and the eager step
    # agree bitwise.
    return x * 2.0 + w


def eager_step(x, w):
    return x * 2.0 + w


@torch.no_grad()
def generate(x, w, n):
    outs = []
    for i in range(n):
        y = decode_step(x * (i + 1), w)  # want: CG205
        outs.append(y)
    return torch.cat(outs)


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.w = torch.randn((64,), generator=torch.Generator().manual_seed(7)).to(dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.cat([eager_step(st.x * (i + 1), st.w) for i in range(3)])


def warmup(st):
    pass


def capture(st):
    # CUDA Graph Trees warm up on the first calls and record on a later one.
    for _ in range(3):
        generate(st.x, st.w, 1)
    torch.cuda.synchronize()
    return None


def replay(st, g):
    return generate(st.x, st.w, 3)
