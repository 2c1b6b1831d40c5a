"""Tests parametrized over module kinds: each captures the modules of its own kinds only.

test_replay names dense and gated, so Routed and Grouped are never captured by it; test_grouped
names grouped (two parameters at once), and its capture reaches Grouped's host read. A parameter
the test rebinds, or one a parametrize leaves to a fixture (indirect), stands for any kind.
"""
import pytest
import torch

from modules import make_module


@pytest.mark.parametrize("kind", ["dense", "gated"])
def test_replay(kind):
    module = make_module(kind, 64)
    x = torch.randn(8, 64, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = module(x)
    graph.replay()
    assert y.shape == x.shape


@pytest.mark.parametrize("kind, dim", [("grouped", 64), ("grouped", 128)])
def test_grouped(kind, dim):
    module = make_module(kind, dim)
    x = torch.randn(8, dim, device="cuda")
    splits = torch.tensor([4, 4], device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = module(x, splits)
    graph.replay()
    assert y.shape == x.shape
