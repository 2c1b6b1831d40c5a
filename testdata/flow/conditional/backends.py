"""A backend picked by device type: a CUDA graph runs on a CUDA device, so
the NPU backend and the CPU branch are never captured (no finding there)."""
import torch


def current_device_type():  # context: captured
    return torch.get_default_device().type


class CudaOps:
    def run(self, x):  # context: captured
        if x.device.type == "cpu":
            return x.tolist()
        return x.sum().item()  # want: CG101


class NpuOps:
    def run(self, x):  # context: eager
        return x.sum().item()


def backend_class():  # context: captured
    device_type = current_device_type()
    if device_type == "npu":
        return NpuOps
    elif device_type in ("xpu", "hpu"):
        return NpuOps
    return CudaOps
