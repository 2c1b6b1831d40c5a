"""Classes chosen at import time by an opt-in gate: the profiling timer exists only when
the gate is on, so its methods are captured only then (warnings naming the gate). A
class chosen by a feature switch, or one also used directly, is captured as usual."""
import contextlib
import os

import torch


class _TimerBase:
    def _sync(self):  # context: captured conditional
        torch.cuda.synchronize()  # want: CG101?


class _CudaTimer(_TimerBase):
    def __enter__(self):  # context: captured conditional
        self._sync()
        return self

    def __exit__(self, *exc):  # context: captured conditional
        torch.cuda.synchronize()  # want: CG101?
        return False


class _NoTimer:
    def __enter__(self):  # context: captured
        return self

    def __exit__(self, *exc):  # context: captured
        return False


StepTimer = _CudaTimer if os.environ.get("ENGINE_PROFILE_STEPS") else _NoTimer


class _HostTopK:
    def run(self, x):  # context: captured
        return x.nonzero()  # want: CG104


class _DeviceTopK:
    def run(self, x):  # context: captured
        return x.topk(4).indices


# A feature switch, not an opt-in debug gate.
TopK = _HostTopK if os.environ.get("ENGINE_TOPK_HOST") else _DeviceTopK


class _Dumper:
    def dump(self, x):  # context: captured
        return x.sum().item()  # want: CG101


Dump = _Dumper if os.environ.get("ENGINE_DEBUG_DUMP") else None
ALWAYS_DUMP = _Dumper()  # used directly too: not only the gate selects it


class _StageTimer(contextlib.ContextDecorator):
    def __init__(self, name):
        self.name = name

    def __enter__(self):  # context: captured conditional
        torch.cuda.synchronize()  # want: CG101?
        return self

    def __exit__(self, *exc):  # context: captured conditional
        torch.cuda.synchronize()  # want: CG101?
        return False


class _NullStage(contextlib.ContextDecorator):
    def __init__(self, name):
        self.name = name

    def __enter__(self):  # context: captured
        return self

    def __exit__(self, *exc):  # context: captured
        return False


StageTimer = _StageTimer if os.environ.get("ENGINE_PROFILE_STAGES") else _NullStage


def decode_layers(x):  # context: captured
    with StageTimer("decode layers"):
        return x * 2


def step(x):  # context: captured
    with StepTimer():
        y = TopK().run(x)
    ALWAYS_DUMP.dump(y)
    return decode_layers(y)


def capture_step(g, x):  # context: eager
    with torch.cuda.graph(g):
        step(x)
