"""A runner that patches its model's forward with its own method: the engine's capture calls
`self.model.forward(..., cu_seqlen_prefill=None)`, which runs the patched method, so its
prefill branch (and the mask helper only that branch calls) is off under capture."""
import torch


class HFModel(torch.nn.Module):
    def forward(self, input_ids, attention_mask=None):  # context: captured
        return input_ids.float()


class PatchedRunner:
    def __init__(self):  # context: eager
        self.model = HFModel()
        self.model.original_forward = self.model.forward
        self.model.forward = self._model_forward
        self.graph = torch.cuda.CUDAGraph()

    def _attention_mask(self, input_ids, cu_seqlen_prefill):  # context: eager
        longest = int((cu_seqlen_prefill[1:] - cu_seqlen_prefill[:-1]).max().item())
        return torch.ones(input_ids.shape[0], longest, device=input_ids.device)

    def _model_forward(self, input_ids, position_ids, cu_seqlen_prefill, kv_cache):  # context: captured
        mask = None
        if cu_seqlen_prefill is not None:
            mask = self._attention_mask(input_ids, cu_seqlen_prefill)
        return self.model.original_forward(input_ids, attention_mask=mask)

    def capture(self, input_ids, position_ids, kv_cache):
        with torch.cuda.graph(self.graph):
            self.out = self.model.forward(
                input_ids=input_ids, position_ids=position_ids, cu_seqlen_prefill=None, kv_cache=kv_cache
            )
