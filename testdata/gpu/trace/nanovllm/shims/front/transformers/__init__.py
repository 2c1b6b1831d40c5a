"""A stand-in for the two transformers classes nano-vllm uses (AutoConfig,
AutoTokenizer), reading a local config.json: written for capguard's trace
test; no hub, no download."""

import json
import os

import torch

_DEFAULTS = {"hidden_act": "silu", "attention_bias": False, "rope_theta": 1000000.0, "rope_scaling": None,
             "tie_word_embeddings": False, "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16"}


class PretrainedConfig(object):
    def __init__(self, **kw):
        d = dict(_DEFAULTS)
        d.update(kw)
        self.__dict__.update(d)
        if getattr(self, "head_dim", None) is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        self.dtype = getattr(torch, self.torch_dtype)


Qwen3Config = PretrainedConfig


class AutoConfig(object):
    @staticmethod
    def from_pretrained(path, **_):
        with open(os.path.join(path, "config.json")) as f:
            return PretrainedConfig(**json.load(f))


class _ByteTokenizer(object):
    eos_token_id = 0

    def encode(self, text):
        return [b + 1 for b in text.encode()]

    def decode(self, ids):
        return bytes((i - 1) % 256 for i in ids).decode(errors="replace")


class AutoTokenizer(object):
    @staticmethod
    def from_pretrained(path, **_):
        return _ByteTokenizer()
