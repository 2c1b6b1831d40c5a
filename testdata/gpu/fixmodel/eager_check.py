"""GPU check of issue 18's per-instance buffer key, eagerly: two layers update
their scales through one call site. The original, what capguard fix writes now
(layer_scales_fixed.py: a buffer per instance) and what the baseline binary
wrote (layer_scales_basefix.py: one buffer per class and site) each run
load_scales + two_layers three times with new scales; each output is compared
with the original's. verify --fixed compares a version's replay with its own
eager run, so a fix that changes the eager meaning shows only here.
Prints one JSON object.
"""
import importlib.util
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
VERSIONS = {
    "original": os.path.join(ROOT, "testdata", "verify", "fixmodel_layer_scales.py"),
    "fixed": os.path.join(HERE, "layer_scales_fixed.py"),
    "baseline_fix": os.path.join(HERE, "layer_scales_basefix.py"),
}


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    dev = "cuda" if torch.cuda.is_available() else "cpu"  # eager: the CPU shows it too
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(4, 128, generator=gen).to(dev)
    scales = [(torch.rand(128, generator=gen) + 0.5).half().to(dev) for _ in range(3)]
    outs = {}
    for name, path in VERSIONS.items():
        mod = load("layer_scales_" + name, path)
        outs[name] = []
        for s in scales:
            mod.load_scales(s)
            outs[name].append(mod.two_layers(x).clone())
    report = {"torch": torch.__version__, "device": torch.cuda.get_device_name() if dev == "cuda" else "cpu",
              "equal_to_original_eager": {n: [bool(torch.equal(a, b)) for a, b in zip(o, outs["original"])] for n, o in outs.items()}}
    json.dump(report, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
