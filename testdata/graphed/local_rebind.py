"""A graph captured into a local reads the tensors its region's names held at capture: a name bound
to a new tensor after the capture and before `g.replay()` is never seen by the replay (a loop that
refills its inputs must copy into them). The loop over a device tensor rebinds its target to a view
at another address each step."""
import torch


def denoise(model, latents, timesteps, scale):
    g = torch.cuda.CUDAGraph()
    x = torch.cat([latents] * 2)
    t = timesteps[0]
    with torch.cuda.graph(g):
        out = model(x, t)
    for i, step in enumerate(timesteps):
        x = torch.cat([latents] * 2)  # want: CG201 "binds a new tensor to `x`, which the graph captured"
        if scale:
            x = x / 2.0  # want: CG201
        y = torch.zeros(4, device="cuda")
        g.replay()
        latents = latents - out + y
    return latents


def decode(model, n):
    g = torch.cuda.CUDAGraph()
    x = torch.zeros(1, 8, device="cuda")
    with torch.cuda.graph(g):
        out = model(x)
    toks = []
    i = 0
    while i < n:
        g.replay()
        toks.append(out.argmax(-1))
        x = torch.cat([out], dim=0)  # want: CG201 "binds a new tensor to `x`"
        y = out * 3.0
        i += 1
    return toks, y


def decode_copied(model, n):
    g = torch.cuda.CUDAGraph()
    x = torch.zeros(1, 8, device="cuda")
    with torch.cuda.graph(g):
        out = model(x)
    for _ in range(n):
        g.replay()
        x.copy_(out * 2.0)
    last = out * 1.0
    return last


def denoise_copy(model, latents, timesteps):
    g = torch.cuda.CUDAGraph()
    x = torch.cat([latents] * 2)
    with torch.cuda.graph(g):
        out = model(x)
    for step in timesteps:
        x.copy_(torch.cat([latents] * 2))
        g.replay()
        latents = latents - out
    return latents


def walk_steps(model):
    steps = torch.arange(10, device="cuda")
    g = torch.cuda.CUDAGraph()
    t = steps[0]
    with torch.cuda.graph(g):
        out = model(t)
    total = torch.zeros(1, device="cuda")
    for t in steps:  # want: CG201 "the loop over `steps`"
        total += 1
        g.replay()
    return out, total


def recapture_each(model, xs):
    outs = []
    for x in xs:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = model(x)
        x = torch.zeros(4, device="cuda")
        outs.append(out)
    return outs


def rebind_inside(model, seed):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x = torch.zeros(4, device="cuda") + seed
        out = model(x)
    x = torch.ones(4, device="cuda")
    g.replay()
    return out, x
