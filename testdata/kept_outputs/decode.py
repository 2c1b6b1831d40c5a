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
        y = decode_step(x, w)  # want: CG205~ "passes it back to the same call as its input (`x`)"
        toks.append(y.argmax(-1))
        x = y
    return torch.stack(toks)


def generate_history(x, w, n, history):
    for i in range(n):
        y = decode_step(x, w)  # want: CG205~ "passes it back"
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


# An output passed back as the same call's input in the loop's next round (generate_tokens and
# generate_history above do it too): CUDA Graph Trees raise at that call
# (bench/probes/compiled_feedback.py); a clone runs clean.
@torch.compile(mode="reduce-overhead", dynamic=False)
def decode_pair(x, w):
    probs = torch.softmax(x @ w, dim=-1)
    return probs.argmax(-1), probs


def generate_fed_cloned(x, w, n):
    toks = []
    for _ in range(n):
        tok, probs = decode_pair(x, w)
        toks.append(tok.clone())
        x = probs.clone()
    return torch.stack(toks)


def generate_fed_pair(x, w, n):
    toks = []
    for _ in range(n):
        tok, probs = decode_pair(x, w)  # want: CG205~ "passes it back to the same call as its input (`x`)"
        toks.append(tok.clone())
        x = probs.view(probs.shape)
    return torch.stack(toks)


def generate_fed_kw(x, w, n, fresh):
    for _ in range(n):
        if fresh:
            x = torch.softmax(x, dim=-1)
        tok, x = decode_pair(x=x, w=w)  # want: CG205~ "(`x=x`)"
    return x


def generate_rebound_first(x, w, n, hist):
    for _ in range(n):
        x = hist[-1].clone()
        tok, x = decode_pair(x, w)
        hist = torch.cat([hist, x[None]])
    return hist


# A compiled function passed in as a parameter and called there: the caller's compiled step is the
# graph (the finding assumes it is the one called).
def plain_pair(x, w):
    probs = torch.softmax(x @ w, dim=-1)
    return probs.argmax(-1), probs


def generate_with(x, w, n, step_fn=None):
    if step_fn is None:
        step_fn = plain_pair
    for _ in range(n):
        tok, x = step_fn(x, w)  # want: CG205~ "passes it back to the same call as its input (`x`)"
    return x


def generate_with_eager(x, w, n, step_fn):
    for _ in range(n):
        tok, x = step_fn(x, w)
    return x


def fast_run(x, w):
    fast = torch.compile(plain_pair, mode="reduce-overhead")
    return generate_with(x, w, 4, step_fn=fast)


def eager_run(x, w):
    return generate_with_eager(x, w, 4, plain_pair)
