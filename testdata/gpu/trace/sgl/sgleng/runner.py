"""The graph runner: static buffers sized for the largest batch, one graph
per padded batch size in a shared pool, replay prep that copies a batch into
the buffers and pads the tail."""

import time

import torch

from . import plants


class CudaGraphRunner(object):
    def __init__(self, model, backend, batch_sizes, device):
        self.model, self.backend, self.device = model, backend, device
        self.batch_sizes = sorted(batch_sizes)
        max_bs = self.batch_sizes[-1]
        self.input_ids = torch.zeros(max_bs, dtype=torch.int32, device=device)
        self.positions = torch.zeros(max_bs, dtype=torch.int32, device=device)
        self.out_cache_loc = torch.zeros(max_bs, dtype=torch.int32, device=device)
        self.backend.init_cuda_graph_state(max_bs)
        self.graphs, self.outputs = {}, {}
        self.errors = []
        self.capture_seconds = {}
        self.spec_len = 2 if plants.on("resize") else 1

    def capture(self):
        pool = torch.cuda.graph_pool_handle()
        t0 = time.perf_counter()
        for bs in reversed(self.batch_sizes):  # largest first, as SGLang does
            t1 = time.perf_counter()
            try:
                self.capture_one(bs, pool)
            except RuntimeError as e:
                self.errors.append("bs %d: %s" % (bs, str(e).splitlines()[0][:300]))
                self.graphs.clear()
                self.outputs.clear()
                torch.cuda.synchronize()
                break
            self.capture_seconds[bs] = time.perf_counter() - t1
        return time.perf_counter() - t0

    def capture_one(self, bs, pool):
        for _ in range(2):  # warm-up (Triton compiles, cuBLAS picks its kernels)
            self.run_once(bs)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            out = self.run_once(bs)
        self.graphs[bs], self.outputs[bs] = g, out

    def run_once(self, bs):
        self.backend.init_forward_metadata_capture_cuda_graph(bs, self.out_cache_loc[:bs])
        return self.model.forward(self.input_ids[:bs], self.positions[:bs], self.backend)

    def can_run(self, bs):
        return bool(self.graphs) and bs <= self.batch_sizes[-1]

    def replay_prepare(self, bs, input_ids, positions, req_pool_indices, seq_lens, out_cache_loc):
        padded = min(s for s in self.batch_sizes if s >= bs)
        need = padded * self.spec_len
        if self.positions.numel() < need:
            self.positions.resize_(need)  # PLANT-RESIZE
        self.input_ids[bs:padded].fill_(0)
        self.input_ids[:bs].copy_(input_ids)
        self.positions[bs:padded].fill_(0)
        self.positions[:bs].copy_(positions)
        if not plants.on("stale"):
            self.out_cache_loc[bs:padded].fill_(0)
        self.out_cache_loc[:bs].copy_(out_cache_loc)  # PLANT-STALE
        self.backend.init_forward_metadata_replay_cuda_graph(bs, padded, req_pool_indices, seq_lens)
        return padded

    def replay(self, bs, *batch):
        padded = self.replay_prepare(bs, *batch)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        self.graphs[padded].replay()
        torch.cuda.synchronize()
        return self.outputs[padded][:bs], padded, time.perf_counter() - t0
