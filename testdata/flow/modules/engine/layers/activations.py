import torch


def act(x):  # context: captured
    if x.abs().max().item() > 1e4:  # want: CG101
        raise FloatingPointError("activation overflow")
    return x * torch.sigmoid(x)
