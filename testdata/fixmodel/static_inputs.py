"""Fix model, pattern (a): a graph's static inputs are made before the capture
and refreshed before every replay (copy_ after the region, in a replay
closure, or kept beside the graph). They are inputs, not values derived
before the capture: no CG202, and nothing is moved into the region. A value
truly derived from an input before the capture is still reported, and moved.
"""
import torch


class DecodeGraphs:
    def __init__(self, model):
        self.model = model
        self.graphs = {}

    def capture(self, bs):
        # Kept beside the graph: the server copies the batch into it.
        input_ids = torch.zeros(bs, dtype=torch.long, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = self.model(input_ids)
        self.graphs[bs] = (graph, input_ids, logits)

    def run(self, ids):
        graph, input_ids, logits = self.graphs[ids.shape[0]]
        input_ids.copy_(ids)
        graph.replay()
        return logits


def make_replayer(model, example):
    # Written by a replay closure.
    static_ids = example.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = model(static_ids)

    def run(ids):
        static_ids.copy_(ids)
        graph.replay()
        return static_out.clone()

    return run


def replay_all(model, example, batches):
    # Written after the region, before each replay.
    static_ids = example.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(static_ids)
    results = []
    for ids in batches:
        static_ids.copy_(ids)
        graph.replay()
        results.append(out.clone())
    return results


def replay_decode(model, seq_lens, new_lens):
    # Derived before the capture from an input the loop refreshes: stale.
    cu_seqlens = torch.cumsum(seq_lens, 0)  # want: CG202
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(cu_seqlens)
    results = []
    for lens in new_lens:
        seq_lens.copy_(lens)
        graph.replay()
        results.append(out.clone())
    return results
