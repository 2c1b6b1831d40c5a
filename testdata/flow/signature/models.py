"""Two model families behind one engine base class: the base constructor stores the model it is
given, so `self.model` holds every family's model. A state-space runner's captured call passes a
keyword no transformer's forward takes, so it cannot reach the transformer: only the transformer
runner's capture does, and it passes cu_seqlen_prefill=None, which switches the prefill branch off."""
import torch


class TransformerForCausalLM(torch.nn.Module):
    def forward(self, input_ids, position_ids, cu_seqlen_prefill, kv_cache):  # context: captured
        hidden = input_ids.float()
        if cu_seqlen_prefill is not None:
            longest = int((cu_seqlen_prefill[1:] - cu_seqlen_prefill[:-1]).max().item())
            hidden = hidden[:, :longest]
        return hidden + kv_cache[0][: hidden.shape[0]]


class StateSpaceModel(torch.nn.Module):
    def forward(self, input_ids, inference_params=None):  # context: captured
        if inference_params is not None and inference_params.seqlen_offset.item() > 0:  # want: CG101?
            return input_ids.float()
        return input_ids.float() * 2


class Model:
    def __init__(self, model):  # context: eager
        self.model = model
        self.graphs = {}


class TransformerRunner(Model):
    def __init__(self):  # context: eager
        super().__init__(model=TransformerForCausalLM())

    def capture(self, bs, kv_cache):
        ids = torch.zeros(bs, dtype=torch.long, device="cuda")
        pos = torch.zeros(bs, dtype=torch.long, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = self.model.forward(ids, pos, cu_seqlen_prefill=None, kv_cache=kv_cache)
        self.graphs[bs] = (graph, out, ids, pos)


class StateSpaceRunner(Model):
    def __init__(self):  # context: eager
        super().__init__(model=StateSpaceModel())

    def capture(self, bs, params):
        ids = torch.zeros(bs, dtype=torch.long, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = self.model.forward(input_ids=ids, inference_params=params)
        self.graphs[bs] = (graph, out, ids)

    def prefill(self, ids, extra):  # context: eager
        return self.model.forward(ids, extra, None, None, None)
