import torch

from api import logged


@logged
def scale_rows(x, w):  # context: captured
    return x * w


@logged
def count_hits(ids):  # context: eager
    return int((ids > 0).sum().item())


class Sampler:
    @logged
    def sample(self, logits):  # context: captured
        return logits.argmax(-1)

    @logged
    def debug_topk(self, logits):  # context: eager
        return logits[logits > logits.max().item() - 1]
