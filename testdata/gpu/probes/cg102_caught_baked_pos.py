"""CG102 positive: a host value baked at capture, with the capture in a `try` that falls back.

Nothing here fails the capture, so the handler never runs: the graph bakes the mirror's value
and every replay reuses it. A caught failure makes only the hazards that fail the capture
harmless; capguard keeps this one.
GPU expectation: stale-read.
"""
# probe: CG102 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.lens_cpu = torch.ones(B, dtype=torch.int64)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens_cpu.copy_(torch.randint(1, 64, (st.lens_cpu.shape[0],), generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    longest = int(st.lens_cpu.max())
    return torch.clamp(st.x * 100.0, max=longest)  # want: CG102


def capture(st):
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            st.out = step(st)
    except Exception:
        return None  # the caller runs the step without the graph
    return g


def replay(st, g):
    if g is None:
        st.out = step(st)
        return st.out
    g.replay()
    return st.out
