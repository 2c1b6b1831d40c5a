"""Wrapper objects whose builder methods return self, an identity helper shared by two wrappers,
and a graph runner that captures only the decode API: the other APIs, and the implementation the
other wrapper keeps, stay eager."""
import torch

from logging_api import decode_attention, keep, prefill_attention, public_api, top_p_sample


class PagedImpl:
    def forward(self, q, k_cache, seq_lens):  # context: captured
        return decode_attention(q, k_cache, seq_lens)


class RaggedImpl:
    def forward(self, q, k, cu_seqlens):  # context: eager
        if cu_seqlens[-1].item() == 0:  # eager: the identity helper keeps each impl apart
            return q
        return prefill_attention(q, k, cu_seqlens)


class DecodeWrapper:
    def __init__(self, k_cache):  # context: eager
        self.k_cache = k_cache
        self.impl = keep(PagedImpl())

    def to(self, device):  # context: eager
        self.k_cache = self.k_cache.to(device)
        return self

    def run(self, q, seq_lens):  # context: captured
        return self.impl.forward(q, self.k_cache, seq_lens)


class PrefillWrapper:
    def __init__(self, k):  # context: eager
        self.k = k
        self.impl = keep(RaggedImpl())

    def to(self, device):  # context: eager
        self.k = self.k.to(device)
        return self

    def run(self, q, cu_seqlens):  # context: eager
        return self.impl.forward(q, self.k, cu_seqlens)


class Sampler:
    def run(self, probs, top_p):  # context: eager
        return top_p_sample(probs, top_p)


class GraphRunner:
    def __init__(self, k_cache, k):
        self.decode = DecodeWrapper(k_cache).to("cuda")
        self.prefill = PrefillWrapper(k).to("cuda")
        self.sampler = Sampler()
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q, seq_lens):
        with torch.cuda.graph(self.graph):
            self.out = self.decode.run(q, seq_lens)

    def prefill_step(self, q, cu_seqlens, top_p):  # context: eager
        logits = self.prefill.run(q, cu_seqlens)
        return self.sampler.run(logits.softmax(-1), top_p)


def build_runner(k_cache, k):  # context: eager
    return GraphRunner(k_cache, k)


class CascadeWrapper:
    def __init__(self, levels):  # context: eager
        self._levels = [DecodeWrapper(k) for k in levels]

    @public_api(meta=print)
    def plan(self, seq_lens):  # context: eager
        return int(seq_lens.max().item())

    @public_api(meta=print)
    def run(self, q, seq_lens):  # context: captured
        out = self._levels[-1].run(q, seq_lens)
        for level in self._levels[:-1]:
            out = out + level.run(q, seq_lens)
        return out


class CascadeRunner:
    def __init__(self, levels):
        self.cascade = CascadeWrapper(levels)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q, seq_lens):
        self.cascade.plan(seq_lens)
        with torch.cuda.graph(self.graph):
            self.out = self.cascade.run(q, seq_lens)


def pick_decode():  # context: eager
    return decode_attention


class LocalRunner:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q, k_cache, seq_lens):
        attn = pick_decode()
        with torch.cuda.graph(self.graph):
            self.out = attn(q, k_cache, seq_lens)


def bench_with_graph(fn, *args):
    def call_fn():  # context: captured
        return fn(*args)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = call_fn()
    return graph, out


def bench_decode(q, k_cache, seq_lens):  # context: eager
    return bench_with_graph(decode_attention, q, k_cache, seq_lens)
