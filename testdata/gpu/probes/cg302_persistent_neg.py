"""CG302 negative: a reader documented as capture-safe that keeps its claim: it copies into buffers
allocated once and launches the kernel on them.

GPU expectation: clean, and capguard finds nothing to doubt in the claim.
"""
# probe: CG302 negative
import torch
import triton
import triton.language as tl

T = 64
D = 32


@triton.jit
def _masked_dot_kernel(q_ptr, k_ptr, lens_ptr, out_ptr, T: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(0)
    t = tl.arange(0, T)
    d = tl.arange(0, D)
    n = tl.load(lens_ptr + b)
    k = tl.load(k_ptr + t[:, None] * D + d[None, :])
    q = tl.load(q_ptr + b * D + d)
    s = tl.sum(k * q[None, :], axis=1)
    tl.store(out_ptr + b * T + t, tl.where(t < n, s, 0.0))


def _masked_dot_kernel_cpu(grid, q, k, lens, out, T, D):
    s = q @ k.t()
    cols = torch.arange(T)[None, :]
    out.copy_(torch.where(cols < lens.long()[:, None], s, torch.zeros_like(s)))


class Reader:
    """Capture-safe: every buffer the kernel reads is allocated once, in __init__."""

    def __init__(self, max_bs, dev):
        self.q = torch.zeros((max_bs, D), device=dev)
        self.lens = torch.zeros(max_bs, dtype=torch.int32, device=dev)
        self.out = torch.zeros((max_bs, T), device=dev)

    def __call__(self, q, k, lens):
        bs = q.shape[0]
        self.q[:bs].copy_(q[:, 0])
        self.lens[:bs].copy_(lens.reshape(-1))
        _masked_dot_kernel[(bs,)](self.q[:bs], k, self.lens[:bs], self.out[:bs], T=T, D=D)
        return self.out[:bs]


class State:
    pass


def build(B, dev):
    st = State()
    st.q = torch.zeros((B, 1, D), device=dev)
    st.k = torch.zeros((T, D), device=dev)
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.reader = Reader(B, dev)
    return st


def fill(st, gen):
    st.q.copy_(torch.randn(st.q.shape, generator=gen))
    st.k.copy_(torch.randn(st.k.shape, generator=gen))
    st.lens.copy_(torch.randint(1, T + 1, st.lens.shape, generator=gen))


def step(st):
    return st.reader(st.q, st.k, st.lens).clone()


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = st.reader(st.q, st.k, st.lens)
    return g
