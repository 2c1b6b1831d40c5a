from dataclasses import dataclass, field


@dataclass
class EngineConfig:
    model: str = "tiny-llama"
    attention: str = "triton"
    layer_type: str = "llama"
    vocab: int = 512
    hidden: int = 256
    heads: int = 8
    head_dim: int = 32
    layers: int = 4
    page_size: int = 16
    max_seq: int = 128
    num_pages: int = 256
    batch_sizes: list = field(default_factory=lambda: [1, 2, 4, 8])
    capture_via: str = "with"  # "with": torch.cuda.graph; "getattr": capture_begin/end by names built at run time
    plant: str = "none"  # none | rebind | freed | sync | baked

    @property
    def max_batch(self):
        return max(self.batch_sizes)
