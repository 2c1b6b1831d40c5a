"""Host drivers: a loop whose exit the data decides, read back from the device (a generation loop
that stops at the end token, a calibration that stops when the error is small). A capture replays
a fixed sequence of kernels, so no caller captures such a loop: it is no launcher root, and the
step it calls is one of its own. A loop whose exit reads only shapes runs the same way every time
and stays a root, and so does a function whose own code launches the kernel it loops on."""
import torch
import triton

from .ops import _launch, _scale_kernel


def next_token(x):  # context: launcher
    return _launch(x, x.abs().amax().item())  # want: CG101~


def generate(x, steps, eos):  # context: eager
    out = []
    for _ in range(steps):
        x = next_token(x)
        tok = x.argmax()
        out.append(tok.cpu())
        if tok.item() == eos:
            break
    return out


def generate_until(x, eos):  # context: eager
    done = torch.zeros(1, dtype=torch.bool, device=x.device)
    while not done.all():
        x = next_token(x)
        done = x.argmax() == eos
        print(x.sum().item())
    return x


def generate_fixed(x, steps):  # context: launcher
    scale = x.norm().item()  # want: CG101~
    for i in range(steps):
        if i * 1024 >= x.shape[0]:
            break
        x = next_token(x) * scale
    return x


def refine(x, tol):  # context: launcher
    out = torch.empty_like(x)
    while True:
        _scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, 0.5, x.numel(), BLOCK=1024)
        if out.abs().max().item() < tol:  # want: CG101~
            break
        x = out
    return out
