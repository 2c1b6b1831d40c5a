"""CG101 policy: `.item()` in a step whose capture sits in a `try` that falls back to running it eagerly.

The sync fails the capture; `torch.cuda.graph`'s exit ends the capture, the handler catches the
error, and every later call runs the step without the graph. capguard still reports the sync (the
graph is never used), as a warning that names the handler, not as an error: the results are right.
GPU expectation: clean (every call computes eagerly), and a graph captured after the failure
replays right.
"""
# probe: CG101 policy
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


def check_after(st):
    # The failed capture left nothing behind: a graph captured now replays right.
    y = torch.zeros_like(st.x)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y.copy_(st.x * 2.0)
    g.replay()
    torch.cuda.synchronize()
    if not torch.equal(y, st.x * 2.0):
        raise RuntimeError("a graph captured after the caught failure replays wrong")


def capture(st):
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            st.out = step(st)
    except Exception:
        check_after(st)
        return None  # the caller runs the step without the graph
    return g


def replay(st, g):
    if g is None:
        st.out = step(st)
        return st.out
    g.replay()
    return st.out
