"""The CUDA-graph runner: it is handed the decode function and never knows
which model or attention backend it captures."""

import time

import torch

from . import runlog
from .forward_batch import ForwardBatch


class CudaGraphRunner(object):
    def __init__(self, decode_fn, backend, cfg, device):
        self.decode_fn = decode_fn
        self.backend = backend
        self.cfg = cfg
        self.device = device
        mb = cfg.max_batch
        self.input_ids = torch.zeros(mb, dtype=torch.int64, device=device)
        self.positions = torch.zeros(mb, dtype=torch.int64, device=device)
        self.graphs = {}
        self.outputs = {}
        self.pool = None
        self.capture_seconds = {}
        self.errors = {}

    def capture(self):
        runlog.here()
        for bs in sorted(self.cfg.batch_sizes, reverse=True):
            t0 = time.perf_counter()
            try:
                self.capture_one(bs)
            except RuntimeError as e:  # an engine falls back to eager for this batch size
                self.errors[bs] = str(e).splitlines()[0]
                torch.cuda.synchronize()
            self.capture_seconds[bs] = time.perf_counter() - t0

    def capture_one(self, bs):
        runlog.here()
        meta = self.backend.init_capture_metadata(bs)
        fb = ForwardBatch(bs, self.input_ids[:bs], self.positions[:bs], meta)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                self.decode_fn(fb)
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        if self.cfg.capture_via == "getattr":
            out = self._capture_by_name(g, fb, stream)
        else:
            with torch.cuda.graph(g, pool=self.pool, stream=stream):
                out = self.decode_fn(fb)
        if self.pool is None:
            self.pool = g.pool()
        self.graphs[bs] = g
        self.outputs[bs] = out

    def _capture_by_name(self, g, fb, stream):
        """Start and end the capture through method names built at run time,
        as a runner that drives capture from a table of phases (or from C++) does."""
        runlog.here()
        phases = [getattr(g, "_".join(("capture", p))) for p in ("begin", "end")]
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):
            phases[0](pool=self.pool)
            try:
                out = self.decode_fn(fb)
            finally:
                phases[1]()
        torch.cuda.synchronize()
        return out

    def replay(self, bs, input_ids, positions, seq_lens_cpu, block_table_cpu):
        runlog.here()
        self.backend.prepare_replay(bs, seq_lens_cpu, block_table_cpu)
        self.input_ids[:bs].copy_(input_ids, non_blocking=True)
        self.positions[:bs].copy_(positions, non_blocking=True)
        self.graphs[bs].replay()
        return self.outputs[bs][:bs]
