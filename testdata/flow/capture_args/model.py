"""The capture call's own arguments: the decode graph passes None (or nothing, so the
default None applies) for the prefill-only inputs, which switches their branches off
along the captured path. A branch no capture can take is not captured; where one
capture passes the input and another does not, the branch stays conditional (a
warning)."""
import torch


class Attention:
    def __init__(self, heads):
        self.heads = heads

    def forward(self, q, k, v, cu_seqlen_prefill=None, max_s=0, causal=True):  # context: captured
        if cu_seqlen_prefill is not None:
            # Varlen prefill: never with the decode graph's None.
            lens = cu_seqlen_prefill.diff().tolist()
            return self.prefill(q, k, v, lens)
        if max_s > 0 and causal:
            # max_s is 0 in every capture.
            k = k[: int(k.shape[0])]
            return self.masked(q, k)
        if not causal:
            return self.bidirectional(q, k)
        return self.decode(q, k, v)

    def prefill(self, q, k, v, lens):  # context: eager
        return torch.cat([q[:n] for n in lens])

    def masked(self, q, k):  # context: eager
        return q[q > 0]

    def bidirectional(self, q, k):  # context: eager
        return k.nonzero()

    def decode(self, q, k, v):  # context: captured
        return (q * k).sum(-1).max().item()  # want: CG101


class Lora:
    def apply(self, x, adapter_data=None):  # context: captured
        if adapter_data is None:
            return x
        # With adapters: some captures pass them (see runner.py), so this
        # runs only in those: a warning. Rebinding the input after its test
        # changes nothing.
        adapter_data = adapter_data.to(x.device)
        return x + adapter_data.indices.nonzero().sum()  # want: CG104?

    def apply_scaled(self, x, adapter_data=None):  # context: captured
        if adapter_data is not None:
            adapter_data = adapter_data.to(x.device)
            return x + adapter_data.indices.nonzero().sum()  # want: CG104?
        return x


class Layer:
    def __init__(self, heads):
        self.attn = Attention(heads)
        self.lora = Lora()

    def forward(self, x, cu_seqlen_prefill, adapter_data=None):  # context: captured
        # cu_seqlen_prefill is passed through from the caller: the constant
        # follows it.
        y = self.attn.forward(x, x, x, cu_seqlen_prefill)
        y = self.lora.apply(y, adapter_data)
        y = self.lora.apply_scaled(y, adapter_data)
        if cu_seqlen_prefill is None:
            return y
        # Only prefill gets here.
        return y[y > 0]


class Model:
    def __init__(self):
        self.layers = [Layer(8) for _ in range(2)]

    def forward(self, input_ids, cu_seqlen_prefill=None, adapter_data=None):  # context: captured
        x = input_ids.float()
        for layer in self.layers:
            x = layer.forward(x, cu_seqlen_prefill, adapter_data=adapter_data)
        return x

    def forward_reassigned(self, input_ids, cu_seqlen_prefill=None):  # context: captured
        # The parameter is rebound before the test: its constant is lost,
        # so the branch is still captured.
        cu_seqlen_prefill = input_ids.cumsum(0) if input_ids.dim() > 1 else cu_seqlen_prefill
        if cu_seqlen_prefill is not None:
            return cu_seqlen_prefill.tolist()  # want: CG101?
        return input_ids
