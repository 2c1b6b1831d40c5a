"""Library mode through torch.autograd.Function's saved tensors: backward reads, from
`ctx.saved_tensors`, what forward passed to `ctx.save_for_backward`, in order. Scalars forward saved
as CPU tensors (`torch.tensor([smoothing])`) are host memory: `.item()` of one waits for no GPU work,
so it is no host sync (the value it reads is still baked in where a kernel takes it). What forward
saved from its device inputs is on the device, and its `.item()` is a sync."""
import torch
import triton
import triton.language as tl


@triton.jit
def _xent_kernel(x_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


def _launch(x, s):
    out = torch.empty_like(x)
    _xent_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, s, x.numel(), BLOCK=1024)
    return out


class SmoothedXent(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels, smoothing=0.0, padding_idx=0):
        ctx.save_for_backward(logits, labels, torch.tensor([smoothing]), torch.tensor([padding_idx]))
        return _launch(logits, smoothing)

    @staticmethod
    def backward(ctx, grad):  # context: launcher
        logits, labels, smoothing, padding_idx = ctx.saved_tensors
        pad = ctx.saved_tensors[3].item()
        top = logits.max().item()  # want: CG101~
        grad = grad.masked_fill(labels == pad, 0)  # want: CG102~
        return _launch(grad, smoothing.item() * top), None, None, None


def smoothed_xent(logits, labels, smoothing=0.1):  # context: launcher
    return SmoothedXent.apply(logits, labels, smoothing)


def smoothing_of(cfg):  # context: eager
    return torch.tensor([cfg.get("smoothing", 0.0)]).item()
