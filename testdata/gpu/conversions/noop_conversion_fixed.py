"""Replay prep that binds a converted tensor to state the captured step reads (CG201).

A conversion to a tensor's own dtype returns the tensor itself (`Tensor.to`'s documented contract),
so binding `state.lens = src.to(torch.int32)` moves the attribute only where `src` is not int32 or
is another tensor than the one bound at capture. capguard reports an error only where it proves a
new tensor (the prep converts a tensor it made, or an attribute allocated with another dtype) and a
warning that names the dtype where it cannot. This script measures each case on the GPU: replays
with new inputs against an eager run of the step, at several sizes. A case claimed "stale" must
diverge (or fault); one claimed "clean" must not; an error must never sit on a clean case.

    python3 testdata/gpu/conversions/noop_conversion.py --json OUT.json
"""
import argparse
import json
import sys

import torch


# Captured kernels must read stable addresses: keep per-call temporaries in
# buffers that outlive every graph (see `capguard rule CG301`).
_persistent_buffers = {}
_retired_buffers = []


def persistent_buffer(site, src, dtype=None, copy=False):
    """Copy src into the persistent buffer of site; return a view shaped like src."""
    dtype = src.dtype if dtype is None else dtype
    if not copy and dtype == src.dtype and src.is_cuda and src.is_contiguous() and torch.cuda.is_current_stream_capturing():
        return src  # nothing to convert: the graph reads the source where it is
    key = (site, dtype, src.device)
    n = src.numel()
    buf = _persistent_buffers.get(key)
    if buf is None or buf.numel() < n:
        if src.is_cuda and torch.cuda.is_current_stream_capturing():
            have = 0 if buf is None else buf.numel()
            raise RuntimeError(
                f"persistent_buffer {site!r}: needs {n} elements of {dtype} on "
                f"{src.device} but has {have} while the stream is capturing; "
                "warm up at the largest batch size before capture"
            )
        if buf is not None:
            _retired_buffers.append(buf)  # a graph captured earlier may read it
        buf = torch.empty(n, dtype=dtype, device=src.device)
        _persistent_buffers[key] = buf
    out = buf[:n].view(src.shape)
    out.copy_(src)
    return out


class State:
    pass


def step(st):
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < st.lens[:, None], st.x, 0.0)


class SameDtype:
    """The prep converts an int32 buffer it refreshes in place: `.to` returns the buffer itself."""

    def __init__(self, n, dev):
        self.st = State()
        self.st.x = torch.zeros((n, 64), device=dev)
        self.lens_buf = torch.ones(n, dtype=torch.int32, device=dev)
        self.st.lens = self.lens_buf

    def prepare(self, lens):  # expected: a CG201 warning (assumes `self.lens_buf` is not already int32)
        self.lens_buf.copy_(lens)
        self.st.lens = persistent_buffer((id(self.st), "noop_conversion.SameDtype.prepare.self_st.lens"), self.lens_buf, torch.int32)


class SameDtypeDevice:
    """The prep converts an int32 buffer it refreshes in place, naming its device too:
    `.to(device=d, dtype=t)` of a tensor on d with dtype t returns the tensor itself."""

    def __init__(self, n, dev):
        self.st = State()
        self.st.x = torch.zeros((n, 64), device=dev)
        self.lens_buf = torch.ones(n, dtype=torch.int32, device=dev)
        self.st.lens = self.lens_buf

    def prepare(self, lens):  # expected: a CG201 warning (assumes int32 on that device already)
        self.lens_buf.copy_(lens)
        self.st.lens = self.lens_buf.to(device=self.lens_buf.device, dtype=torch.int32)


class WiderDtype:
    """The prep converts an int64 buffer: every prep binds a new int32 tensor."""

    def __init__(self, n, dev):
        self.st = State()
        self.st.x = torch.zeros((n, 64), device=dev)
        self.wide = torch.ones(n, dtype=torch.int64, device=dev)
        self.st.lens = self.wide.to(torch.int32)

    def prepare(self, lens):  # expected: a CG201 error (`wide` is allocated int64 everywhere)
        self.wide.copy_(lens)
        self.st.lens = persistent_buffer((id(self.st), "noop_conversion.WiderDtype.prepare.self_st.lens"), self.wide, torch.int32)


class FreshArg:
    """The caller hands a new int32 tensor each step: the no-op conversion binds it."""

    def __init__(self, n, dev):
        self.st = State()
        self.st.x = torch.zeros((n, 64), device=dev)
        self.st.lens = torch.ones(n, dtype=torch.int32, device=dev)

    def prepare(self, lens):  # expected: a CG201 warning (assumes `lens` is not already int32)
        self.st.lens = persistent_buffer((id(self.st), "noop_conversion.FreshArg.prepare.self_st.lens"), lens, torch.int32)


class MadeHere:
    """The prep converts a tensor it computes: a new tensor every step."""

    def __init__(self, n, dev):
        self.st = State()
        self.st.x = torch.zeros((n, 64), device=dev)
        self.st.lens = torch.ones(n, dtype=torch.int32, device=dev)

    def prepare(self, lens):  # expected: a CG201 error (the prep made the tensor it converts)
        shifted = lens + 0
        self.st.lens = persistent_buffer((id(self.st), "noop_conversion.MadeHere.prepare.self_st.lens"), shifted, torch.int32)


# (case, rule, claim, capguard's severity, class): the GPU's expected verdict for replays after
# the prep, and what capguard reports on the class's prepare (guard/conversion_truth_test.go).
CASES = [
    ("same_dtype_buffer", "CG201", "clean", "warning", SameDtype),
    ("same_dtype_device_buffer", "CG201", "clean", "warning", SameDtypeDevice),
    ("wider_dtype_buffer", "CG201", "stale", "error", WiderDtype),
    ("fresh_argument", "CG201", "stale", "warning", FreshArg),
    ("made_in_prep", "CG201", "stale", "error", MadeHere),
]


def run_case(cls, n, dev, steps=5):
    torch.manual_seed(n)
    case = cls(n, dev)
    case.prepare(torch.randint(1, 64, (n,), dtype=torch.int32, device=dev))
    for _ in range(2):
        step(case.st)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step(case.st)
    worst = 0.0
    for _ in range(steps):
        case.st.x.copy_(torch.randn((n, 64), device=dev))
        case.prepare(torch.randint(1, 64, (n,), dtype=torch.int32, device=dev))
        junk = [torch.randint(0, 64, (n * 64,), device=dev) for _ in range(8)]  # churn the allocator
        del junk
        g.replay()
        torch.cuda.synchronize()
        worst = max(worst, (out - step(case.st)).abs().max().item())
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the verdicts here")
    args = ap.parse_args()
    dev = torch.device("cuda")
    rows = []
    for name, rule, claim, _severity, cls in CASES:
        per = {}
        for n in (1, 4, 32):
            try:
                per[n] = "stale" if run_case(cls, n, dev) > 0 else "clean"
            except RuntimeError as e:  # a fault counts as stale
                per[n] = "fault: " + str(e).splitlines()[0][:80]
        verdict = "clean" if all(v == "clean" for v in per.values()) else "stale"
        rows.append({"case": name, "rule": rule, "claim": claim, "verdict": verdict, "per_size": per})
        print(f"{name:22s} claim {claim:5s} verdict {verdict:5s} {per}")
    doc = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0 if all(r["verdict"] == r["claim"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
