"""Host drivers: a loop whose exit the data decides, read back from the device (a generation loop
that stops at the end token, a calibration that stops when the error is small). A capture replays
a fixed sequence of kernels, so no caller captures such a loop: it is no launcher root, and the
step it calls is one of its own. A loop whose exit reads only shapes runs the same way every time
and stays a root, and so does a function whose own code launches the kernel it loops on. The
read may come before the test: a flag or token the loop bound from a read (the host value passes
through Python's builtins, not through another function's call)."""
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


def chunked(x, chunk):  # context: launcher
    scale = x.norm().item()  # want: CG101~
    start = 0
    while True:
        rows, _ = x.size()
        if start >= rows:
            break
        x = next_token(x[start : start + chunk]) * scale
        start += chunk
    return x


def chat(x, eos):  # context: launcher
    return _decode_loop(next_token(x), eos)


def _decode_loop(x, eos):  # context: eager
    # A host driver reached from a launcher root: the root's callers
    # capture no more of it than of a driver that is API itself.
    out = []
    while True:
        x = next_token(x)
        tok = x.argmax()
        if tok.item() == eos:
            break
        out.append(tok)
    return out


def generate_flags(x, steps, eos):  # context: eager
    # The exit reads host flags made from the device's tokens.
    done = [False] * x.shape[0]
    for _ in range(steps):
        x = next_token(x)
        for i, tok in enumerate(x.argmax(-1).tolist()):
            done[i] = done[i] or tok == eos
        if all(done):
            break
    return x


def generate_scalar(x, steps, eos):  # context: eager
    for _ in range(steps):
        x = next_token(x)
        tok = int(x.argmax().item())
        if tok == eos:
            return x
    return x


def warm_steps(x, steps):  # context: launcher
    # A host value passed to a function is not what the function returns:
    # this exit is not known to read the device.
    flags = [False] * steps
    for i, v in enumerate(x.sum(0).tolist()):  # want: CG101~
        flags[i % steps] = v > 0
    for i in range(steps):
        if _budget(flags, i) <= 0:
            break
        x = next_token(x)
    return x


def _budget(flags, i):  # context: launcher
    return len(flags) - i


def count_steps(x, steps):  # context: launcher
    # The length of a list of host reads is no read of its values.
    seen = []
    for _ in range(steps):
        x = next_token(x)
        seen.append(x.sum().item())  # want: CG101~
        if len(seen) > 3:
            break
    return x


def sort_rows(x, cols):  # context: launcher
    # A name bound from another function's result is not known to hold a
    # read, whatever tensors the call was given.
    for c in range(cols):
        x = next_token(x)
        left = _left(x, c)
        if left == 0:
            break
    return x


def _left(x, c):  # context: launcher
    return x.shape[0] - c
