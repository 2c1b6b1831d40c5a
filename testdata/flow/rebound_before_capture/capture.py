import torch

from layers import Block, DerivedStatic, Gate, MoELayer, QuietRouter, StaticDispatcher, fast_head


def test_static_dispatch(x):  # context: eager
    layer = MoELayer()
    layer.dispatcher = StaticDispatcher()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = layer(x)
    g.replay()
    return out


def test_derived_dispatch(x, sizes):  # context: eager
    layer = MoELayer()
    layer.dispatcher = DerivedStatic()
    for bs in sizes:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = layer(x[:bs])
        g.replay()
    return out


def test_fast_head(x):  # context: eager
    block = Block()
    block.head = fast_head
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = block(x)
    return out, g


def test_quiet_router(x):  # context: eager
    gate = Gate()
    gate.router = QuietRouter()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = gate(x)
    return out, g
