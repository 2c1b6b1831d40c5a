from dataclasses import dataclass

import torch


@dataclass
class ForwardBatch:
    batch_size: int
    input_ids: torch.Tensor
    positions: torch.Tensor
    meta: object = None
