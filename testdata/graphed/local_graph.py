"""Tests and benchmarks that capture and replay a graph in one function. A tensor derived
before the capture from inputs that never change afterwards (not written after the region,
not visible to the graph) is the same on every replay of that local graph: no finding. Where
the test writes new values into the source before replaying, the derived tensor is stale."""
import torch


def test_decode_replay(model, projected):
    indices = torch.arange(projected.shape[0], device="cuda")
    static_projected = projected.clone()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(static_projected, indices)
    g.replay()
    torch.cuda.synchronize()
    return out


def test_replay_new_lengths(model, seq_lens):
    cu = torch.cumsum(seq_lens, 0)  # want: CG202
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(cu)
    seq_lens.copy_(seq_lens + 1)
    g.replay()
    return out


def capture_kept(model, seq_lens, graphs):
    cu = torch.cumsum(seq_lens, 0)  # want: CG202
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(cu)
    graphs.append(g)
    return out


def refill(t):
    t.add_(1)


def test_replay_refilled(model, seq_lens):
    cu = torch.cumsum(seq_lens, 0)  # want: CG202
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(cu)
    refill(seq_lens)
    g.replay()
    torch.testing.assert_close(out, model(torch.cumsum(seq_lens, 0)))
    return out


def bench_replays(model):
    # A constant built before the capture, kept alive while the graph replays here, through a
    # bound method taken from the graph.
    bias = torch.linspace(-1.0, 1.0, 64, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(bias)
    run = g.replay
    for _ in range(10):
        run()
    return out.sum()


def capture_constant_dropped(model, graphs):
    bias = torch.linspace(-1.0, 1.0, 64, device="cuda")  # want: CG202
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(bias)
    graphs.append(g)


def train_step_graph(model, static_input, static_target, graphs):
    # An optimizer and a loss module are objects, not tensors derived from the inputs.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.MSELoss()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        loss = loss_fn(model(static_input), static_target)
        loss.backward()
        optimizer.step()
    graphs.append(g)
    return loss


def test_replay_reference(model, seq_lens, reference):
    # After the capture the lengths go to code capguard cannot see into: whether it writes
    # into them is an assumption, so the finding is a warning that names it.
    cu = torch.cumsum(seq_lens, 0)  # want: CG202~
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(cu)
    g.replay()
    torch.testing.assert_close(out, reference(seq_lens))
    return out


def test_replay_reads_source(model, seq_lens):
    # The graph reads the lengths too, but nothing writes into them: every replay of this
    # local graph sees what `cu` was derived from.
    cu = torch.cumsum(seq_lens, 0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(cu) + seq_lens.sum()
    g.replay()
    return out


def test_replay_graph_writes_source(model, seq_lens):
    # The graph itself advances the lengths: each replay reads a `cu` older than them.
    cu = torch.cumsum(seq_lens, 0)  # want: CG202
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(cu)
        seq_lens.add_(1)
    g.replay()
    g.replay()
    return out


def test_replay_graph_hands_source(model, seq_lens, advance):
    # The graph hands the lengths to code that may write into them: an assumption.
    cu = torch.cumsum(seq_lens, 0)  # want: CG202~
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(cu)
        advance(seq_lens)
    g.replay()
    return out


def test_replay_helper(model, pages):
    # The graph is replayed through a helper this function only calls: still local. What
    # `cache` is derived from is never written, so every replay reads what it was derived from.
    cache = torch.stack((pages, pages), dim=1)
    out = torch.empty_like(pages)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(cache, out=out)

    def replay():
        out.fill_(0)
        g.replay()

    replay()
    replay()
    return out


def test_replay_helper_kept(model, pages, runners):
    # The helper is handed on: whoever calls it replays the graph, elsewhere.
    cache = torch.stack((pages, pages), dim=1)  # want: CG202
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(cache)

    def replay():
        g.replay()

    runners.append(replay)


def bench_stages(stages, seq_lens, model, time_us):
    # The graphs live in a local dict and replay only here, through a bound method taken
    # from each: still local, and nothing writes into what `cu` is derived from.
    cu = torch.cumsum(seq_lens, 0)
    runners = {}
    for name in stages:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            model(cu)
        runners[name] = g
    results = {}
    for name in stages:
        graph = runners[name]
        results[name] = time_us(graph.replay)
    return results


def test_graphs_refilled(model, seq_lens, keys):
    # The same holder, but the lengths are written before the replays.
    cu = torch.cumsum(seq_lens, 0)  # want: CG202
    graphs = []
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(cu)
    graphs.append(g)
    seq_lens.add_(1)
    for i in range(len(graphs)):
        graphs[i].replay()


def capture_into_kept_dict(model, seq_lens, cache):
    # A dict the function is given is the caller's: the graph is replayed elsewhere.
    cu = torch.cumsum(seq_lens, 0)  # want: CG202
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(cu)
    cache["decode"] = g


def capture_into_returned_dict(model, seq_lens):
    # A local dict that is returned keeps the graph past this call.
    cu = torch.cumsum(seq_lens, 0)  # want: CG202
    graphs = {}
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(cu)
    graphs["decode"] = g
    return graphs


def scale_into(x, w, out):
    torch.mul(x, w, out=out)


def test_replay_project_reader(seq_lens, out):
    # The graph hands the lengths to a project function that capguard follows to its end and
    # finds writing only into `out`: no write into them is assumed, and none is proved.
    cu = torch.cumsum(seq_lens, 0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        scale_into(cu, seq_lens, out)
    g.replay()
    return out


def fused_op(x, w, inplace=False):
    out = x if inplace else torch.empty_like(x)
    torch.mul(x, w, out=out)
    return out


def bench_inplace_weights(x, w):
    # `inplace=True` writes the op's input `x`, not the weight it is given: nothing writes into
    # what `w` is derived from.
    w = w.to(torch.float16)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fused_op(x, w, inplace=True)
    for _ in range(3):
        g.replay()


def bench_inplace_input(x):
    # The same op writes its input, from which `y` is derived: every replay advances `x`.
    y = x.to(torch.float16)  # want: CG202
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fused_op(x, y, inplace=True)
    for _ in range(3):
        g.replay()
