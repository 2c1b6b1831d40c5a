"""Library mode with a declared CUDA extension: nothing here captures, so any caller may capture a
public function that reaches one of the extension's ops (setup.py declares `normext_cuda` a
CUDAExtension). The CppExtension's ops are CPU code: a function that only calls them launches
nothing."""
import normext_cpu
import normext_cuda


def _check_finite(x):  # context: launcher
    if not x.isfinite().all().item():  # want: CG101~
        raise FloatingPointError("non-finite input")


def fused_norm(x, weight, eps=1e-6):  # context: launcher
    _check_finite(x)
    return normext_cuda.fused_norm_fwd(x, weight, eps)


def row_stats(x):  # context: eager
    total = x.sum().item()
    return normext_cpu.row_stats(x, total)
