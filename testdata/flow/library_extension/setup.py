"""Build script of a small op library with its own compiled extensions: one CUDA extension, whose
module name is a module-level constant, and one CPU extension (a CppExtension, not kernels)."""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

CUDA_EXT = "normext_cuda"

setup(
    name="normlib",
    packages=["normlib"],
    ext_modules=[
        CUDAExtension(CUDA_EXT, ["csrc/norm.cpp", "csrc/norm_kernel.cu"]),
        CppExtension(name="normext_cpu", sources=["csrc/stats.cpp"]),
    ],
    cmdclass={"build_ext": BuildExtension},
)
