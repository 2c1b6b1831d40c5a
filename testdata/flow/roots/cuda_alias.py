"""torch.cuda.graph under three import spellings. The warm-up before the capture is eager."""
import torch
import torch.cuda as tcuda
from torch import cuda
from torch.cuda import graph as cuda_graph


def step_a(x):  # context: captured
    return x * x.max().item()  # want: CG101


def step_b(x):  # context: captured
    return x * x.min().item()  # want: CG101


def step_c(x):  # context: captured
    return x * x.sum().item()  # want: CG101


def warm_up(x):  # context: eager
    print(x.mean().item())


def capture_all(x):
    g1, g2, g3 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    warm_up(x)
    torch.cuda.synchronize()
    with cuda_graph(g1):
        step_a(x)
    with tcuda.graph(g2):
        step_b(x)
    with cuda.graph(g3):
        step_c(x)
    return g1, g2, g3
