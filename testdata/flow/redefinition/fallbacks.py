"""Rebindings whose earlier value code running after the import may still see: a definition
under a condition (a fused sampler only when its extension is present), a name a function rebinds
through a `global` statement (a debug switch), and a name a function called during the import
reads before the rebinding (a default chosen at import). Each keeps every binding.
"""
import os

import torch


def _portable_top_k(logits, k):  # context: captured
    if logits.isnan().any().item():  # want: CG101
        raise ValueError("nan logits")
    return torch.topk(logits, k).indices[:, :1]


top_k_sample = _portable_top_k

if os.environ.get("SAMPLER_FUSED", "1") == "1":

    def top_k_sample(logits, k):  # context: captured
        return torch.topk(logits, k).indices[:, :1]


def _gather_last_debug(hidden, seq_lens):  # context: captured
    rows = seq_lens.cumsum(0).tolist()  # want: CG101
    return hidden[rows[-1] - 1]


def _gather_last_fast(hidden, seq_lens):  # context: captured
    return hidden.index_select(0, seq_lens.cumsum(0) - 1)


gather_last = _gather_last_debug
gather_last = _gather_last_fast


def use_gather(fn):  # context: eager
    global gather_last
    gather_last = fn


def _default_scale():  # context: eager
    return absmax_scale


def _checked_absmax_scale(x):  # context: captured
    if x.isinf().any().item():  # want: CG101
        raise FloatingPointError("inf in the activations")
    return (x.abs().amax() / 448.0).reshape(1)


absmax_scale = _checked_absmax_scale
DEFAULT_SCALE = _default_scale()


def _absmax_scale(x):  # context: captured
    return (x.abs().amax() / 448.0).reshape(1)


absmax_scale = _absmax_scale


def decode(logits, hidden, seq_lens):  # context: captured
    ids = top_k_sample(logits, 8)
    last = gather_last(hidden, seq_lens)
    return ids, last * DEFAULT_SCALE(last)


def capture(logits, hidden, seq_lens):  # context: eager
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = decode(logits, hidden, seq_lens)
    return g, out
