"""The attention backend: a Triton decode kernel over a paged KV cache, and
the metadata methods a graph runner calls at capture and before each replay."""

import torch
import triton
import triton.language as tl

from . import plants


@triton.jit
def decode_attention_kernel(Q, K, V, O, ReqToToken, ReqIdx, SeqLens, stride_req, max_len, sm_scale,
                            H: tl.constexpr, D: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, D)
    n = tl.arange(0, BLOCK_N)
    q = tl.load(Q + (b * H + h) * D + d)
    req = tl.load(ReqIdx + b)
    seq_len = tl.minimum(tl.load(SeqLens + b), max_len)
    mask = n < seq_len
    slot = tl.load(ReqToToken + req * stride_req + n, mask=mask, other=0)
    kv_off = (slot[:, None] * H + h) * D + d[None, :]
    k = tl.load(K + kv_off, mask=mask[:, None], other=0.0)
    s = tl.sum(k * q[None, :], 1) * sm_scale
    s = tl.where(mask, s, float("-inf"))
    p = tl.exp(s - tl.max(s, 0))
    p = tl.where(mask, p, 0.0)
    v = tl.load(V + kv_off, mask=mask[:, None], other=0.0)
    o = tl.sum(p[:, None] * v, 0) / tl.sum(p, 0)
    tl.store(O + (b * H + h) * D + d, o)


class KVPool(object):
    """Per layer K and V for every slot; req_to_token maps a request's
    position to its slot (slot 0 and request 0 are the padding's dummies)."""

    def __init__(self, cfg, device):
        self.k = [torch.zeros(cfg.num_slots, cfg.heads, cfg.head_dim, device=device) for _ in range(cfg.layers)]
        self.v = [torch.zeros(cfg.num_slots, cfg.heads, cfg.head_dim, device=device) for _ in range(cfg.layers)]
        self.req_to_token = torch.zeros(cfg.max_reqs, cfg.max_ctx, dtype=torch.int32, device=device)


class TritonAttnBackend(object):
    def __init__(self, cfg, pool, device):
        self.cfg, self.pool, self.device = cfg, pool, device
        self.max_len = cfg.max_ctx

    # -- eager: the batch's own tensors
    def init_forward_metadata(self, req_pool_indices, seq_lens, out_cache_loc):
        self.req_pool_indices, self.seq_lens, self.out_cache_loc = req_pool_indices, seq_lens, out_cache_loc
        self.max_len = self.cfg.max_ctx

    # -- graphs: persistent buffers the captured kernels read
    def init_cuda_graph_state(self, max_bs):
        self.cuda_graph_seq_lens = torch.ones(max_bs, dtype=torch.int32, device=self.device)
        self.cuda_graph_req_pool_indices = torch.zeros(max_bs, dtype=torch.int32, device=self.device)
        self.seq_lens_cpu = torch.full((max_bs,), 8, dtype=torch.int32)  # a CPU mirror of the lengths

    def init_forward_metadata_capture_cuda_graph(self, bs, out_cache_loc):
        self.req_pool_indices = self.cuda_graph_req_pool_indices[:bs]
        self.seq_lens = self.cuda_graph_seq_lens[:bs]
        self.out_cache_loc = out_cache_loc
        if plants.on("baked"):
            self.max_len = int(self.seq_lens_cpu[:bs].max())  # PLANT-BAKED
        else:
            self.max_len = self.cfg.max_ctx

    def init_forward_metadata_replay_cuda_graph(self, bs, padded, req_pool_indices, seq_lens):
        self.cuda_graph_req_pool_indices[bs:padded].fill_(0)
        self.cuda_graph_req_pool_indices[:bs].copy_(req_pool_indices)
        if plants.on("rebind"):
            fresh = torch.ones(padded, dtype=torch.int32, device=self.device)
            fresh[:bs].copy_(seq_lens)
            self.cuda_graph_seq_lens = fresh  # PLANT-REBIND
        else:
            self.cuda_graph_seq_lens[bs:padded].fill_(1)
            self.cuda_graph_seq_lens[:bs].copy_(seq_lens)
        self.seq_lens_cpu[:bs].copy_(seq_lens.cpu())

    # -- the layer's two calls
    def store_kv(self, layer, k, v):
        self.pool.k[layer].index_copy_(0, self.out_cache_loc.long(), k)
        self.pool.v[layer].index_copy_(0, self.out_cache_loc.long(), v)

    def forward_decode(self, layer, q):
        n = q.shape[0]
        cfg = self.cfg
        o = torch.empty_like(q)
        decode_attention_kernel[(n, cfg.heads)](
            q, self.pool.k[layer], self.pool.v[layer], o, self.pool.req_to_token, self.req_pool_indices, self.seq_lens,
            self.pool.req_to_token.stride(0), self.max_len, cfg.head_dim ** -0.5,
            H=cfg.heads, D=cfg.head_dim, BLOCK_N=cfg.max_ctx)
        return o
