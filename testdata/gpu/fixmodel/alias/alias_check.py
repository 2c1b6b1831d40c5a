"""GPU check of the fix model's in-place aliasing facts (issue 18, pattern (f)
through aliases): every function of testdata/fixmodel/linear_attn.py,
engine_cache.py and inplace_kernels.py, in three versions: the original, what `capguard fix
--unsafe-fixes` writes now (*_fixed.py: the conversions whose memory is
written in place keep no fix) and what main's binary at d42c058 wrote
(*_mainfix.py: those conversions copied into persistent buffers too).

Each function runs eagerly on 3 input sets, and captured once in a CUDA
graph then replayed on 3 more (inputs written into the static tensors with
copy_ before each replay). What it returns and every input it may update
in place (the caller's x, state, kv cache, query) are compared bitwise with
the original run eagerly on the same inputs. Prints one JSON object:
{version: {function: {"eager": [equal...], "graph": [equal...]}}}.
"""
import importlib.util
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
SRC = os.path.join(ROOT, "testdata", "fixmodel")
B, D, P = 4, 64, 32


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def inputs(case, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g).cuda()
    if case in ("token_shift", "token_shift_new"):
        return [r(B, D), r(B, D)]
    if case in ("readout_decay", "readout", "readout_logged"):
        return [r(B, D), r(B, D)]
    if case in ("recurrent_step", "chunk_step"):
        return [r(B, D), r(B, D), r(B, D)]
    if case in ("write_cache",):
        slots = torch.randperm(P, generator=g)[:B].to(torch.int32).cuda()
        return [r(B, D), r(P, D), slots]
    if case == "read_cache":
        slots = torch.randperm(P, generator=g)[:B].to(torch.int32).cuda()
        return [r(P, D), slots]
    if case == "rope":
        pos = torch.randint(0, P, (B,), generator=g).to(torch.int32).cuda()
        return [pos, r(B, D)]
    if case in ("gate_", "gate_twice", "gate_rows", "gate_or_reduce", "gate_rows_into"):
        return [r(64)]
    if case == "scatter_rows":
        return [torch.randperm(64, generator=g).cuda(), r(64), torch.zeros(64).cuda()]
    if case.split(":")[0] in FLAGS:
        return [r(64), r(64)]
    raise KeyError(case)


CASES = {
    "linear_attn": ["token_shift", "token_shift_new", "readout_decay", "readout", "recurrent_step", "chunk_step", "readout_logged"],
    "engine_cache": ["write_cache", "read_cache", "rope"],
    "inplace_kernels": ["gate_", "gate_twice", "gate_rows", "gate_or_reduce", "gate_rows_into", "scatter_rows",
                        "observe", "observe:fresh", "observe_or_fill", "observe_or_fill:fused", "observe_fused",
                        "observe_fused:fused"],
}

# case "name:flag" calls name with its last (boolean) parameter True; plain
# "observe*" with it False.
FLAGS = {"observe": "fresh", "observe_or_fill": "fused", "observe_fused": "fused"}


def caller(mod, lib, case):
    if lib == "engine_cache":
        g = torch.Generator(device="cpu").manual_seed(99)
        attn = mod.PagedAttention(D, torch.randn(P, D, generator=g).cuda())
        return getattr(attn, case)
    name, _, flag = case.partition(":")
    fn = getattr(mod, name)
    if case == "token_shift":
        return lambda x, prev: fn(x, prev, inplace=True)
    if name in FLAGS:
        return lambda x, m: fn(x, m, **{FLAGS[name]: bool(flag)})
    return fn


def flat(res, args):
    res = res if isinstance(res, tuple) else (res,)
    return [t.detach().clone() for t in list(res) + list(args) if torch.is_tensor(t)]


def equal(a, b):
    return len(a) == len(b) and all(x.shape == y.shape and torch.equal(x, y) for x, y in zip(a, b))


def reference(orig, lib, case, seed):
    args = inputs(case, seed)
    res = caller(orig, lib, case)(*args)
    return flat(res, args)


def check(mod, orig, lib, case):
    fn = caller(mod, lib, case)
    eager = []
    for seed in range(3):
        args = inputs(case, seed)
        eager.append(equal(flat(fn(*args), args), reference(orig, lib, case, seed)))
    static = inputs(case, 100)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn(*[t.clone() for t in static])  # warm-up: persistent buffers sized
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        res = fn(*static)
    replays = []
    for seed in range(3, 6):
        new = inputs(case, seed)
        for t, n in zip(static, new):
            t.copy_(n)
        graph.replay()
        torch.cuda.synchronize()
        replays.append(equal(flat(res, static), reference(orig, lib, case, seed)))
    return {"eager": eager, "graph": replays}


def main():
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    for lib, cases in CASES.items():
        orig = load(lib + "_orig", os.path.join(SRC, lib + ".py"))
        for version, path in (("original", os.path.join(SRC, lib + ".py")),
                              ("fixed", os.path.join(HERE, lib + "_fixed.py")),
                              ("main_fix", os.path.join(HERE, lib + "_mainfix.py"))):
            mod = load(lib + "_" + version, path)
            for case in cases:
                try:
                    r = check(mod, orig, lib, case)
                except Exception as e:  # noqa: BLE001 - a failing version is a result
                    r = {"error": f"{type(e).__name__}: {e}"}
                out.setdefault(version, {})[case] = r
                print(version, case, r, file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
