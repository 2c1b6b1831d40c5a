"""Legacy tensor constructors in a captured step. Given sizes they allocate, as torch.empty does:
several sizes, a shape (a torch.Size is read as sizes), a literal count. Given data (a list) they
copy it from the host, which capture refuses. Given one value the value model cannot tell from a
size, the finding is a warning that names the assumption."""
import torch


class Binner:
    def __init__(self, width):
        self.width = width
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(16, 4, device="cuda")
        self.out = None

    def step(self, x):
        acc = torch.cuda.FloatTensor(x.shape[0], 4).zero_()
        mask = torch.cuda.LongTensor(x.shape).zero_()
        scratch = torch.cuda.FloatTensor(8).zero_()
        weights = torch.cuda.FloatTensor([0.5, 2.0])  # want: CG103
        bins = torch.cuda.IntTensor(self.width)  # want: CG103~
        acc += x * weights[0] + mask + scratch.sum()
        return acc, bins

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = self.step(self.x)

    def replay(self, x):
        self.x.copy_(x)
        self.graph.replay()
        return self.out
