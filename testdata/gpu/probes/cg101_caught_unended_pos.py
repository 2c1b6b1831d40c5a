"""CG101 positive: the same fallback around a raw `capture_begin()`/`capture_end()` capture.

The sync raises between `capture_begin()` and `capture_end()`, so `capture_end()` never runs: the
handler catches the error, but the side stream is left capturing (its capture invalidated), and
the fallback's own sync is then refused too. A caught failure is harmless only where the capture
ends on the way out (`with torch.cuda.graph`); capguard keeps this one an error.
GPU expectation: fault (the fallback raises).
"""
# probe: CG101 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    scale = st.x.abs().max().item()  # want: CG101
    return st.x / (scale + 1.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(s):
            g.capture_begin()
            st.out = step(st)
            g.capture_end()
    except Exception:
        return None  # the caller runs the step without the graph
    return g


def replay(st, g):
    if g is None:
        st.out = step(st)
        return st.out
    g.replay()
    return st.out
