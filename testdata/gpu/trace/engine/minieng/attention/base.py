import torch

from .. import runlog


class DecodeMeta(object):
    """The metadata one captured batch size reads."""

    def __init__(self, bs, scale):
        self.bs = bs
        self.scale = scale


class PagedBackendBase(object):
    """A paged KV cache and the persistent metadata buffers every captured
    batch size reads through views (refreshed in place before each replay)."""

    def __init__(self, cfg, device):
        self.cfg = cfg
        self.device = device
        n_slots = cfg.num_pages * cfg.page_size
        shape = (cfg.layers, n_slots, cfg.heads, cfg.head_dim)
        self.k_cache = torch.zeros(shape, dtype=torch.bfloat16, device=device)
        self.v_cache = torch.zeros(shape, dtype=torch.bfloat16, device=device)
        pages_per_seq = cfg.max_seq // cfg.page_size
        self.block_table = torch.zeros((cfg.max_batch, pages_per_seq), dtype=torch.int32, device=device)  # ALLOC-BLOCK-TABLE
        self.seq_lens = torch.ones(cfg.max_batch, dtype=torch.int32, device=device)
        self.seq_lens_cpu = torch.ones(cfg.max_batch, dtype=torch.int32)
        self.slot_mapping = torch.zeros(cfg.max_batch, dtype=torch.int64, device=device)
        self.meta = None

    def init_capture_metadata(self, bs):
        runlog.here()
        scale = torch.ones(bs, device=self.device) if self.cfg.plant == "freed" else None  # PLANT-FREED-ALLOC
        self.meta = DecodeMeta(bs, scale)  # DROP-META: drops the previous batch size's metadata
        return self.meta

    def prepare_replay(self, bs, seq_lens_cpu, block_table_cpu):
        """Replay-prep: refresh the metadata the graph of batch size bs reads."""
        runlog.here()
        self.seq_lens_cpu[:bs].copy_(seq_lens_cpu)
        self.seq_lens[:bs].copy_(seq_lens_cpu, non_blocking=True)
        if self.cfg.plant == "rebind":
            self.block_table = block_table_cpu.to(dtype=torch.int32, device=self.device)  # PLANT-REBIND
        else:
            self.block_table[:bs].copy_(block_table_cpu, non_blocking=True)
        slots = self._slots(seq_lens_cpu, block_table_cpu)
        self.slot_mapping[:bs].copy_(slots, non_blocking=True)

    def _slots(self, seq_lens_cpu, block_table_cpu):
        runlog.here()
        pos = seq_lens_cpu.to(torch.int64) - 1
        page = block_table_cpu.to(torch.int64).gather(1, (pos // self.cfg.page_size)[:, None])[:, 0]
        return page * self.cfg.page_size + pos % self.cfg.page_size

    def store_kv(self, k, v, layer_id, bs):
        runlog.here()
        slots = self.slot_mapping[:bs]
        self.k_cache[layer_id].index_copy_(0, slots, k.to(torch.bfloat16))
        self.v_cache[layer_id].index_copy_(0, slots, v.to(torch.bfloat16))
