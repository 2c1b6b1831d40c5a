import ray
import torch

from .ops import _launch


@ray.remote(num_gpus=1)
class RolloutWorker:
    def generate(self, x):  # context: eager
        return _launch(x, x.max().item())


class Scorer:
    def score(self, x):  # context: eager
        return _launch(x, x.mean().item())


ScorerActor = ray.remote(num_cpus=1)(Scorer)


@ray.remote
def reduce_scores(x):  # context: eager
    return _launch(x, x.sum().item())


class LocalScorer:
    def score(self, x):  # context: launcher
        # the same work on a plain class: a caller may capture it
        return _launch(x, x.mean().item())  # want: CG101~
