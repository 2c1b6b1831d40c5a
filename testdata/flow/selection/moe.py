"""Prefill-only implementations a decode graph never builds: a factory picks the
low-latency implementation when a decode test is true (`build(ctx.is_decoding())`), so
the other one is built only where prefill is captured. Its methods are captured only
then (warnings naming the condition). When the test is mixed with a setting the analysis
cannot read, either implementation may be built in a decode graph (errors)."""
import torch


class LowLatencyExperts:
    def __init__(self, n):
        self.n = n

    def forward(self, x):  # context: captured
        return x * self.n


class NormalExperts:
    def __init__(self, n):
        self.n = n

    def forward(self, x):  # context: captured conditional
        # Token counts on the host: fine for prefill, not in a decode graph.
        counts = x.abs().sum().item()  # want: CG101?
        return x * counts


class FastExperts:
    def __init__(self, n):
        self.n = n

    def forward(self, x):  # context: captured
        return x * self.n


class GroupedExperts:
    def __init__(self, n):
        self.n = n

    def forward(self, x):  # context: captured
        return x[x.sum(-1) > 0]  # want: CG104


class MoE:
    def __init__(self, use_fast):
        self.use_fast = use_fast

    def build(self, low_latency=False):  # context: captured
        if low_latency:
            return LowLatencyExperts(8)
        return NormalExperts(8)

    def build_grouped(self, fast=False):  # context: captured
        if fast:
            return FastExperts(8)
        return GroupedExperts(8)

    def forward(self, x, ctx):  # context: captured
        low_latency = ctx.is_decoding()
        experts = self.build(low_latency)
        y = experts.forward(x)
        # A decode test and a setting: the grouped path may run in a decode
        # graph too.
        grouped = self.build_grouped(ctx.is_decoding() and self.use_fast)
        return grouped.forward(y)


def capture_decode(g, moe: MoE, x, ctx):  # context: eager
    with torch.cuda.graph(g):
        moe.forward(x, ctx)
