"""GPU check of issue 18's CG202 patterns: a graph's static inputs (made before
the capture, refreshed with copy_ after it or by a replay closure) and a value
truly derived from an input before the capture (cu_seqlens).

Runs each capture function of three versions of testdata/fixmodel/static_inputs.py:
original, what capguard fix writes now (static_inputs_fixed.py: only the
derived cu_seqlens moves into the region) and what the baseline binary wrote
(static_inputs_basefix.py: the static inputs moved too). Each replay's output
is compared with eager on the same inputs. Prints one JSON object.
"""
import importlib.util
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
VERSIONS = {
    "original": os.path.join(ROOT, "testdata", "fixmodel", "static_inputs.py"),
    "fixed": os.path.join(HERE, "static_inputs_fixed.py"),
    "baseline_fix": os.path.join(HERE, "static_inputs_basefix.py"),
}


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def model(t):
    return t.float() * 2 + 1


def warm(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)


def run(mod):
    dev = "cuda"
    gen = torch.Generator(device="cpu").manual_seed(0)
    batches = [torch.randint(0, 100, (4,), generator=gen).to(dev) for _ in range(5)]
    example = torch.randint(0, 100, (4,), generator=gen).to(dev)
    out = {}
    # replay_all: written after the region with copy_.
    warm(lambda: model(example))
    got = mod.replay_all(model, example, batches)
    out["replay_all (static input, copy_ after the region)"] = [bool(torch.equal(g, model(b))) for g, b in zip(got, batches)]
    # make_replayer: written by a replay closure.
    run_fn = mod.make_replayer(model, example)
    out["make_replayer (static input, replay closure)"] = [bool(torch.equal(run_fn(b), model(b))) for b in batches]
    # replay_decode: cu_seqlens derived from seq_lens before the capture.
    seq_lens = torch.randint(1, 9, (4,), generator=gen).to(dev)
    new_lens = [torch.randint(1, 9, (4,), generator=gen).to(dev) for _ in range(5)]
    got = mod.replay_decode(model, seq_lens, new_lens)
    out["replay_decode (cu_seqlens derived before the capture)"] = [bool(torch.equal(g, model(torch.cumsum(l, 0)))) for g, l in zip(got, new_lens)]
    return out


def main():
    report = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "versions": {}}
    for name, path in VERSIONS.items():
        try:
            report["versions"][name] = run(load("static_inputs_" + name, path))
        except Exception as e:  # a version that does not run is a result too
            report["versions"][name] = {"error": repr(e)}
    json.dump(report, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
