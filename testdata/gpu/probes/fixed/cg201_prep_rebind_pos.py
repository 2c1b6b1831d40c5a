"""CG201 positive: replay-prep rebinds the metadata the captured step reads (`meta.lens = lens.to(torch.int32)`).

The graph keeps reading the tensors bound at capture, which the caching allocator frees and hands
out again. GPU expectation: fault or stale-read (DESIGN.md: CUDA error 717 or stale data).
"""
# probe: CG201 positive
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


class Meta:
    pass


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    st.meta = Meta()
    prepare(st)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def prepare(st):
    st.meta.lens = persistent_buffer("cg201_prep_rebind_pos.prepare.st_meta.lens", st.lens, torch.int32)  # want: CG201


def step(st):
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < st.meta.lens[:, None], st.x, 0.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g


def replay(st, g):
    prepare(st)
    g.replay()
    return st.out


def reference(st):
    prepare(st)
    return step(st)
