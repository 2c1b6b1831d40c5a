import torch


class WideNet(torch.nn.Module):
    def forward(self, x):  # context: captured resolution: name
        return x + x.sum().item()  # want: CG101~
