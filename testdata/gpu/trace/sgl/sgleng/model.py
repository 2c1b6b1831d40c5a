"""A small decoder: embeddings with learned positions, attention through the
backend, a top-2 mixture of experts, random weights from a seed."""

import torch

from . import plants


class Config(object):
    vocab = 512
    hidden = 256
    heads = 4
    head_dim = 64
    layers = 2
    experts = 4
    topk = 2
    ffn = 384
    max_ctx = 128
    max_reqs = 17  # request 0 is the padding's dummy

    @property
    def num_slots(self):
        return self.max_reqs * self.max_ctx


def rms_norm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


class MoE(object):
    def __init__(self, cfg, g, device):
        r = lambda *s: torch.randn(*s, generator=g, device=device) / (s[-2] ** 0.5)  # noqa: E731
        self.cfg = cfg
        self.router = r(cfg.hidden, cfg.experts)
        self.w1 = [r(cfg.hidden, cfg.ffn) for _ in range(cfg.experts)]
        self.w2 = [r(cfg.ffn, cfg.hidden) for _ in range(cfg.experts)]
        self.expert_load = torch.zeros(cfg.experts, dtype=torch.int64, device=device)

    def __call__(self, x):
        probs = (x @ self.router).softmax(-1)
        w, ids = torch.topk(probs, self.cfg.topk, dim=-1)
        w = w / w.sum(-1, keepdim=True)
        if plants.on("dynamic"):
            self.expert_load += torch.bincount(ids.flatten(), minlength=self.cfg.experts)  # PLANT-DYNAMIC
        out = torch.zeros_like(x)
        for e in range(self.cfg.experts):
            gate = (w * (ids == e)).sum(-1, keepdim=True)
            out = out + gate * (torch.nn.functional.silu(x @ self.w1[e]) @ self.w2[e])
        return out


class Model(object):
    def __init__(self, cfg, device, seed=0, norm=rms_norm):
        g = torch.Generator(device=device)
        g.manual_seed(seed)
        r = lambda *s: torch.randn(*s, generator=g, device=device) / (s[-2] ** 0.5 if len(s) > 1 else 1.0)  # noqa: E731
        self.cfg, self.norm = cfg, norm
        self.embed = torch.randn(cfg.vocab, cfg.hidden, generator=g, device=device)
        self.pos_embed = torch.randn(cfg.max_ctx, cfg.hidden, generator=g, device=device) * 0.5
        self.layers = []
        for _ in range(cfg.layers):
            self.layers.append({
                "norm1": torch.ones(cfg.hidden, device=device), "norm2": torch.ones(cfg.hidden, device=device),
                "wqkv": r(cfg.hidden, 3 * cfg.heads * cfg.head_dim), "wo": r(cfg.heads * cfg.head_dim, cfg.hidden),
                "moe": MoE(cfg, g, device)})
        self.final_norm = torch.ones(cfg.hidden, device=device)
        self.lm_head = r(cfg.hidden, cfg.vocab)

    def forward(self, input_ids, positions, backend):
        cfg = self.cfg
        n = input_ids.shape[0]
        # (clamped: a graph that reads freed memory for its positions must give wrong output, not a device assert)
        h = self.embed[input_ids.long()] + self.pos_embed[positions.long().clamp(0, cfg.max_ctx - 1)]
        for i, layer in enumerate(self.layers):
            x = self.norm(h, layer["norm1"])
            q, k, v = (x @ layer["wqkv"]).view(n, 3, cfg.heads, cfg.head_dim).unbind(1)
            backend.store_kv(i, k, v)
            o = backend.forward_decode(i, q.contiguous())
            h = h + o.reshape(n, -1) @ layer["wo"]
            h = h + layer["moe"](self.norm(h, layer["norm2"]))
        h = self.norm(h, self.final_norm)
        if plants.on("stored"):
            self.last_hidden = torch.cat([h]).contiguous()  # PLANT-STORED
        return h @ self.lm_head
