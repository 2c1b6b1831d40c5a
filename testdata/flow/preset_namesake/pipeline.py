"""A preset pattern that names classes by a fragment (trtllm's `*:*Attention.forward`, for its
<Name>Attention backends) also matches a project's namesakes: a vision encoder's attention that
no capture runs. The preset is on only because the project imports the framework, and the
encoder's hierarchy is known and never reaches it (torch.nn.Module only): a namesake, not a root.
Code the project's own capture reaches is proved, and reported as an error even where the pattern
matches it too."""
import torch
from tensorrt_llm.llmapi import LLM  # the trtllm preset is detected from this import


class PatchAttention(torch.nn.Module):
    def forward(self, x):  # context: eager
        if x.isnan().any().item():
            raise FloatingPointError("nan patch")
        return torch.softmax(x @ x.transpose(-1, -2), -1) @ x


class DecoderAttention(torch.nn.Module):
    def forward(self, x):  # context: captured
        if x.abs().max().item() > 1e4:  # want: CG101
            raise OverflowError("activation overflow")
        return x


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = DecoderAttention()
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.attn(x)


def serve(x):  # context: eager
    Decoder().capture(x)
    return LLM
