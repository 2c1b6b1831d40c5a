import torch

from loss import _host_limit, clip, fill, forwarded, normalize, scale
from optional import check_offsets, finalize, first_offset, trim
from optional import scale as scale_opt


def decode_step(x, mask):  # context: captured
    count = mask.sum()
    loss = normalize(x.sum(), count)
    loss = forwarded(loss, mask.sum())
    loss = scale(loss, count)
    loss = clip(loss, torch.tensor(4.0))
    fill(x, count)
    loss = _host_limit(loss, torch.ones(1, device="cpu"))
    loss = finalize(loss, count)
    x = trim(x, mask)
    return loss


def eager_step(x):  # context: eager
    loss = scale(x.sum(), 2.0)
    return clip(loss, torch.ones(1))


class Runner:
    def __init__(self, x, mask):
        self.graph = torch.cuda.CUDAGraph()
        self.x, self.mask = x, mask

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = decode_step(self.x, self.mask)
        with torch.cuda.graph(self.graph):
            # What this passes may be None: no tensor is known in scale.
            self.out2 = scale_opt(self.x, getattr(self, "factor", None))
        with torch.cuda.graph(self.graph):
            # Offsets that may be None: a subscript, or a read after an
            # assert, knows the tensor.
            cu = getattr(self, "cu", None)
            self.out3 = check_offsets(self.x, cu)
            first_offset(cu)
