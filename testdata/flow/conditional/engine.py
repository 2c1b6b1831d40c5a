"""Code that runs under capture only in some captures: findings there are
warnings that name the condition (a want code ending in "?"); the same hazards on
the unconditional path are errors."""
import functools

import torch

from backends import backend_class

_CODEBOOKS = {}


class Model:
    def __init__(self):  # context: captured
        self.ops = backend_class()()

    def forward(self, input_ids, pixel_values=None, attn_metadata=None):  # context: captured
        if pixel_values is not None:
            n = pixel_values.sum().item()  # want: CG101?
            self.encode(pixel_values)
            self.norm(input_ids)
        self.norm(input_ids)
        if attn_metadata.is_decoding:
            out = self.decode(input_ids)
        else:
            out = self.prefill(input_ids)
        if not attn_metadata.is_decoding:
            flags = input_ids.nonzero()  # want: CG104?
        self.ops.run(input_ids)
        codebook(16, input_ids.device)
        hadamard(16, input_ids.device)
        self.plan_once(attn_metadata)
        return out

    def plan_once(self, meta):  # context: captured
        # Planned once, before the capture (its first call); the sync after
        # the run-once guard runs under capture only if nothing did.
        if meta.planned:
            return
        meta.planned = True
        torch.cuda.synchronize()  # want: CG101?

    def encode(self, x):  # context: captured conditional
        return x.sum(0).tolist()  # want: CG101?

    def norm(self, x):  # context: captured
        # Reached both under the optional input and unconditionally: the
        # unconditional chain wins, so this is an error.
        return x[x > 0]  # want: CG104

    def decode(self, x):  # context: captured
        return x.nonzero()  # want: CG104

    def prefill(self, x):  # context: captured conditional
        return x.nonzero()  # want: CG104?

    def route(self, x, expert_map=None, scales=None):  # context: captured
        # The optional inputs' tests kept in flags: the same as testing them.
        use_map = expert_map is not None
        if use_map:
            x = self.remap(x, expert_map)
        scaled = scales is not None
        if scaled:
            x = self.rescale(x, scales)
        return x

    def remap(self, x, expert_map):  # context: eager
        # `route` is captured without an expert map: this branch is dead.
        return x[expert_map.tolist()]

    def rescale(self, x, scales):  # context: captured conditional
        return x * scales.max().item()  # want: CG101?

    def dispatch(self, x, num_local=None):  # context: captured
        # A flag that combines the input's None-test with a comparison against a size: with
        # `num_local` None, `None == total` is false too, so the expert path is dead.
        total = x.size(0)
        with_ep = num_local is not None or num_local == total
        if not with_ep:
            return x * 2
        return self.expert_path(x, num_local)

    def expert_path(self, x, n):  # context: eager
        return x[: int(x[:n].sum().item())]


def codebook(d, device):  # context: captured
    key = (d, str(device))
    if key in _CODEBOOKS:
        return _CODEBOOKS[key]
    table = torch.tensor([-1.5, -0.5, 0.5, 1.5], device=device)  # want: CG103?
    _CODEBOOKS[key] = table
    return table


@functools.lru_cache(maxsize=8)
def hadamard(d, device):  # context: captured
    return torch.tensor([[1.0, 1.0], [1.0, -1.0]], device=device)  # want: CG103?


def capture(g, model, input_ids, images, meta):  # context: eager
    # `images` is not a constant: whether it is None is not known here, so
    # the optional input stays conditional (a warning), not dropped.
    with torch.cuda.graph(g):
        Model().forward(input_ids, images, attn_metadata=meta)
        Model().route(input_ids, scales=images)
        Model().dispatch(input_ids)
