import torch
from torch import nn

from .. import runlog
from ..registry import register_model
from .factory import layer_type, make_layer
from .layers import GatedMLP, RMSNorm, rotary


class LlamaAttention(nn.Module):
    def __init__(self, cfg, layer_id, backend):
        super().__init__()
        self.h, self.d = cfg.heads, cfg.head_dim
        self.qkv = nn.Linear(cfg.hidden, 3 * cfg.heads * cfg.head_dim, bias=False)
        self.o = nn.Linear(cfg.heads * cfg.head_dim, cfg.hidden, bias=False)
        self.layer_id = layer_id
        self.backend = backend

    def forward(self, x, fb):
        runlog.here()
        q, k, v = self.qkv(x).view(-1, 3, self.h, self.d).unbind(1)
        q, k = rotary(q, fb.positions), rotary(k, fb.positions)
        out = self.backend.forward_decode(q, k, v, self.layer_id, fb)
        return self.o(out.reshape(-1, self.h * self.d))


@layer_type("llama")
class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg, layer_id, backend):
        super().__init__()
        self.input_norm = RMSNorm(cfg.hidden)
        self.attn = LlamaAttention(cfg, layer_id, backend)
        self.post_norm = RMSNorm(cfg.hidden)
        self.mlp = GatedMLP(cfg.hidden, 2 * cfg.hidden)

    def forward(self, x, fb):
        runlog.here()
        x = x + self.attn(self.input_norm(x), fb)
        return x + self.mlp(self.post_norm(x))


@register_model("tiny-llama")
class TinyLlamaForCausalLM(nn.Module):
    def __init__(self, cfg, backend):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.layers = nn.ModuleList([make_layer(cfg, i, backend) for i in range(cfg.layers)])
        self.norm = RMSNorm(cfg.hidden)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)

    def forward(self, input_ids, fb):
        runlog.here()
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, fb)
        return self.lm_head(self.norm(x))
