"""Library mode: an op library that never captures. Any caller may capture its public functions
that launch Triton kernels, so they run in the launcher context, where the capture rules
(CG101-CG104) apply; a private helper a public launcher calls runs in it too. A private
launcher no public function calls, and a public function that launches nothing, are eager."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    var = tl.sum(x * x, axis=0) / n_cols
    tl.store(out_ptr + row * n_cols + cols, x / tl.sqrt(var + eps) * w, mask=mask)


def _check_rows(x):  # context: launcher
    if x.isnan().any().item():  # want: CG101~
        raise FloatingPointError("nan input")


def rms_norm(x, weight, eps=1e-6):  # context: launcher
    _check_rows(x)
    out = torch.empty_like(x)
    block = triton.next_power_of_2(x.shape[1])
    _rms_norm_kernel[(x.shape[0],)](x, weight, out, x.shape[1], eps, BLOCK=block)
    return out


def rms_norm_rows(x, weight, rows, eps=1e-6):  # context: launcher
    keep = torch.tensor(rows, device=x.device)  # want: CG103~
    picked = x[keep.nonzero().squeeze(1)]  # want: CG104~
    out = torch.empty_like(picked)
    block = triton.next_power_of_2(x.shape[1])
    _rms_norm_kernel[(picked.shape[0],)](picked, weight, out, x.shape[1], eps, BLOCK=block)
    return out


def _rms_norm_reference(x, weight, eps=1e-6):  # context: eager
    if x.isnan().any().item():
        raise FloatingPointError("nan input")
    out = torch.empty_like(x)
    _rms_norm_kernel[(x.shape[0],)](x, weight, out, x.shape[1], eps, BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def describe(x):  # context: eager
    return f"rows={x.shape[0]} max={x.abs().max().item()}"
