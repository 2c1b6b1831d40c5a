"""CG101 positive: a torch.autograd.Function whose backward reads a tensor on the host, in a
training step captured whole.

No code calls `ClipGrad.backward`: autograd runs it when the captured step calls `loss.backward()`,
so the `.item()` in it runs while the stream captures, which forbids the synchronization.
GPU expectation: capture-error.
"""
# probe: CG101 positive
import torch


class ClipGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, grad):
        if grad.abs().max().item() > 1e4:  # want: CG101~
            grad = grad.clamp(-1e4, 1e4)
        return grad * 2.0


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
