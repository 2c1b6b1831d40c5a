"""One-time set-up that the warm-up before capture already ran: lazy buffers (`if
self.x is None: self.x = ...`, `if not hasattr(state, "x"): state.x = ...`, `if
getattr(state, "x", None) is None: ...`), run-once flags, memo dicts and
`@functools.cache` bodies run on the first call only. Captured only through calls of which the
capturing function made a warm-up call before the capture region, that set-up is
not captured (no finding); where no warm-up is proved, it is a warning naming the
assumption."""
import functools

import torch

_SCALES = {}


@functools.cache
def rope_table(dim, device):  # context: captured
    return torch.tensor([1.0 / (10000 ** (i / dim)) for i in range(0, dim, 2)], device=device)  # want: CG103?


def quant_scale(key, device):  # context: captured
    if key in _SCALES:
        return _SCALES[key]
    s = torch.tensor([0.5, 1.0, 2.0], device=device)  # want: CG103?
    _SCALES[key] = s
    return s


class Workspace:
    def __init__(self):
        self.buf = None
        self.planned = False

    def get(self, n, device):  # context: captured
        if self.buf is None:
            self.buf = torch.tensor([0.0] * n, device=device)  # want: CG103?
        return self.buf[:n]

    def plan(self, lens):  # context: captured
        if not self.planned:
            self.max_len = int(lens.max().item())  # want: CG101?
            self.planned = True
        return self.max_len


class WarmWorkspace:
    def __init__(self):
        self.buf = None
        self.planned = False

    def get(self, n, device):  # context: captured
        if self.buf is None:
            self.buf = torch.tensor([0.0] * n, device=device)
        return self.buf[:n]

    def plan(self, lens):  # context: captured
        if not self.planned:
            self.max_len = int(lens.max().item())
            self.planned = True
        # Not set-up: runs on every call.
        return lens.nonzero()  # want: CG104


@functools.lru_cache(maxsize=None)
def warm_table(dim, device):  # context: captured
    return torch.tensor([1.0] * dim, device=device)


class CopiedWorkspace:
    def __init__(self):
        self.buf = None

    def get(self, n, device):  # context: captured
        # Warmed up only on a copy of this object (runner.py): the captured
        # object's buffer is still unset, so this is only assumed.
        if self.buf is None:
            self.buf = torch.tensor([0.0] * n, device=device)  # want: CG103?
        return self.buf[:n]


def scale_rows(x, out=None):  # context: captured
    # An output parameter allocated when absent: every call, not set-up.
    if out is None:
        out = torch.tensor([2.0] * x.shape[0], device=x.device)  # want: CG103
    return out


class Rotary:
    def __init__(self, dim):
        self.dim = dim
        self.max_cached = 0
        self.limit = 4096

    def _build(self, n, device):  # context: captured conditional
        self.max_cached = n
        self.cos = torch.tensor([float(i) for i in range(n)], device=device)  # want: CG103?

    def _check(self, n, device):  # context: captured conditional
        # Does not raise the bound it is called under: not set-up.
        return torch.tensor([float(n)], device=device)  # want: CG103?

    def forward(self, x, seq_len):  # context: captured
        if seq_len > self.max_cached:
            # Grown when the input outgrows the table: the warm-up grew it.
            self._build(seq_len, x.device)
        if seq_len > self.limit:
            self._check(seq_len, x.device)
        return self.cos[:seq_len]


_PACKED = {}


class TacticCache:
    def __init__(self):
        self._winners = {}

    def _select(self, x):  # context: captured conditional
        # Timing candidates: runs on a cache miss only, which the warm-up took.
        return int(x.abs().argmax().item())  # want: CG101?

    def choose(self, x):  # context: captured
        key = (x.shape[0], x.dtype)
        winner = self._winners.get(key)
        if winner is None:
            winner = self._select(x)
            self._winners[key] = winner
        return winner


def packed_scales(s):  # context: captured
    packed = _PACKED.get(id(s))
    if packed is None:
        packed = torch.tensor([1.0, 2.0], device=s.device)  # want: CG103?
        _PACKED[id(s)] = packed
    return packed


def fallback_scales(s, table):  # context: captured
    # A lookup whose miss is never stored: it runs on every miss, not set-up.
    scale = table.get(s.shape[0])
    if scale is None:
        scale = torch.tensor([1.0], device=s.device)  # want: CG103?
    return scale


def memo_order(x, state):  # context: captured
    if not hasattr(state, "order"):
        state.order = torch.tensor([0, 1, 2], device=x.device)  # want: CG103?
    return state.order


def memo_scales(x, state):  # context: captured
    if getattr(state, "scales", None) is None:
        state.scales = torch.tensor([1.0, 2.0], device=x.device)  # want: CG103?
    return state.scales


def warm_memo(x, state):  # context: captured
    if not hasattr(state, "order"):
        state.order = torch.tensor([0, 1, 2], device=x.device)
    if getattr(state, "scales", None) is None:
        state.scales = torch.tensor([1.0, 2.0], device=x.device)
    # A probe of another attribute than the branch sets: not set-up, only a condition.
    if not hasattr(state, "limit"):
        state.bound = torch.tensor([4.0], device=x.device)  # want: CG103?
    return state.order, state.scales


def warm_starts(x, state):  # context: captured
    # Set-up derived from the step's inputs: the warm-up ran it on the same
    # state, so the graph reads the warm-up batch's offsets.
    if not hasattr(state, "starts"):
        state.starts = torch.cumsum(state.lens, 0)
    if getattr(state, "order", None) is None:
        order = torch.empty_like(state.lens)
        torch.cumsum(state.lens.flip(0), 0, out=order)
        state.order = order
    # A buffer only allocated once and filled on every call: no finding.
    if not hasattr(state, "staging"):
        state.staging = torch.empty_like(x)
    state.staging.copy_(x)
    # The graph reads both as the warm-up left them (the finding is on the
    # warm-up call, runner.py).
    return state.staging + state.starts[0] + state.order[0]


def tuned_starts(x, state):  # context: captured
    # Warmed up on the same state, but the graph lives and replays only in the
    # tuning loop that captures it, on the inputs it was warmed up with.
    if not hasattr(state, "starts"):
        state.starts = torch.cumsum(state.lens, 0)
    return x + state.starts[0]


class Projector:
    def __init__(self):
        self.weight = torch.ones(4, 4, device="cuda")

    def project(self, x):  # context: captured
        # A lazy copy of the module's own weight (the receiver's state, not
        # the step's input): the same on every replay, though a warm-up made it.
        if not hasattr(self, "w_t"):
            self.w_t = self.weight.t().contiguous()
        return x @ self.w_t


def cold_starts(x, state):  # context: captured
    # The same set-up warmed up on a copy of the state: it runs under capture.
    if not hasattr(state, "starts"):
        state.starts = torch.cumsum(state.lens, 0)
    return x + state.starts[0]


def reset_tables():  # context: eager
    rope_table.cache_clear()
    _SCALES.clear()
    _PACKED.clear()
