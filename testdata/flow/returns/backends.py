"""Return values and getattr: a factory returns the attention backend the capture calls (either
class it may return), through a second factory; getattr(obj, "literal") is the attribute it
names, no other. Prefill never runs in the graph."""
import torch


class FlashDecode:
    def decode(self, q):  # context: captured
        if q.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan q")
        return q.softmax(-1)

    def prefill(self, q):  # context: eager
        if q.isnan().any().item():
            raise FloatingPointError("nan q")
        return q.softmax(-1)


class TritonDecode:
    def decode(self, q):  # context: captured
        if q.isinf().any().item():  # want: CG101
            raise FloatingPointError("inf q")
        return q.softmax(-1)

    def prefill(self, q):  # context: eager
        if q.isinf().any().item():
            raise FloatingPointError("inf q")
        return q.softmax(-1)


class Sampler:
    def sample(self, logits):  # context: eager
        return logits.argmax(-1).tolist()


def make_backend(name):  # context: eager
    if name == "flash":
        return FlashDecode()
    return TritonDecode()


def backend_for(cfg):  # context: eager
    return make_backend(cfg.attention_backend)


def make_sampler():  # context: eager
    return Sampler()


class Runner:
    def __init__(self, cfg):
        self.backend = backend_for(cfg)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q):
        with torch.cuda.graph(self.graph):
            decode = getattr(self.backend, "decode")
            self.out = decode(q)

    def prefill(self, q):  # context: eager
        getattr(self.backend, "prefill")(q)
        return make_sampler().sample(q)
