"""A program's entry runs once: what its `main` does before the loop that replays (loading,
converting the weights) runs before the first replay, not between two; what the loop does
before each replay runs between replays. A runner that captures on its first call replays on
the later ones."""
import torch


class Weights:
    def __init__(self, width):  # context: eager
        self.w = torch.ones(width, device="cuda")
        self.scale = torch.ones(width, device="cuda")

    def convert(self):  # context: eager
        self.w = self.w.half().float()

    def rescale(self, s: torch.Tensor):  # context: replay-prep
        self.scale = s * 2  # want: CG201~


class LazyRunner:
    def __init__(self, weights: Weights):  # context: eager
        self.weights = weights
        self.x = torch.zeros(weights.w.shape[0], device="cuda")
        self.graph = None
        self.out = None

    def body(self):  # context: captured
        return self.x * self.weights.w * self.weights.scale

    def step(self):  # context: eager
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out = self.body()
        self.graph.replay()
        return self.out


def main():  # context: eager
    weights = Weights(8)
    weights.convert()
    runner = LazyRunner(weights)
    for s in [torch.ones(8, device="cuda")] * 3:
        weights.rescale(s)
        runner.step()


if __name__ == "__main__":
    main()
