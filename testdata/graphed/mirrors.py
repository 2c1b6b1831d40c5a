"""Host values under capture by what the value model proves, and by name only. A value read
from device data in the capturing code is proved host data baked into the graph (an error).
A `*_cpu` attribute of an object the analysis cannot follow is a CPU mirror by its name
only: a per-step copy of the sequence lengths would go stale, a scale read once at load
would not. That is an assumption, so a warning that names it."""
import torch


def scaled_decode(q, cache, scales, out):
    n = int(q.abs().amax().item())  # want: CG101
    tile = torch.empty(n, device=q.device)  # want: CG102
    torch.ops.engine.paged_decode(out, q, cache, tile, scales.key_scale_cpu)  # want: CG102~
    return out


def capture(g, q, cache, scales, out):
    scaled_decode(q, cache, scales, out)
    with torch.cuda.graph(g):
        scaled_decode(q, cache, scales, out)
