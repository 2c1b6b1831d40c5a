"""Decorators: functools.wraps wrappers, lru_cache, torch.compile, torch.inference_mode and
torch.no_grad are transparent (calling the decorated name runs the function); staticmethod,
classmethod and property methods are reached through the class or the instance. A decorator
itself runs once, at import: it is eager, and only the wrapper it returns is captured.
"""
import functools

import torch


def traced(fn):  # context: eager
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # context: captured
        return fn(*args, **kwargs)

    return wrapper


@traced
def embed(ids, table):  # context: captured
    if ids.max().item() >= table.shape[0]:  # want: CG101
        raise IndexError("token id out of range")
    return table[ids]


@functools.lru_cache(maxsize=None)
def rope_cache(dim):  # context: captured
    inv = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, device="cuda").float() / dim))
    if inv.isnan().any().item():  # want: CG101?
        raise FloatingPointError("bad rope base")
    return inv


@torch.compile(dynamic=False)
def fused_residual(x, res):  # context: captured
    if res.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan residual")
    return x + res


@torch.inference_mode()
def lm_head(h, w):  # context: captured
    if w.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan head weight")
    return h @ w.t()


@torch.no_grad()
def logits_softcap(x, cap):  # context: captured
    if x.isinf().any().item():  # want: CG101
        raise FloatingPointError("inf logits")
    return torch.tanh(x / cap) * cap


class Sampler:
    def __init__(self, temperature):
        self._temperature = temperature

    @property
    def temperature(self):  # context: captured
        if self._temperature.min().item() <= 0:  # want: CG101
            raise ValueError("temperature must be positive")
        return self._temperature

    @staticmethod
    def top1(logits):  # context: captured
        if logits.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan logits")
        return logits.argmax(-1)

    @classmethod
    def from_config(cls, cfg):  # context: eager
        if cfg.temperature.min().item() <= 0:
            raise ValueError("temperature must be positive")
        return cls(cfg.temperature)

    def sample(self, logits):  # context: captured
        return Sampler.top1(logits / self.temperature)
