"""A model whose signatures write unions the pre-PEP 604 way (`dict[str, Any] or None`), a commented
decorator at column 0, and a format spec filled with '=': valid Python that tree-sitter-python
rejects. Refusing the file lost every function in it, and the captured forward with them."""
from typing import Any

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(64, 64)

    def forward(  # context: captured
        self,
        x: torch.Tensor,
        scale: torch.Tensor or float or int,
        extra: dict[str, Any] or None = None,
        mask: tuple[torch.Tensor] or None = None,
    ) -> torch.Tensor or None:
        if mask is not None:
            x = x * mask[0]
        return self.proj(x) * scale.item()  # want: CG101

    @torch.no_grad()
#    @torch.compile
    def describe(self, width: int = 20) -> str:  # context: eager
        return f"{'block':=^{width}}"
