import torch


def rms_norm(x, eps=1e-6):  # context: captured
    if x.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan before norm")
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
