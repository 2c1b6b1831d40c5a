import copy

import torch

from kernels import Projector, TacticCache, cold_starts, fallback_scales, memo_order, memo_scales, tuned_starts, warm_memo, warm_starts, packed_scales, CopiedWorkspace, Rotary, WarmWorkspace, Workspace, quant_scale, rope_table, scale_rows, warm_table


def step(x, ws: Workspace):  # context: captured
    t = rope_table(64, x.device)
    s = quant_scale("w", x.device)
    b = ws.get(x.shape[0], x.device)
    ws.plan(x)
    scale_rows(x)
    Rotary(64).forward(x, x.shape[0])
    TacticCache().choose(x)
    packed_scales(s)
    fallback_scales(s, {})
    memo_order(x, ws)
    memo_scales(x, ws)
    return x * t[0] * s[0] + b


def warm_step(x, ws: WarmWorkspace):  # context: captured
    t = warm_table(64, x.device)
    b = ws.get(x.shape[0], x.device)
    ws.plan(x)
    warm_memo(x, ws)
    warm_starts(x, ws)
    return x * t[0] + b


def copied_step(x, ws: CopiedWorkspace):  # context: captured
    cold_starts(x, ws)
    return x + ws.get(x.shape[0], x.device)


class Runner:
    def __init__(self):
        self.ws = Workspace()
        self.warm_ws = WarmWorkspace()
        self.g1 = torch.cuda.CUDAGraph()
        self.g2 = torch.cuda.CUDAGraph()
        self.copied_ws = CopiedWorkspace()

    def capture_cold(self, x):
        # No warm-up call here: the set-up is only assumed to have run.
        with torch.cuda.graph(self.g1):
            self.y1 = step(x, self.ws)

    def capture_warm(self, x):
        # Warm-up: the same call once before the capture. It also runs
        # warm_starts' set-up on the workspace the capture uses.
        warm_step(x, self.warm_ws)  # want: CG202~ "derives `state.starts` from `state.lens` (in kernels.warm_starts) and `state.order`"
        torch.cuda.synchronize()
        with torch.cuda.graph(self.g2):
            self.y2 = warm_step(x, self.warm_ws)

    def capture_copied(self, x):
        # The warm-up ran on a copy of the workspace, not on the one the
        # capture uses.
        copied_step(x, copy.copy(self.copied_ws))
        with torch.cuda.graph(self.g2):
            self.y3 = copied_step(x, self.copied_ws)


def proj_step(x, proj: Projector):  # context: captured
    return proj.project(x)


class ProjRunner:
    def __init__(self):
        self.proj = Projector()
        self.g = torch.cuda.CUDAGraph()

    def capture(self, x):
        proj_step(x, self.proj)
        with torch.cuda.graph(self.g):
            self.y = proj_step(x, self.proj)


def tune(x, ws: WarmWorkspace):
    # A tuning loop: warm-up, capture and replays of a local graph.
    tuned_starts(x, ws)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = tuned_starts(x, ws)
    for _ in range(10):
        g.replay()
    return y
