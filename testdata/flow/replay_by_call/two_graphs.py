"""Two graphs: the model's, captured by its runner, and a sampler's, which the sampler captures on
its first call and replays on the later ones. A step runs the model eagerly and then samples: the
code before the sampler's call prepares the sampler's graph, which reads only the sampler's own
buffers, so rebinding the model's bias there is no state that graph reads. The code before the
runner's call prepares the model's graph, which reads the bias. (What runs before the sampler's
call, the model's forward and its replay, is replay-prep of the sampler's graph.)"""
import torch


class Sampler:
    def __init__(self, vocab):  # context: eager
        self.logits = torch.zeros(vocab, device="cuda")
        self.graph = None
        self.out = None

    def pick(self):  # context: captured
        return self.logits.argmax()

    def __call__(self, logits):  # context: eager
        self.logits.copy_(logits)
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out = self.pick()
        self.graph.replay()
        return self.out


class Layer:
    def __init__(self, width):  # context: eager
        self.bias = torch.zeros(width, device="cuda")

    def forward(self, x):  # context: captured replay-prep
        return x + self.bias

    def refresh(self, b: torch.Tensor):  # context: replay-prep
        self.bias = b + 0  # want: CG201~

    def convert(self, b: torch.Tensor):  # context: replay-prep
        self.bias = b * 1


class ModelRunner:
    def __init__(self, width):  # context: eager
        self.layer = Layer(width)
        self.x = torch.zeros(width, device="cuda")
        self.graph = torch.cuda.CUDAGraph()
        self.out = None

    def capture(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.layer.forward(self.x)

    def launch(self):  # context: replay-prep
        self.graph.replay()
        return self.out


def decode(runner: ModelRunner, sampler: Sampler, b: torch.Tensor):  # context: eager
    runner.layer.refresh(b)
    out = runner.launch()
    return sampler(out)


def eager_step(runner: ModelRunner, sampler: Sampler, b: torch.Tensor):  # context: eager
    runner.layer.convert(b)
    logits = runner.layer.forward(runner.x)
    return sampler(logits)
