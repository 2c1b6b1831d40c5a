"""Claims read with their negation, and opt-in debug gates. A docstring that says a
function is *not* capture-safe claims nothing; one that says it is makes it a claimed
root, whose capture-hazard findings are warnings (a claim is the author's word). Code under an opt-in gate (a debug environment variable, a debug or profiling
flag) is not on the captured path by default: its findings are warnings naming the
gate; a gate that is no debug or profiling switch keeps its findings errors."""
import functools
import os

import torch

_DEBUG = os.environ.get("ENGINE_DEBUG_NANS") == "1"


def gather_rows(x, idx):  # context: eager
    """Gather rows on the host. This is not CUDA-graph capture safe: it reads the
    index back to size the output."""
    n = int(idx.max().item())
    return x[:n]


def scatter_rows(x, idx):  # context: eager
    """Scatter rows. No longer capture-safe since the host gather was added."""
    return x[idx.nonzero()]


def fused_norm(x, w):  # context: claimed
    """Fused RMS norm, CUDA-graph safe."""  # want: CG302
    return x * w / x.pow(2).mean(-1, keepdim=True).sqrt().max().item()  # want: CG101~


class Sampler:
    def __init__(self):
        self.profile = False

    def sample(self, logits):  # context: captured
        if os.environ.get("ENGINE_DEBUG"):
            print("max logit", logits.max().item())  # want: CG101?
        if _DEBUG and logits.isnan().any():  # want: CG101?
            raise FloatingPointError("nan logits")
        if self.profile:
            torch.cuda.synchronize()  # want: CG101?
        if os.environ.get("ENGINE_TOPK_HOST"):
            # A feature switch, not a debug gate: still an error.
            return logits.topk(int(logits.shape[-1] // 2)).indices.nonzero()  # want: CG104?
        return logits.argmax(-1)


def capture(g, sampler: Sampler, logits):  # context: eager
    with torch.cuda.graph(g):
        sampler.sample(logits)


@functools.lru_cache(maxsize=None)
def rotation_matrix(dim, device):  # context: claimed
    """Built on the first call for each size; a warm-up before capture fills the cache."""
    signs = torch.tensor([1.0 if i % 2 else -1.0 for i in range(dim)], device=device)  # want: CG103?
    return scaled_identity(dim, device) * signs


def scaled_identity(dim, device):  # context: claimed conditional
    return torch.eye(dim, device=device) * torch.tensor(dim**-0.5, device=device)  # want: CG103?


def rotate(x):  # context: claimed
    """Rotates the last dimension; CUDA-graph safe once the rotation is cached."""  # want: CG302
    out = x @ rotation_matrix(x.shape[-1], x.device)
    return out * torch.tensor(2.0, device=x.device)  # want: CG103~


def setup_training(model, steps):  # context: eager
    """Set up the model and run the training loop."""
    total = int(steps.sum().item())
    # Allocate from the graph pool so later captures keep CUDA-graph-safe pointers.
    buf = torch.empty(total, device="cuda")
    return model(buf)


def fused_bias_gelu(x, b):  # context: claimed
    # CUDA-graph safe: no host reads, fixed shapes.
    y = x + b
    return y * torch.sigmoid(1.702 * y)
