"""Issue 18, the per-instance persistent buffer: each layer's scale update
between replays (`self.w_scale = scale.to(torch.float32)`) rebinds what the
graph read. The (unsafe) fix binds a persistent buffer filled with copy_,
keyed per instance: a key per class and site would make both layers share
one buffer, and every layer would read the last layer's scale.
capguard verify expectation (with --unsafe-fixes): original stale-read,
fixed clean.
"""
import torch
from torch import nn


# Captured kernels must read stable addresses: keep per-call temporaries in
# buffers that outlive every graph (see `capguard rule CG301`).
_persistent_buffers = {}
_retired_buffers = []


def persistent_buffer(site, src, dtype=None, copy=False):
    """Copy src into the persistent buffer of site; return a view shaped like src."""
    dtype = src.dtype if dtype is None else dtype
    if not copy and dtype == src.dtype and src.is_cuda and src.is_contiguous() and torch.cuda.is_current_stream_capturing():
        return src  # nothing to convert: the graph reads the source where it is
    key = (site, dtype, src.device)
    n = src.numel()
    buf = _persistent_buffers.get(key)
    if buf is None or buf.numel() < n:
        if src.is_cuda and torch.cuda.is_current_stream_capturing():
            have = 0 if buf is None else buf.numel()
            raise RuntimeError(
                f"persistent_buffer {site!r}: needs {n} elements of {dtype} on "
                f"{src.device} but has {have} while the stream is capturing; "
                "warm up at the largest batch size before capture"
            )
        if buf is not None:
            _retired_buffers.append(buf)  # a graph captured earlier may read it
        buf = torch.empty(n, dtype=dtype, device=src.device)
        _persistent_buffers[key] = buf
    out = buf[:n].view(src.shape)
    out.copy_(src)
    return out


class ScaledLinear(nn.Module):
    def __init__(self, dim, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.eye(dim, device=scale.device))
        self.w_scale = scale.to(torch.float32)  # a plain tensor attribute (a Parameter refuses a tensor)

    def forward(self, x):
        return (x @ self.weight) * self.w_scale

    def update_params(self, scale):
        self.w_scale = persistent_buffer((id(self), "testdata.verify.fixmodel_layer_scales.ScaledLinear.update_params.self.w_scale"), scale, torch.float32)


LAYERS = []


def load_scales(scale):
    """Runs before capture and before every replay (a weight update)."""
    if not LAYERS:
        LAYERS.extend(ScaledLinear(128, torch.ones(128, device=scale.device)) for _ in range(2))
    LAYERS[0].update_params(scale)
    LAYERS[1].update_params(scale * 2 + 1)


def two_layers(x):
    return LAYERS[1](LAYERS[0](x))


class Runner:
    def capture(self, x, scale):
        load_scales(scale)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = two_layers(x)

    def replay(self, x, scale):
        load_scales(scale)
        self.graph.replay()
        return self.out
