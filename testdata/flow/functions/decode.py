"""Closures, nested defs and lambdas: the step closure that make_decode returns is captured with
what it calls, a lambda is captured where it is called; a nested def runs only where it is
called, never where it is defined (dump_on_error goes to eager hooks).
"""
import torch

from decorators import Sampler, embed, fused_residual, lm_head, logits_softcap, rope_cache

ERROR_HOOKS = []


def describe(x):  # context: eager
    print(x.tolist())


def make_decode(table, w, sampler):  # context: eager
    softcap = lambda x: logits_softcap(x, 30.0)  # noqa: E731

    def step(ids, res):  # context: captured
        h = fused_residual(embed(ids, table), res)
        logits = softcap(lm_head(h * rope_cache(h.shape[-1]).sum(), w))
        return sampler.sample(logits)

    def dump_on_error():  # context: eager
        # Defined beside step, handed to eager code only.
        print(table.cpu())

    ERROR_HOOKS.append(dump_on_error)
    return step


def report_errors(batch):  # context: eager
    show = lambda x: describe(x)  # noqa: E731
    show(batch)
    for hook in ERROR_HOOKS:
        hook()


class DecodeGraph:
    def __init__(self, table, w, cfg):
        self.step = make_decode(table, w, Sampler.from_config(cfg))
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, ids, res):
        with torch.cuda.graph(self.graph):
            self.out = self.step(ids, res)
