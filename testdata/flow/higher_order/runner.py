"""Higher-order flow: the capture calls whatever function value reaches it. The decode function
is a parameter of the graph runner (chosen by a selector that returns one of two), the sampler
a dict value under a key known only at run time, the filters list and tuple elements, the scaled
step a functools.partial. Function values that flow only to eager code (another dict, another
attribute, a partial called eagerly) stay eager."""
import functools

import torch

from steps import (clamp_logits, decode_fused, decode_plain, dump_logits, greedy, log_step, penalize,
                   profile_step, scaled_step, top_p)

SAMPLERS = {"greedy": greedy, "top_p": top_p}
DEBUG_SAMPLERS = {"dump": dump_logits}
FILTERS = [clamp_logits]
POST = (penalize,)


def select_decode(fused):  # context: eager
    return decode_fused if fused else decode_plain


class GraphRunner:
    def __init__(self, step_fn, mode):
        self.step_fn = step_fn
        self.sample_fn = SAMPLERS[mode]
        self.hooks = [log_step]
        self.scaled = functools.partial(scaled_step, scale=0.5)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            h = self.step_fn(x)
            for f in FILTERS:
                h = f(h)
            h = POST[0](h)
            h = self.scaled(h)
            self.out = self.sample_fn(h)

    def after_step(self, x):  # context: eager
        for hook in self.hooks:
            hook(x)
        DEBUG_SAMPLERS["dump"](x)
        functools.partial(profile_step, tag="decode")(x)


def build(fused, mode):  # context: eager
    return GraphRunner(select_decode(fused), mode)
