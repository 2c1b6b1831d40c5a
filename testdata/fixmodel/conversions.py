"""Fix model, patterns (b) and (f) in a function that claims capture safety:
a conversion that also moves the tensor (`.to(device=..., dtype=...)`), a
reshape that is a view of the cache, and `.contiguous()` of a state the
kernel updates in place get no fix; a conversion the kernel only reads gets
the persistent buffer (safe).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _gather_rows_kernel(idx_ptr, src_ptr, out_ptr, D: tl.constexpr):
    b = tl.program_id(0)
    d = tl.arange(0, D)
    row = tl.load(idx_ptr + b)
    tl.store(out_ptr + b * D + d, tl.load(src_ptr + row * D + d))


@triton.jit
def _state_update_kernel(x_ptr, state_ptr, D: tl.constexpr):
    b = tl.program_id(0)
    d = tl.arange(0, D)
    s = tl.load(state_ptr + b * D + d)
    tl.store(state_ptr + b * D + d, s * 0.5 + tl.load(x_ptr + b * D + d))


def gather_rows(idx, table, out):
    """Capture-safe row gather: out[b] = table[idx[b]]."""  # want: CG302
    idx_i32 = idx.to(torch.int32)  # want: CG301
    _gather_rows_kernel[(idx.shape[0],)](idx_i32, table, out, D=table.shape[1])
    return out


def gather_rows_to(idx, table, out):
    """Capture-safe row gather from indices that may live on the host."""  # want: CG302
    idx_dev = idx.to(device=table.device, dtype=torch.int32)  # want: CG301
    _gather_rows_kernel[(idx.shape[0],)](idx_dev, table, out, D=table.shape[1])
    return out


def gather_keys(idx, kv_cache, out):
    """Capture-safe gather of the key half of a [pages, 2, D] cache."""  # want: CG302
    _gather_rows_kernel[(idx.shape[0],)](idx, kv_cache[:, 0].reshape(-1, kv_cache.shape[-1]), out,  # want: CG301
                                         D=kv_cache.shape[-1])
    return out


def decay_state(x, initial_state):
    """Capture-safe: updates the caller's state in place."""  # want: CG302
    state = initial_state.contiguous()  # want: CG301
    _state_update_kernel[(x.shape[0],)](x, state, D=x.shape[1])
    return x
