import time

import torch

from . import runlog
from .attention import get_backend
from .graph_runner import CudaGraphRunner
from .registry import resolve_model


class LLMEngine(object):
    def __init__(self, cfg, device="cuda"):
        self.cfg = cfg
        self.device = torch.device(device)
        torch.manual_seed(0)
        self.backend = get_backend(cfg.attention, cfg, self.device)
        model_cls = resolve_model(cfg.model)
        self.model = model_cls(cfg, self.backend).to(self.device, torch.bfloat16).eval()
        self.runner = CudaGraphRunner(self.decode_step, self.backend, cfg, self.device)
        self.gen = torch.Generator().manual_seed(1)

    @torch.inference_mode()
    def decode_step(self, fb):
        runlog.here()
        logits = self.model(fb.input_ids, fb)
        return logits.argmax(-1)

    def capture(self):
        with torch.inference_mode():
            t0 = time.perf_counter()
            self.runner.capture()
            torch.cuda.synchronize()
            return time.perf_counter() - t0

    def _batch(self, bs, step):
        cfg = self.cfg
        seq_lens = torch.randint(1, cfg.max_seq - 1, (bs,), generator=self.gen, dtype=torch.int32)
        pages = cfg.max_seq // cfg.page_size
        bt = torch.randint(0, cfg.num_pages, (bs, pages), generator=self.gen, dtype=torch.int32)
        ids = torch.randint(0, cfg.vocab, (bs,), generator=self.gen, dtype=torch.int64)
        return ids, (seq_lens - 1).to(torch.int64), seq_lens, bt

    def serve(self, steps):
        """Decode steps over the captured batch sizes; returns seconds per replay (mean)."""
        sizes = [bs for bs in sorted(self.cfg.batch_sizes) if bs in self.runner.graphs]
        times = []
        if not sizes:
            return times
        with torch.inference_mode():
            for step in range(steps):
                bs = sizes[step % len(sizes)]
                ids, pos, seq_lens, bt = self._batch(bs, step)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                self.runner.replay(bs, ids.to(self.device), pos.to(self.device), seq_lens, bt)
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
        return times
