"""A worker extension for RL weight sync (issue 17: post-capture code reached only by a remote call
that names it). The engine captures its decode graphs at start-up; the trainer later calls
`llm.collective_rpc("restore_weights")`, which runs `restore_weights` on every worker. Rebinding a
parameter's storage there leaves the graphs reading the old one: a finding, a warning because the
method is matched to the remote call by its name only. A method that copies into the captured
storage, and one no remote call names, are no finding."""
import torch
from torch import nn


class DecodeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 64)

    def forward(self, x):  # context: captured
        return self.proj(x)


class WeightSyncExtension:
    def __init__(self, model):
        self.model = model
        self.host_copies = {}

    def restore_weights(self):  # context: post-capture
        for name, param in self.model.named_parameters():
            param.data = self.host_copies[name].to(param.device)  # want: CG201~

    def refresh_weights(self, named):  # context: post-capture
        params = dict(self.model.named_parameters())
        for name, tensor in named:
            params[name].data.copy_(tensor)

    def reset_scales(self):  # context: post-capture
        for param in self.model.parameters():
            param.data = param.data.float()  # want: CG201~

    def stash_weights(self):  # context: eager
        for name, param in self.model.named_parameters():
            param.data = param.data.cpu()


class Engine:
    def __init__(self):
        self.model = DecodeModel()
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(8, 64, device="cuda")

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = self.model(self.x)
