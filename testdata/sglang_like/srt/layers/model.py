"""A tiny decoder: embedding, attention, MoE routing and sampling, all inside the captured step."""
import torch

from .moe_router import TopKRouter
from .sampler import Sampler


class TinyDecoder(torch.nn.Module):
    def __init__(self, vocab, attn_backend):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, 64)
        self.attn_backend = attn_backend
        self.router = TopKRouter(64, 8)
        self.sampler = Sampler()
        self.k_cache = torch.zeros((4096, 64))

    def forward(self, input_ids, positions, cu_seqlens):
        h = self.embed(input_ids)
        a = self.attn_backend.forward_decode(h, self.k_cache, 0)
        h = h + a[:, None]
        h = self.router(h)
        return self.sampler.sample(h, positions)
