"""Decode graph runner in the style of SGLang: one CUDA graph per padded batch size, one shared pool."""
import bisect

import torch

from ..layers.attention.triton_backend import TritonAttnBackend
from ..layers.model import TinyDecoder


class CudaGraphRunner:
    def __init__(self, max_bs, max_pages, vocab, device="cuda"):
        self.batch_sizes = [1, 2, 4, 8, 16, 32]
        self.graphs = {}
        self.outputs = {}
        self.graph_memory_pool = None
        self.attn_backend = TritonAttnBackend(max_bs, max_pages, device)
        self.model = TinyDecoder(vocab, self.attn_backend)
        # Static inputs, refreshed before every replay.
        self.input_ids = torch.zeros(max_bs, dtype=torch.int64, device=device)
        self.seq_lens = torch.ones(max_bs, dtype=torch.int64, device=device)
        self.positions = torch.zeros(max_bs, dtype=torch.int64, device=device)
        self.out_cache_loc = torch.zeros(max_bs, dtype=torch.int64, device=device)
        self.req_pool_indices = torch.zeros(max_bs, dtype=torch.int64, device=device)

    def capture(self):
        for bs in reversed(self.batch_sizes):
            graph, out = self.capture_one_batch_size(bs)
            self.graphs[bs] = graph
            self.outputs[bs] = out

    def capture_one_batch_size(self, bs):
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        input_ids = self.input_ids[:bs]
        positions = self.positions[:bs]
        cu_seqlens = torch.cumsum(self.seq_lens[:bs], 0).to(torch.int32)  # want: CG202
        self.attn_backend.init_forward_metadata_capture_cuda_graph(bs, self.req_pool_indices[:bs], self.seq_lens[:bs])

        def run_once():
            return self.model.forward(input_ids, positions, cu_seqlens)

        # Warm up eagerly: none of this is captured.
        for _ in range(2):
            run_once()
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, pool=self.graph_memory_pool, stream=stream):
            out = run_once()
        self.graph_memory_pool = graph.pool()
        return graph, out

    def replay_prepare(self, batch):
        raw_bs = batch.batch_size
        bs = self.batch_sizes[bisect.bisect_left(self.batch_sizes, raw_bs)]
        self.input_ids[:raw_bs].copy_(batch.input_ids)
        self.seq_lens.fill_(1)
        self.seq_lens[:raw_bs].copy_(batch.seq_lens)
        self.positions[:raw_bs].copy_(batch.positions)
        self.out_cache_loc[:raw_bs].copy_(batch.out_cache_loc)  # want: CG203
        self.req_pool_indices[:raw_bs].copy_(batch.req_pool_indices)
        self.req_pool_indices[raw_bs:].zero_()
        self.attn_backend.init_forward_metadata_replay_cuda_graph(bs, self.req_pool_indices, self.seq_lens)
        return bs

    def replay(self, batch):
        bs = self.replay_prepare(batch)
        self.graphs[bs].replay()
        return self.outputs[bs][: batch.batch_size]
