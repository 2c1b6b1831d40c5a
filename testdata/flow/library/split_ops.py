"""Library mode, which binding reaches a read: in `if offsets is None: offsets = [...] else: offsets =
offsets.tolist()` the else arm reads the parameter (a tensor), not the list the other arm builds, so
its `.tolist()` is a host read of device data. A binding in the other arm reaches a read only when a
loop around the if carries it to the next iteration."""
import torch
import triton
import triton.language as tl


@triton.jit
def _split_kernel(offs_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(offs_ptr + i, mask=i < n, other=0), mask=i < n)


def split_offsets(  # context: launcher
    chunk: int,
    rows: int | None = None,
    width: int | None = None,
    offsets: torch.Tensor | None = None,
):
    if offsets is None:
        total = rows * width
        offsets = list(range(0, total, width)) + [total]
    else:
        offsets = offsets.tolist()  # want: CG101~
    starts = [o for o in offsets[:-1] for _ in range(chunk)]
    table = torch.tensor(starts, device="cuda")  # want: CG103~
    out = torch.empty_like(table)
    _split_kernel[(1,)](table, out, len(starts), BLOCK=1024)
    return out
