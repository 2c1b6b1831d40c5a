"""Suppression comments: used, unused, and without a reason."""
import torch


def step(x, g):
    with torch.cuda.graph(g):
        a = x.max().item()  # capguard: ignore[CG101] read once per graph: x is the fixed bucket size tensor
        b = x.min().item()  # noqa: CG101
        c = x.sum().item()  # capguard: ignore[CG101]  # want: CG900 CG101
        d = x + 1  # noqa: CG104  # want: CG901
        e = x * 2  # noqa: E501
        f = x.mean().item()  # noqa
        h = x * 3  # noqa
    return a, b, c, d, e, f, h
