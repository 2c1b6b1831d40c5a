"""CG301 positive: a captured step reads the temporary the previous call stored (`prev = st.prev`) and
stores this call's (`st.prev = x.to(torch.int32)`).

Under capture the read records the tensor bound before the capture (the warm-up's), which the store
frees: every replay reads freed, reused memory. GPU expectation: stale-read.
"""
# probe: CG301 positive
import torch


# Captured kernels must read stable addresses: keep per-call temporaries in
# buffers that outlive every graph (see `capguard rule CG301`).
_persistent_buffers = {}
_retired_buffers = []


def persistent_buffer(site, src, dtype=None, copy=False):
    """Copy src into the persistent buffer of site; return a view shaped like src."""
    dtype = src.dtype if dtype is None else dtype
    if not copy and dtype == src.dtype and src.is_cuda and src.is_contiguous() and torch.cuda.is_current_stream_capturing():
        return src  # nothing to convert: the graph reads the source where it is
    key = (site, dtype, src.device)
    n = src.numel()
    buf = _persistent_buffers.get(key)
    if buf is None or buf.numel() < n:
        if src.is_cuda and torch.cuda.is_current_stream_capturing():
            have = 0 if buf is None else buf.numel()
            raise RuntimeError(
                f"persistent_buffer {site!r}: needs {n} elements of {dtype} on "
                f"{src.device} but has {have} while the stream is capturing; "
                "warm up at the largest batch size before capture"
            )
        if buf is not None:
            _retired_buffers.append(buf)  # a graph captured earlier may read it
        buf = torch.empty(n, dtype=dtype, device=src.device)
        _persistent_buffers[key] = buf
    out = buf[:n].view(src.shape)
    out.copy_(src)
    return out


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.prev = torch.zeros((B, 64), dtype=torch.int32, device=dev)
    st.x_host = torch.zeros((B, 64))
    st.prev_host = torch.zeros((B, 64))
    return st


def fill(st, gen):
    st.prev_host = st.x_host
    st.x_host = torch.randint(-50, 50, st.x.shape, generator=gen).float()
    st.x.copy_(st.x_host)


def step(st):
    prev = st.prev
    out = torch.ops.aten.add(st.x, prev)
    st.prev = persistent_buffer((id(st), "cg301_stored_state_pos.step.st.prev"), st.x, torch.int32)  # want: CG301
    return out


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g


def reference(st):
    # What the step means: this call's x plus the previous call's.
    return (st.x_host + st.prev_host.int()).to(st.x.device)
