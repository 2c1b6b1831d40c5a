"""A decode loop around a step compiled with CUDA graphs: the tokens it keeps."""
import torch


@torch.compile(mode="reduce-overhead", dynamic=False)
def decode_step(x, w):
    return torch.softmax(x @ w, dim=-1)


@torch.compile(mode="default")
def plain_step(x, w):
    return torch.softmax(x @ w, dim=-1)


def generate(x, w, n):
    outs = []
    for _ in range(n):
        y = decode_step(x, w)  # want: CG205~ "keeps it in the list `outs` across the loop's next round"
        outs.append(y)
        x = y
    return torch.cat(outs)


def generate_cloned(x, w, n):
    outs = []
    for _ in range(n):
        y = decode_step(x, w).clone()
        outs.append(y)
        x = y
    return torch.cat(outs)


def generate_tokens(x, w, n):
    toks = []
    for _ in range(n):
        y = decode_step(x, w)
        toks.append(y.argmax(-1))
        x = y
    return torch.stack(toks)


def generate_history(x, w, n, history):
    for i in range(n):
        y = decode_step(x, w)
        history[:, i] = y.argmax(-1)
        x = y
    return history


def generate_plain(x, w, n):
    outs = []
    for _ in range(n):
        y = plain_step(x, w)
        outs.append(y)
        x = y
    return torch.cat(outs)


@torch.no_grad()
def two_steps(x, w):
    a = decode_step(x, w)  # want: CG205 "the call at line 62"
    b = decode_step(x + 1, w)
    return a + b


def two_steps_grad(x, w):
    a = decode_step(x, w)  # want: CG205~ "the call at line 68"
    b = decode_step(x + 1, w)
    return a + b


def two_steps_used(x, w):
    a = decode_step(x, w)
    s = a.sum()
    b = decode_step(x + 1, w)
    return s + b.sum()


def batch(xs, w):
    return torch.cat([decode_step(x, w) for x in xs])  # want: CG205~ "comprehension"


def compare(m, x):
    eager = m(x)
    m = torch.compile(m, mode="reduce-overhead")
    compiled = m(x)
    return torch.equal(eager, compiled)


def compare_twice(m, x):
    m = torch.compile(m, mode="reduce-overhead")
    with torch.inference_mode():
        a = m(x)  # want: CG205 "keeps it in `a` across the call at line 94"
        b = m(x)
    return torch.equal(a, b)


def compare_recompiled(model, x):
    m = torch.compile(model, mode="reduce-overhead")
    a = m(x)
    m = torch.compile(model, mode="reduce-overhead")
    b = m(x)
    return torch.equal(a, b)
