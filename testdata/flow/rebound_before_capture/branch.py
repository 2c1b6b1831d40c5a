import torch

from layers import MoELayer, StaticDispatcher


def capture_maybe_static(x, static):  # context: eager
    # The binding is in a branch the capture is outside of: when `static` is false the capture
    # runs the constructor's dispatcher, so the edge stays proved (CG101 is an error).
    layer = MoELayer()
    if static:
        layer.dispatcher = StaticDispatcher()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = layer(x)
    return out, g
