"""A training step captured whole runs the backward pass under capture too: autograd calls the
backward of every torch.autograd.Function the captured forward applied, though no code names it.
Whether the backward pass goes through a given apply's output is not proved (a detached output,
a no-grad region), so the chain names that assumption and its findings are warnings. A Function
applied only in a decode step captured without a backward pass keeps an eager backward."""
import torch


class ClipGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):  # context: captured
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, grad):  # context: captured
        if grad.abs().max().item() > 1e4:  # want: CG101~
            grad = grad.clamp(-1e4, 1e4)
        return grad * ctx.scale, None


class Norm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # context: captured
        return x / x.norm(dim=-1, keepdim=True)

    @staticmethod
    def backward(ctx, grad):  # context: eager
        if grad.isnan().any().item():
            raise RuntimeError("nan gradient")
        return grad


def train_step(x, w):  # context: captured
    y = ClipGrad.apply(x @ w, 0.5)
    loss = y.square().mean()
    loss.backward()
    return loss


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # context: captured
        return x * 2

    @staticmethod
    def backward(ctx, grad):  # context: captured
        return grad * int(grad.sum())  # want: CG101~


class Stepper:
    def __init__(self):
        self.loss = None

    def step(self, x):  # context: captured
        self.loss = ScaleGrad.apply(x).mean()
        self.loss.backward()


def decode_step(x):  # context: captured
    return Norm.apply(x)


class Trainer:
    def __init__(self):
        self.train_graph = torch.cuda.CUDAGraph()
        self.decode_graph = torch.cuda.CUDAGraph()
        self.step_graph = torch.cuda.CUDAGraph()
        self.stepper = Stepper()

    def capture(self, x, w):  # context: eager
        with torch.cuda.graph(self.train_graph):
            self.loss = train_step(x, w)
        with torch.cuda.graph(self.decode_graph):
            self.out = decode_step(x)

    def capture_step(self, x):  # context: eager
        with torch.cuda.graph(self.step_graph):
            self.stepper.step(x)
