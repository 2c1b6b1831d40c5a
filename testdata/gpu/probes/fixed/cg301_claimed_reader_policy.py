"""CG301 policy: the motivating reader with its claim ("Capture-safe"): `.contiguous()` and
`.to(torch.int32)` temporaries made inside the call and passed to a Triton kernel.

Captured by this probe inside torch.cuda.graph, the temporaries are graph-owned and the replays are
clean: the finding is policy, not a GPU failure. The claim must hold for every caller, and only the
persistent-buffer form makes it so; capguard keeps CG301 (a warning, with its safe fix) and CG302
here. GPU expectation: clean, for the original and for capguard fix's version (fixed/).
"""
# probe: CG301 policy
import torch
import triton
import triton.language as tl


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


T = 64
D = 32


@triton.jit
def _masked_dot_kernel(q_ptr, k_ptr, lens_ptr, out_ptr, T: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(0)
    t = tl.arange(0, T)
    d = tl.arange(0, D)
    n = tl.load(lens_ptr + b)
    k = tl.load(k_ptr + t[:, None] * D + d[None, :])
    q = tl.load(q_ptr + b * D + d)
    s = tl.sum(k * q[None, :], axis=1)
    tl.store(out_ptr + b * T + t, tl.where(t < n, s, 0.0))


def _masked_dot_kernel_cpu(grid, q, k, lens, out, T, D):
    s = q @ k.t()
    cols = torch.arange(T)[None, :]
    out.copy_(torch.where(cols < lens.long()[:, None], s, torch.zeros_like(s)))


class State:
    pass


def build(B, dev):
    st = State()
    st.q = torch.zeros((B, 1, D), device=dev)
    st.k = torch.zeros((T, D), device=dev)
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.q.copy_(torch.randn(st.q.shape, generator=gen))
    st.k.copy_(torch.randn(st.k.shape, generator=gen))
    st.lens.copy_(torch.randint(1, T + 1, st.lens.shape, generator=gen))


def read(q, k, lens):
    """Capture-safe: all buffers are allocated by the caller, so this reader can run inside a CUDA graph."""  # want: CG302
    out = torch.empty((q.shape[0], T), dtype=torch.float32, device=q.device)
    q0 = persistent_buffer("cg301_claimed_reader_policy.read.q0", q[:, 0])  # want: CG301
    lens_i32 = persistent_buffer("cg301_claimed_reader_policy.read.lens_i32", lens.reshape(-1), torch.int32)  # want: CG301
    _masked_dot_kernel[(q.shape[0],)](q0, k, lens_i32, out, T=T, D=D)
    return out


def step(st):
    return read(st.q, st.k, st.lens)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = read(st.q, st.k, st.lens)
    return g
