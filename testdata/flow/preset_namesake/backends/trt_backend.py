"""A backend that extends TensorRT-LLM: it derives from the framework's AttentionBackend, so the
preset's pattern holds for it (still by name: a warning that says so). A class whose base
resolves to nothing known keeps the assumption too."""
import importlib

from tensorrt_llm._torch.attention_backend.interface import AttentionBackend


def backend_base(name):  # context: eager
    return getattr(importlib.import_module(name), "Base")


class PagedAttention(AttentionBackend):
    def forward(self, q, k, v, metadata):  # context: captured
        if metadata.seq_lens.max().item() > 4096:  # want: CG101~
            raise ValueError("too long")
        return q


class OpaqueAttention(backend_base("plugins.attn")):
    def forward(self, q, metadata):  # context: captured
        n = int(metadata.lens.sum().item())  # want: CG101~
        return q[:n]  # want: CG102~
