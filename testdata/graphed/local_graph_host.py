"""Host values baked into a graph that lives and replays only in the function that captures it.
A replay runs the region's launches with the value the capture baked; where nothing binds the
local again between the capture and the replays, an eager run of the region would read the same
value: nothing is stale. A rebinding before a replay, a graph kept past the call, or replays
through a bound method taken from the graph leave the finding."""
import torch


def test_scale_each(x, scales):
    out = []
    for s in scales:
        scale = s.item()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = torch.mul(x, scale)
        g.replay()
        g.replay()
        out.append(y.clone())
    return out


def test_scale_rebound(x, scales):
    scale = scales[0].item()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.mul(x, scale)  # want: CG102
    for s in scales:
        scale = s.item()
        g.replay()
    return y


def test_scale_stepped(x, s):
    scale = s.item()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.mul(x, scale)  # want: CG102
    g.replay()
    scale += 1.0
    g.replay()
    return y


def capture_scale_kept(x, s, graphs):
    scale = s.item()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.mul(x, scale)  # want: CG102
    graphs.append(g)
    return y


def bench_scale(x, s):
    scale = s.item()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.mul(x, scale)  # want: CG102
    run = g.replay
    for _ in range(10):
        run()
    return y


def test_scale_graph_outside_loop(x, scales):
    g = torch.cuda.CUDAGraph()
    ys = []
    for s in scales:
        scale = s.item()
        with torch.cuda.graph(g):
            ys.append(torch.mul(x, scale))  # want: CG102
        g.replay()
    return ys


def test_scale_helper(x, s):
    # Replays through a helper: where they run is where it is called, which this rule does not
    # follow, so the finding stays.
    scale = s.item()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.mul(x, scale)  # want: CG102

    def replay():
        g.replay()

    replay()
    return y
