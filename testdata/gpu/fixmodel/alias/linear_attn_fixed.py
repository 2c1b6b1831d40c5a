"""Fix model, pattern (f) through aliases, in the style of a linear-attention
kernel library: `.contiguous()` / `.to(dtype)` may return the caller's tensor
itself, so a persistent-buffer copy is no fix where a tensor sharing that
memory is written in place after the conversion: an output that is the input
when `inplace=True` (a conditional alias the kernel stores through), a view
written as `out=`, a state a helper updates in place or hands to a kernel
that stores into it. The twins whose writes go to fresh tensors keep the fix.
"""
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


@triton.jit
def _token_shift_kernel(x_ptr, prev_ptr, out_ptr, D: tl.constexpr):
    b = tl.program_id(0)
    d = tl.arange(0, D)
    x = tl.load(x_ptr + b * D + d)
    tl.store(out_ptr + b * D + d, x - tl.load(prev_ptr + b * D + d))


@triton.jit
def _state_decay_kernel(k_ptr, s_ptr, D: tl.constexpr):
    b = tl.program_id(0)
    d = tl.arange(0, D)
    s = tl.load(s_ptr + b * D + d)
    tl.store(s_ptr + b * D + d, s * 0.9 + tl.load(k_ptr + b * D + d))


@triton.jit
def _readout_kernel(q_ptr, s_ptr, o_ptr, D: tl.constexpr):
    b = tl.program_id(0)
    d = tl.arange(0, D)
    tl.store(o_ptr + b * D + d, tl.load(q_ptr + b * D + d) * tl.load(s_ptr + b * D + d))


def token_shift(x, prev, inplace=False):
    """Capture-safe token shift; with inplace=True the result overwrites x."""  # want: CG302
    x = x.contiguous()  # want: CG301
    out = x if inplace else torch.empty_like(x)
    _token_shift_kernel[(x.shape[0],)](x, prev, out, D=x.shape[1])
    return out


def token_shift_new(x, prev):
    """Capture-safe token shift into a new tensor."""  # want: CG302
    x = persistent_buffer("linear_attn.token_shift_new.x", x)  # want: CG301
    out = torch.empty_like(x)
    _token_shift_kernel[(x.shape[0],)](x, prev, out, D=x.shape[1])
    return out


def readout_decay(q, state):
    """Capture-safe readout; the caller's state decays in place (a view of it, as out=)."""  # want: CG302
    s = state.contiguous()  # want: CG301
    o = torch.empty_like(q)
    _readout_kernel[(q.shape[0],)](q, s, o, D=q.shape[1])
    flat = s.view(-1)
    torch.mul(flat, 0.9, out=flat)
    return o


def readout(q, state):
    """Capture-safe readout; the state is only read."""  # want: CG302
    s = persistent_buffer("linear_attn.readout.s", state)  # want: CG301
    o = torch.empty_like(q)
    _readout_kernel[(q.shape[0],)](q, s, o, D=q.shape[1])
    return o


def _decay_state(state, k):
    state.mul_(0.9)
    state.add_(k)


def _launch_decay(k, state):
    _state_decay_kernel[(k.shape[0],)](k, state, D=k.shape[1])


def _state_norm(state):
    return state.float().norm()


def recurrent_step(q, k, state):
    """Capture-safe recurrent step: reads the state, then a helper updates it in place."""  # want: CG302
    s = state.to(torch.float32)  # want: CG301
    o = torch.empty_like(q)
    _readout_kernel[(q.shape[0],)](q, s, o, D=q.shape[1])
    _decay_state(s, k)
    return o


def chunk_step(q, k, state):
    """Capture-safe chunk step: a helper launches the kernel that stores into the state."""  # want: CG302
    s = state.to(torch.float32)  # want: CG301
    o = torch.empty_like(q)
    _readout_kernel[(q.shape[0],)](q, s, o, D=q.shape[1])
    _launch_decay(k, state=s)
    return o


def readout_logged(q, state):
    """Capture-safe readout; a helper only reads the state."""  # want: CG302
    s = persistent_buffer("linear_attn.readout_logged.s", state, torch.float32)  # want: CG301
    o = torch.empty_like(q)
    _readout_kernel[(q.shape[0],)](q, s, o, D=q.shape[1])
    n = _state_norm(s)
    return o, n
