"""Names the capture region binds again are not derived outside it (CG202 once reported
`a, b = inputs[i]` and offered a "safe" fix that put a dead torch.randn into the graph);
a derivation that draws random numbers or updates in place gets no fix."""
import torch


def capture_unpack(g, inputs, model):
    a = torch.randn(4, device="cuda") * 2.0
    b = inputs[0][1].to(torch.int32)
    with torch.cuda.graph(g):
        a, b = inputs[0]
        out = model(a, b)
    return out


def capture_loop(g, xs, model):
    x = xs[0].float()
    with torch.cuda.graph(g):
        for x in xs:
            out = model(x)
    return out


def capture_with_as(g, x, model, ctx):
    y = x.float()
    with torch.cuda.graph(g):
        with ctx() as y:
            out = model(y)
    return out


def capture_read_then_rebind(g, seq_lens, model):
    cu = torch.cumsum(seq_lens, 0)  # want: CG202[safe] "derived from the inputs"
    with torch.cuda.graph(g):
        out = model(cu)
        cu = out + 1
    return cu


def capture_noisy(g, x, model):
    noisy = x + torch.randn_like(x)  # want: CG202[none]
    with torch.cuda.graph(g):
        out = model(noisy)
    return out


def capture_inplace(g, x, model):
    scaled = x.float().mul_(2.0).to(torch.int32)  # want: CG202[none]
    with torch.cuda.graph(g):
        out = model(scaled)
    return out


def capture_scaled(g, q, k, model):
    # Computed from sizes and constants: fixed for the graph's inputs, the same on every replay.
    head_dim = q.shape[-1]
    sm_scale = 1.0 / (head_dim ** 0.5)
    n_tokens = q.numel() // head_dim
    # From the data: the graph reads what it was at capture.
    k_max = k.abs().amax(dim=-1)  # want: CG202[safe] "derived from the inputs"
    with torch.cuda.graph(g):
        out = model(q * sm_scale, k / k_max, n_tokens)
    return out
