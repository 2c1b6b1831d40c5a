"""Library mode with extensions built at run time: the module a load of CUDA sources returns
launches kernels; one built from C++ sources only does not."""
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor scale_rows(torch::Tensor x, double s);"
_CUDA = "__global__ void scale_kernel(float* x, float s) {}"

_scale = load_inline(name="scale_ext", cpp_sources=[_CPP], cuda_sources=[_CUDA], functions=["scale_rows"])
_count = load_inline(name="count_ext", cpp_sources=["int64_t count_rows(torch::Tensor x);"], functions=["count_rows"])


def scale_rows(x, factor):  # context: launcher
    s = factor.max().item()  # want: CG101~
    return _scale.scale_rows(x, s)  # want: CG102~


def count_rows(x):  # context: eager
    n = x.abs().sum().item()
    return _count.count_rows(x) + n
