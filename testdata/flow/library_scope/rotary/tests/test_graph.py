import torch

from rotary.kernels import _rope_kernel, fused_add


def run_rope_reference(x, cos, sin, positions):  # context: eager
    assert positions.max().item() < cos.shape[0]
    out = torch.empty_like(x)
    _rope_kernel[(1,)](x, cos, sin, out, x.numel(), BLOCK=1024)
    return out


def test_add_captures():
    a = torch.ones(8, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fused_add(a, a)
    g.replay()
    assert out.sum().item() == 16
