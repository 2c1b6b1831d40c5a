"""Host values under capture by what the value model proves, and by name only. A value read
from device data in the capturing code is proved host data baked into the graph (an error).
A `*_cpu` attribute of an object the analysis cannot follow is a CPU mirror by its name
only: a per-step copy of the sequence lengths would go stale, a scale read once at load
would not. Likewise a value read from a tensor the value model proves is on the host (a
configuration an extension fills once): whether it changes between replays depends on writes
the model does not follow. Assumptions, so warnings that name them."""
from dataclasses import dataclass

import torch


def scaled_decode(q, cache, scales, out):
    n = int(q.abs().amax().item())  # want: CG101
    tile = torch.empty(n, device=q.device)  # want: CG102
    torch.ops.engine.paged_decode(out, q, cache, tile, scales.key_scale_cpu)  # want: CG102~
    return out


def routed_decode(q, out):
    cfg = torch.empty(4, dtype=torch.int32, device="cpu")
    torch.ops.engine.read_config(cfg)
    slots = int(cfg[0].item())
    table = torch.empty((slots,), dtype=torch.int32, device=q.device)  # want: CG102~
    torch.ops.engine.route(out, q, table)
    return out


def masked_decode(q, out, q_lens_cpu, kv_lens_cpu):
    active_cpu = (q_lens_cpu > 0) & (kv_lens_cpu > 0)
    if not bool(active_cpu.all().item()):
        out.zero_()
    active = (q.abs().sum(-1) > 0) & (out.abs().sum(-1) >= 0)
    if not bool(active.all().item()):  # want: CG101
        out.zero_()
    return out


@dataclass
class ParallelMeta:
    tokens_per_rank_cpu: torch.Tensor


@dataclass
class StepContext:
    parallel: ParallelMeta | None = None


_STEP: StepContext | None = None


def step_context() -> StepContext:
    assert _STEP is not None
    return _STEP


def expected_rows(out):
    """A reduction of a `*_cpu` attribute runs on the host, whatever the model makes of the
    object that holds it (a field of a context object): its `.item()` synchronizes nothing."""
    meta = step_context().parallel if _STEP is not None else None
    if meta is None:
        return out
    rows = meta.tokens_per_rank_cpu.sum().item()
    return out[:rows]  # want: CG102~


def capture(g, q, cache, scales, out, q_lens_cpu, kv_lens_cpu):
    scaled_decode(q, cache, scales, out)
    routed_decode(q, out)
    masked_decode(q, out, q_lens_cpu, kv_lens_cpu)
    with torch.cuda.graph(g):
        scaled_decode(q, cache, scales, out)
        routed_decode(q, out)
        masked_decode(q, out, q_lens_cpu, kv_lens_cpu)
        expected_rows(out)
