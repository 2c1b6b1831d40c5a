"""Random draws in a captured step are made where the tensor they are given is: `torch.randn_like(x)`
and `torch.multinomial(probs, 1)` of device tensors are device tensors, and `.item()` of one is a
host sync; `torch.rand_like` of a CPU tensor is a CPU tensor, and `torch.normal(0.0, 1.0, size)`,
drawn from numbers, is on the default device (the CPU here)."""
import torch


class Sampler:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.logits = torch.zeros(8, 32, device="cuda")
        self.out = None

    def step(self, logits):
        noise = torch.randn_like(logits)
        top = noise.max().item()  # want: CG101
        probs = torch.softmax(logits, dim=-1)
        tok = torch.multinomial(probs, 1)
        first = tok[0].item()  # want: CG101
        jitter = torch.rand_like(torch.zeros(4))
        j = jitter.max().item()
        base = torch.normal(0.0, 1.0, (4,))
        b = base.sum().item()
        return logits * (top + first + j + b)

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = self.step(self.logits)
