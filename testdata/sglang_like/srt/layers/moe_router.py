"""MoE router: token-to-expert dispatch."""
import torch


class TopKRouter(torch.nn.Module):
    def __init__(self, hidden, experts, top_k=2):
        super().__init__()
        self.gate = torch.nn.Linear(hidden, experts)
        self.top_k = top_k
        self.experts = experts

    def forward(self, h):
        logits = self.gate(h)
        weights, ids = torch.topk(logits, self.top_k, dim=-1)
        counts = torch.bincount(ids.flatten(), minlength=self.experts)  # want: CG104 (measured: capture fails with minlength too)
        order = torch.repeat_interleave(torch.arange(self.experts, device=h.device), counts)  # want: CG104
        fixed = torch.repeat_interleave(torch.arange(self.experts, device=h.device), counts, output_size=ids.numel())
        active = torch.nonzero(counts)  # want: CG104
        return h * weights.sum(-1, keepdim=True) + fixed.sum() + order.sum() + active.sum()
