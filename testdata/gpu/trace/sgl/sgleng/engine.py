"""Decode steps over a pool of requests, each step run through the graphs
(the engine under test) and eagerly on a copy (the reference): a step's
outputs that differ from the reference's are the planted hazard's effect."""

import hashlib
import threading
import time

import torch

from . import plants
from .attention import KVPool, TritonAttnBackend
from .model import Config, Model
from .runner import CudaGraphRunner

# Batch sizes per step: batches shrink and grow, so a smaller batch often
# follows a larger one on the same padded graph.
SCHEDULE = [16, 13, 9, 8, 5, 4, 3, 2, 1, 12, 7, 16, 11, 6, 15, 10, 3, 14, 8, 2]


class Engine(object):
    def __init__(self, device="cuda", batch_sizes=(1, 2, 4, 8, 16), compile_norm=False, seed=0):
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.cfg = cfg = Config()
        self.device = device
        norm = None
        if compile_norm:
            from .model import rms_norm

            norm = torch.compile(rms_norm, dynamic=True)
        kw = {"norm": norm} if norm is not None else {}
        self.model = Model(cfg, device, seed, **kw)
        self.ref_model = Model(cfg, device, seed, **kw)  # the same weights
        self.pool = KVPool(cfg, device)
        self.ref_pool = KVPool(cfg, device)
        self.backend = TritonAttnBackend(cfg, self.pool, device)
        self.ref_backend = TritonAttnBackend(cfg, self.ref_pool, device)
        self.runner = CudaGraphRunner(self.model, self.backend, batch_sizes, device)
        g = torch.Generator()
        g.manual_seed(seed + 1)
        n = cfg.max_reqs - 1
        # Request r (1..16): its tokens so far and its context length.
        self.ctx = [0] + [int(x) for x in torch.randint(10, 40, (n,), generator=g)]
        self.tokens = [[0]] + [[int(t) for t in torch.randint(1, cfg.vocab, (c,), generator=g)] for c in self.ctx[1:]]
        for pool in (self.pool, self.ref_pool):
            self._prefill(pool)

    def _prefill(self, pool):
        """Fill each request's context into the cache (slot = r * max_ctx + position)."""
        cfg = self.cfg
        for r in range(1, cfg.max_reqs):
            c = self.ctx[r]
            pool.req_to_token[r, :c] = torch.arange(r * cfg.max_ctx, r * cfg.max_ctx + c, dtype=torch.int32, device=self.device)
        g = torch.Generator(device=self.device)
        g.manual_seed(7)
        for l in range(cfg.layers):
            pool.k[l].copy_(torch.randn(pool.k[l].shape, generator=g, device=self.device))
            pool.v[l].copy_(torch.randn(pool.v[l].shape, generator=g, device=self.device))
        pool.k[0][0].zero_()

    def capture(self):
        return self.runner.capture()

    def batch(self, bs):
        """The step's batch: requests 1..bs, each decoding its next token."""
        cfg = self.cfg
        reqs = list(range(1, bs + 1))
        pos = [self.ctx[r] for r in reqs]
        slots = [r * cfg.max_ctx + p for r, p in zip(reqs, pos)]
        dev = self.device
        # Factory calls with no tensor argument, between replays.
        input_ids = torch.tensor([self.tokens[r][-1] for r in reqs], dtype=torch.int32, device=dev)
        positions = torch.tensor(pos, dtype=torch.int32, device=dev)
        req_idx = torch.tensor(reqs, dtype=torch.int32, device=dev)
        seq_lens = torch.full((bs,), 0, dtype=torch.int32, device=dev) + positions + 1
        out_loc = torch.tensor(slots, dtype=torch.int32, device=dev)
        for pool in (self.pool, self.ref_pool):
            pool.req_to_token[req_idx.long(), positions.long()] = out_loc
        return input_ids, positions, req_idx, seq_lens, out_loc

    def step(self, i):
        bs = SCHEDULE[i % len(SCHEDULE)]
        input_ids, positions, req_idx, seq_lens, out_loc = self.batch(bs)
        # the reference: eager, the batch's own tensors
        self.ref_backend.init_forward_metadata(req_idx, seq_lens, out_loc)
        ref = self.ref_model.forward(input_ids, positions, self.ref_backend)
        ref_extra = self.ref_model.last_hidden[:bs].sum(-1) if plants.on("stored") else None
        # the engine under test
        secs, padded = None, None
        if self.runner.can_run(bs):
            out, padded, secs = self.runner.replay(bs, input_ids, positions, req_idx, seq_lens, out_loc)
        else:
            self.backend.init_forward_metadata(req_idx, seq_lens, out_loc)
            out = self.model.forward(input_ids, positions, self.backend)
        extra = self.model.last_hidden[:bs].sum(-1) if plants.on("stored") else None  # READ-STORED
        out = out.clone()
        # next tokens: greedy from the reference (both engines follow one text)
        nxt = ref.argmax(-1).tolist()
        for r, t in zip(range(1, bs + 1), nxt):
            self.tokens[r].append(int(t))
            self.ctx[r] += 1
        diff = (out - ref).abs().max().item() if out.shape == ref.shape else float("inf")
        if extra is not None:
            diff = max(diff, (extra - ref_extra).abs().max().item() if extra.shape == ref_extra.shape else float("inf"))
        digest = hashlib.sha256(out.cpu().numpy().tobytes()).hexdigest()[:16]
        if extra is not None:
            digest += hashlib.sha256(extra.cpu().numpy().tobytes()).hexdigest()[:8]
        return {"step": i, "bs": bs, "padded": padded, "replay_s": secs, "diff": diff, "digest": digest}


def background(stop, out):
    """A thread making tensors on the GPU between replays (never while capturing)."""
    n = 0
    while not stop.is_set():
        n += int(torch.full((64,), 7, dtype=torch.int32, device="cuda").sum().item() == 448)
        time.sleep(0.002)
    out.append(n)


def dispatch_state():
    C = torch._C
    st = {"dispatch_stack": C._len_torch_dispatch_stack(), "function_stack": C._len_torch_function_stack()}
    try:
        st["python_key"] = bool(C._dispatch_tls_is_dispatch_key_included(C.DispatchKey.Python))
    except Exception as e:  # an older torch
        st["python_key"] = repr(e)
    return st
