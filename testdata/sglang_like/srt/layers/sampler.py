"""Sampler: greedy and top-p sampling of the decode step's logits."""
import torch


class Sampler:
    def __init__(self):
        self.temperature = 1.0

    def sample(self, logits, positions):
        if torch.any(torch.isnan(logits)):  # want: CG101
            raise ValueError("NaN in logits")
        probs = torch.softmax(logits / self.temperature, dim=-1)
        top = probs.max(dim=-1).values
        kept = probs[probs > 0.01]  # want: CG104
        return torch.argmax(probs, dim=-1) + top.long() + kept.numel()
