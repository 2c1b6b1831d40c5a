"""Weight reload after capture (issue 17, cause 8). The framework's layerwise reload copies registered
parameters and buffers back into the tensors the graphs captured, so rebinding one in
process_weights_after_loading is a warning that names that assumption (TestRebindReloadSeverity);
a `.data` rebound to a view of its own storage keeps the address, and a first-binding guard binds
only once, before capture: no finding, and neither do the other bindings of a branch that binds the
attribute its guard tests (it runs once). A plain tensor attribute rebuilt in the hook is not covered
by any copy-back: an error."""
import torch
from torch import nn


class Fp8Linear(nn.Module):
    def __init__(self, out_features, in_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features), requires_grad=False)
        self.register_buffer("input_scale", torch.ones(1))
        self.weight_scale = nn.Parameter(torch.ones(out_features), requires_grad=False)
        self.act_scale = torch.ones(1)
        self.workspace = None

    def forward(self, x):  # context: captured
        y = x * self.act_scale * self.input_scale
        return (y @ self.weight.t()) * self.weight_scale + self.workspace

    def process_weights_after_loading(self):  # context: post-capture
        self.weight = nn.Parameter(self.weight.data.t().contiguous(), requires_grad=False)  # want: CG201~
        self.register_buffer("input_scale", self.input_scale.max().reshape(1))  # want: CG201~
        self.weight_scale.data = self.weight_scale.data.view(-1)
        self.weight.data = self.weight.t()
        self.weight.data = self.weight.data.reshape(self.weight.shape)
        if self.workspace is None:
            self.workspace = torch.zeros(self.weight.shape[0], device=self.weight.device)
        if not hasattr(self, "bias_cache"):
            self.bias_cache = torch.zeros(self.weight.shape[0], device=self.weight.device)
        self.act_scale = self.input_scale.to(torch.float32).clone()  # want: CG201
        # A helper module made here to repack the weight: its own new parameter, which no graph
        # captured (set-up of a new object, not a rebind). The graph reads `self.weight`, so
        # rebinding that one's `.data` to the packed tensor stays a finding.
        tmp = nn.Linear(1, 1, bias=False)
        tmp.in_features = self.weight.shape[1]
        tmp.weight.data = self.weight.data.to(torch.float16)
        self.weight.data = tmp.weight.data.float()  # want: CG201~


class AbsorbedAttention(nn.Module):
    """Absorbed projections made once from the loaded weight and refreshed in place after that."""

    def __init__(self, dim):
        super().__init__()
        self.kv_proj = nn.Parameter(torch.empty(dim, dim), requires_grad=False)
        self.w_extra = torch.zeros(dim, dim)
        self.w_step = torch.zeros(dim, dim)
        self.step_norm = None

    def forward(self, x):  # context: captured
        return (x @ self.w_uv) @ self.w_uk_t + x @ self.w_extra + x @ self.w_step

    def process_weights_after_loading(self):  # context: post-capture
        w = self.kv_proj.data
        if not hasattr(self, "w_uv"):
            self.w_uv = w.t().contiguous()
            self.w_uk_t = w.contiguous()
        else:
            self.w_uv.copy_(w.t().contiguous())
            self.w_uk_t.copy_(w.contiguous())
        if not hasattr(self, "w_pending"):
            # The branch never binds `w_pending`: it runs on every reload.
            self.w_extra = w * 2  # want: CG201
        if self.step_norm is None:
            # `finish_step` unbinds `step_norm` again: the branch runs after every step.
            self.step_norm = w.norm()
            self.w_step = w * 3  # want: CG201

    def finish_step(self):
        self.step_norm = None


class Runner:
    def __init__(self):
        self.layer = Fp8Linear(64, 64)
        self.attn = AbsorbedAttention(64)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            self.out = self.layer(x) + self.layer.bias_cache + self.attn(x)

    def reload_weights(self):  # context: post-capture
        self.layer.process_weights_after_loading()
        self.attn.process_weights_after_loading()
