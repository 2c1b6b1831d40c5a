"""CG101 negative: a torch.autograd.Function whose backward stays on the device, in a
training step captured whole.

The control of cg101_autograd_backward_pos: the same captured training step, whose Function's
backward clamps on the device instead of testing a host value first. Autograd runs it under
capture, and nothing in it synchronizes.
GPU expectation: clean.
"""
# probe: CG101 negative
import torch


class ClipGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-1e4, 1e4) * 2.0


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev, requires_grad=True)
    return st


def fill(st, gen):
    with torch.no_grad():
        st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    y = ClipGrad.apply(st.x)
    loss = y.square().mean()
    loss.backward()
    return loss.detach()


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
