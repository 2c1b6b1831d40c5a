"""CG201 negative: a function makes a fresh state object, binds its buffers, captures, then replays
once (the shape of LightLLM's graph runner); between replays the buffers are refreshed with copy_.

Binding a tensor to an object nothing has captured yet is how the buffers are made, and the code
before the capture is set-up, not replay-prep. capguard once reported the first binding and offered
a "safe" copy_ fix that raised AttributeError. GPU expectation: clean.
"""
# probe: CG201 negative
import torch


class DecodeState:
    pass


class State:
    pass


def build(B, dev):
    st = State()
    st.B, st.dev = B, dev
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step_on(state, x):
    cols = torch.arange(64, device=x.device)[None, :]
    return torch.where(cols < state.idx[:, None], x, 0.0)


def step(st):
    return step_on(st.state, st.x) if hasattr(st, "state") else step_on(make_state(st), st.x)


def make_state(st):
    state = DecodeState()
    state.idx = torch.zeros(st.B, dtype=torch.int32, device=st.dev)
    state.idx.copy_(st.lens)
    return state


def capture(st):
    state = DecodeState()
    state.idx = torch.zeros(st.B, dtype=torch.int32, device=st.dev)
    state.idx.copy_(st.lens)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step_on(state, st.x)
    g.replay()
    st.state = state
    return g


def replay(st, g):
    st.state.idx.copy_(st.lens)
    g.replay()
    return st.out


def reference(st):
    return step_on(make_state(st), st.x)
