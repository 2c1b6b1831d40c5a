"""A lazy graph runner on Intel Gaudi's bridge: the first call allocates its static buffers, then
captures into an HPU graph; every call copies its input in and replays. The buffers are bound once,
before the capture, in the block that makes the graph: set-up, not preparation between replays.
What is bound again after the capture is."""
import habana_frameworks.torch as htcore
import torch


def scale_scores(scores):  # context: captured
    if scores.isnan().any().item():  # want: CG101
        scores = torch.nan_to_num(scores)
    return scores * 0.5


class StaticWarper:
    def __init__(self):
        self.hpu_graph = None
        self.static_scores = None
        self.static_out = None

    def __call__(self, scores):  # context: eager
        if self.hpu_graph is None:
            self.static_scores = scores.clone().contiguous()
            self.static_out = scores.clone().contiguous()
            self.hpu_graph = htcore.hpu.HPUGraph()
            with htcore.hpu.graph(self.hpu_graph):
                self.static_out.copy_(scale_scores(self.static_scores))
        self.static_scores.copy_(scores)
        self.hpu_graph.replay()
        return self.static_out

    def refresh(self, scores):  # context: eager
        self.static_scores = scores.float()  # want: CG201~
        self.hpu_graph.replay()
        return self.static_out
