"""Dispatch through declared types. Where no value reaches a receiver (the backend comes from a
module imported by name, the sampler from a factory the caller passes in), its annotation
decides: the method of the declared class (annotated) and every override (hierarchy), through
Optional[T] on a class-level field annotation, a string "T | None" on a parameter, a string
return annotation, and classes imported under TYPE_CHECKING only.

Nothing dispatches by bare name: a tensor's methods (permute, unflatten), a Triton kernel's
.warmup() and .run() and a receiver of unknown type calling common names (forward, update,
capture, to) reach no project method. misc.py defines a project method for each of those names,
and KVPlanner.plan / Picker.pick outside the declared hierarchies; only eager code calls them.
"""
from typing import TYPE_CHECKING, Optional

import torch

from backends import get_backend

if TYPE_CHECKING:
    from backends.base import AttnBackend
    from backends.sampler import Sampler


class DecodeRunner:
    attn: Optional["AttnBackend"]

    def __init__(self, make_sampler, hooks):
        self.attn = None
        self.sampler = make_sampler()
        self.hooks = hooks
        self.graph = torch.cuda.CUDAGraph()

    def set_backend(self, name):  # context: eager
        self.attn = get_backend(name)

    def decode(self, q: torch.Tensor, sampler: "Sampler | None"):  # context: captured
        q = q.permute(0, 2, 1)
        q = q.unflatten(-1, (2, -1))
        return sampler.pick(self.attn.attend(q))

    def capture(self, q, positions):
        with torch.cuda.graph(self.graph):
            self.attn.plan(positions)
            self.out = self.decode(q, self.sampler)
            self.hooks.forward(self.out)
            self.hooks.update(self.out)
            self.hooks.capture(self.out)
            self.hooks.to("cuda")


def serve(cfg):  # context: eager
    runner = DecodeRunner(cfg.make_sampler, cfg.hooks)
    runner.set_backend(cfg.attention_backend)
    return runner
