"""Library mode, constructors: a library's class builds its state once (workspaces, communicator
handles, a barrier), before an engine captures the methods that launch its kernels. Its
constructor is no launcher root, whatever it synchronizes; its launching methods are, and a
launcher that builds such an object reaches the constructor as its own code."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


class Workspace:
    def __init__(self, n: int):  # context: launcher
        self.buf = torch.empty(n, device="cuda")
        _scale_kernel[(1,)](self.buf, self.buf, n, BLOCK=128)
        torch.cuda.synchronize()  # want: CG101~

    def run(self, x: torch.Tensor):  # context: launcher
        _scale_kernel[(1,)](x, self.buf, x.numel(), BLOCK=128)
        return self.buf


def scaled_once(x: torch.Tensor):  # context: launcher
    # A launcher that builds its workspace per call runs the constructor where it is captured.
    return Workspace(x.numel()).run(x)


class Exchanger:
    def __init__(self, n: int):  # context: eager
        self.peer = torch.empty(n, device="cuda")
        _scale_kernel[(1,)](self.peer, self.peer, n, BLOCK=128)
        torch.cuda.synchronize()

    def send(self, x: torch.Tensor):  # context: launcher
        _scale_kernel[(1,)](x, self.peer, x.numel(), BLOCK=128)
