"""Containers: stages and functions reach the capture through a list literal, append, extend,
indexing, iteration over a slice and with enumerate, tuple unpacking, dict literals and item
assignment with .items() and .values(), and a list comprehension over a tuple. The probes list and
the debug functions are read by eager code only."""
import torch

from stages import (AttnStage, EmbedStage, LmHead, MlpStage, MtpHead, NormStage, ProbeStage, clamp, softcap,
                    trace_stats)


class Pipeline:
    def __init__(self, dim):
        self.stages = [AttnStage(dim)]
        self.stages.append(EmbedStage(dim))
        self.stages.extend([MlpStage(dim)])
        self.norm, self.head = NormStage(dim), LmHead(dim)
        self.heads = {"lm": self.head}
        self.extra = {}
        self.extra["mtp"] = MtpHead(dim)
        self.post = [fn for fn in (softcap, clamp)]
        self.probes = [ProbeStage(dim)]
        self.debug_fns = [trace_stats]
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            x = self.stages[0].run_stage(x)
            for i, stage in enumerate(self.stages[1:]):
                x = stage.run_stage(x)
            x = self.norm.run_stage(x)
            for name, head in self.heads.items():
                x = head.run_stage(x)
            for head in self.extra.values():
                x = head.run_stage(x)
            for fn in self.post:
                x = fn(x)
            self.out = x

    def debug(self, x):  # context: eager
        for probe in self.probes:
            probe.run_stage(x)
        for fn in self.debug_fns:
            fn(x)
