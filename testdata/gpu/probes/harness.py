"""GPU truth table harness: run capguard's rule probes on a GPU and say what the GPU says.

Each probe (testdata/gpu/probes/cg*.py) is a small program in the shape of inference code that
captures a CUDA graph, with a header naming the rule it is a positive or negative example of:

    # probe: CG101 positive

and these functions (the capture code is the probe's own, so capguard sees it):

    build(B, dev) -> st          allocate the static inputs (and whatever the program keeps)
    fill(st, gen)                write a new batch into the static inputs (host generator gen)
    step(st)                     one eager step; the default warm-up and reference
    capture(st) -> graph         capture the step; the output is left in st.out
    replay(st, g) -> out         optional: replay-prep, then g.replay() (default: g.replay(); st.out)
    reference(st) -> out         optional: what the program means for the current inputs (default: step(st))
    warmup(st)                   optional (default: step(st) three times on a side stream)

For each batch size (1, 4, 32): build, fill, warm up, capture; then for each replay: fill a new
batch, churn the caching allocator and poison every block it hands out, replay, and compare the
replay's output bitwise with the reference on the same inputs. Verdicts:

    clean          every replay equals the reference
    stale-read     a replay differs from the reference
    fault          replay (or the synchronize after it) raised a CUDA error
    capture-error  capture itself failed (a synchronization under capture, a data-dependent size)
    error          the probe could not run at all (a bug in the probe; never a rule's answer)

One probe per process: a CUDA error is sticky, so the process stops at the first fault or failed
capture. Usage:

    python3 harness.py PROBE.py [--batches 1,4,32] [--replays 5]   one probe, JSON on the last line
    python3 harness.py --all DIR [--jobs 4] [--out verdicts.json]   every probe of DIR, one process each
    python3 harness.py --dry PROBE.py [--compare OTHER.py]          CPU plumbing check (see below)

--dry runs on the CPU (torch without CUDA, no Triton): torch.cuda.graph and CUDAGraph become
stand-ins that run the captured block eagerly and replay nothing, and a Triton kernel runs the
probe's `<kernel>_cpu` function. It checks that every part of the probe runs; its verdict is
`dry`. --compare runs another version of the probe (the same probe after `capguard fix`) on the
same inputs and fails unless every step's output is bitwise equal to the original's.
"""

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import traceback
import types

POISON_INT = 0x7FFFFFF0
POISON_FLOAT = -7.0e30
ORDER = ["error", "fault", "capture-error", "stale-read", "clean", "dry"]


def probe_name(path):
    """cg101_item_pos, or fixed/cg202_derived_pos for a fixed version."""
    name = os.path.splitext(os.path.basename(path))[0]
    if os.path.basename(os.path.dirname(os.path.abspath(path))) == "fixed":
        return "fixed/" + name
    return name


def header(path):
    """The probe's rule and role from its `# probe: CG101 positive` line."""
    with open(path) as f:
        for line in f:
            m = re.match(r"#\s*probe:\s*(CG\d{3})\s+(positive|negative|policy)\b", line)
            if m:
                return m.group(1), m.group(2)
    raise SystemExit("%s: no `# probe: CGnnn positive|negative|policy` line" % path)


# ---------------------------------------------------------------- CPU stand-ins (--dry)


class _DryGraph:
    """torch.cuda.CUDAGraph without a GPU: capture runs the block eagerly, replay does nothing."""

    def capture_begin(self, *a, **k):
        pass

    def capture_end(self):
        pass

    def replay(self):
        pass

    def pool(self):
        return None


class _dry_graph_cm:
    def __init__(self, g, *a, **k):
        self.g = g

    def __enter__(self):
        return self.g

    def __exit__(self, *exc):
        return False


class _DryKernel:
    """A @triton.jit function: kernel[grid](*args) calls the module's `<name>_cpu(*args)`."""

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            cpu = self.fn.__globals__.get(self.fn.__name__ + "_cpu")
            if cpu is None:
                raise RuntimeError("dry run: no %s_cpu for Triton kernel %s" % (self.fn.__name__, self.fn.__name__))
            return cpu(grid, *args, **kwargs)
        return launch


class _Anything(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return object


def install_dry(torch):
    torch.cuda.CUDAGraph = _DryGraph
    torch.cuda.graph = _dry_graph_cm
    torch.cuda.synchronize = lambda *a, **k: None
    if not hasattr(torch.cuda, "is_current_stream_capturing"):
        torch.cuda.is_current_stream_capturing = lambda: False
    if "triton" not in sys.modules:
        triton = types.ModuleType("triton")
        triton.jit = lambda fn=None, **k: _DryKernel(fn) if fn is not None else (lambda f: _DryKernel(f))
        triton.cdiv = lambda a, b: (a + b - 1) // b
        triton.next_power_of_2 = lambda n: 1 << max(0, int(n) - 1).bit_length()
        tl = _Anything("triton.language")
        triton.language = tl
        sys.modules["triton"] = triton
        sys.modules["triton.language"] = tl


# ---------------------------------------------------------------- one probe


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def outputs(x):
    if isinstance(x, (tuple, list)):
        out = []
        for v in x:
            out.extend(outputs(v))
        return out
    return [x]


def snapshot(torch, x):
    return [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in outputs(x)]


def same(torch, a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or not bool(torch.equal(x.cpu(), y.cpu())):
                return False
        elif x != y:
            return False
    return True


def mismatches(torch, a, b):
    n = 0
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape:
            n += int((x.cpu() != y.cpu()).sum())
        elif not (isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor)) and x == y:
            continue
        else:
            n += 1
    return n


def churn(torch, dev):
    """Free-and-reuse the caching allocator, then hold poisoned blocks of every size class, so
    that memory a graph no longer owns holds poison at replay."""
    if dev == "cpu":
        return []
    junk = [torch.full((1 << 20,), -7.0, device=dev) for _ in range(8)]
    junk += [torch.full((1 << 18,), 123456789, dtype=torch.int64, device=dev) for _ in range(8)]
    del junk
    held = []
    for nbytes in (512, 1024, 2048, 4096, 16384, 65536, 262144, 1 << 20):
        for _ in range(32):
            held.append(torch.full((nbytes // 4,), POISON_INT, dtype=torch.int32, device=dev))
    for _ in range(8):
        held.append(torch.full((1 << 22,), POISON_INT, dtype=torch.int32, device=dev))
    for _ in range(4):
        held.append(torch.full((1 << 22,), POISON_FLOAT, dtype=torch.float32, device=dev))
    return held


def is_cuda_error(e):
    text = "%s: %s" % (type(e).__name__, e)
    return any(k in text for k in ("CUDA error", "cudaError", "illegal memory access", "misaligned address",
                                   "device-side assert", "unspecified launch failure", "an illegal instruction"))


def short_exc(e):
    lines = ("%s: %s" % (type(e).__name__, e)).strip().splitlines()
    return lines[0][:300] if lines else type(e).__name__


def run_batch(torch, mod, B, replays, dev, dry, seed):
    """One batch size: returns a dict with the verdict and what led to it."""
    res = {"batch": B, "replays": 0, "diverged": 0, "mismatched": 0}
    gen = torch.Generator().manual_seed(seed)
    phase = "build"
    try:
        st = mod.build(B, dev)
        phase = "fill"
        mod.fill(st, gen)
        phase = "warm-up"
        if hasattr(mod, "warmup"):
            mod.warmup(st)
        elif dev != "cpu":
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    mod.step(st)
            torch.cuda.current_stream().wait_stream(s)
        else:
            for _ in range(3):
                mod.step(st)
        if dev != "cpu":
            torch.cuda.synchronize()
    except Exception as e:  # the probe cannot run: not a rule's answer
        res.update(verdict="error", phase=phase, error=short_exc(e), trace=traceback.format_exc()[-2000:])
        return res
    try:
        g = mod.capture(st)
        if dev != "cpu":
            torch.cuda.synchronize()
    except Exception as e:  # whatever capture raises, the graph was not made
        res.update(verdict="capture-error", phase="capture", error=short_exc(e))
        return res
    reference = getattr(mod, "reference", mod.step)
    replay = getattr(mod, "replay", None)
    for _ in range(replays):
        try:
            mod.fill(st, gen)
            poison = churn(torch, dev)
            out = replay(st, g) if replay is not None else (g.replay() or st.out)
            got = snapshot(torch, out)
            if dev != "cpu":
                torch.cuda.synchronize()
            del poison
        except Exception as e:
            res.update(verdict="fault" if is_cuda_error(e) or dev != "cpu" else "error", phase="replay", error=short_exc(e))
            return res
        try:
            want = snapshot(torch, reference(st))
            if dev != "cpu":
                torch.cuda.synchronize()
        except Exception as e:
            res.update(verdict="fault" if is_cuda_error(e) else "error", phase="reference", error=short_exc(e))
            return res
        res["replays"] += 1
        if not dry and not same(torch, got, want):
            res["diverged"] += 1
            res["mismatched"] += mismatches(torch, got, want)
    res["verdict"] = "dry" if dry else ("stale-read" if res["diverged"] else "clean")
    return res


def run_probe(path, batches, replays, dry, compare=None):
    import torch

    dev = "cpu" if dry else "cuda"
    if dry:
        install_dry(torch)
    rule, role = header(path)
    name = probe_name(path)
    if name.startswith("fixed/"):
        role = "fixed"  # capguard fix's version of a probe: it must replay clean
    mod = load(path, "probe_" + name.replace("/", "_"))
    out = {"probe": name, "rule": rule, "role": role, "batches": [], "torch": torch.__version__}
    if not dry:
        out["device"] = torch.cuda.get_device_name()
        try:
            out["triton"] = __import__("triton").__version__
        except Exception:
            pass
    worst = "clean" if not dry else "dry"
    for i, B in enumerate(batches):
        r = run_batch(torch, mod, B, replays, dev, dry, seed=1000 * (i + 1) + B)
        out["batches"].append(r)
        if ORDER.index(r["verdict"]) < ORDER.index(worst):
            worst = r["verdict"]
        if r["verdict"] in ("fault", "capture-error", "error"):
            break  # sticky: nothing more runs in this process
    out["verdict"] = worst
    if compare:
        other = load(compare, "probe_other_" + name)
        out["compare"] = compare_eager(torch, mod, other, batches, dev)
        if out["compare"] != "equal":
            out["verdict"] = "error"
    return out


def compare_eager(torch, a, b, batches, dev):
    """Every step of a and b, eager on the same inputs, gives bitwise equal outputs; so does the
    (dry) capture path, which must run without raising."""
    for B in batches:
        ga, gb = torch.Generator().manual_seed(B), torch.Generator().manual_seed(B)
        sa, sb = a.build(B, dev), b.build(B, dev)
        for step in range(4):
            a.fill(sa, ga)
            b.fill(sb, gb)
            oa, ob = snapshot(torch, a.step(sa)), snapshot(torch, b.step(sb))
            if not same(torch, oa, ob):
                return "B=%d step %d: outputs differ (%d elements)" % (B, step, mismatches(torch, oa, ob))
        try:
            g = b.capture(sb)
            b.fill(sb, gb)
            rb = getattr(b, "replay", None)
            if rb is not None:
                rb(sb, g)
            getattr(b, "reference", b.step)(sb)
        except Exception as e:
            return "B=%d: the other version's capture or replay path raised %s" % (B, short_exc(e))
    return "equal"


# ---------------------------------------------------------------- all probes


def probe_files(d):
    """The probes of d, then the fixed versions in d/fixed."""
    out = sorted(os.path.join(d, f) for f in os.listdir(d) if re.match(r"cg\d{3}_.*\.py$", f))
    fixed = os.path.join(d, "fixed")
    if os.path.isdir(fixed):
        out += sorted(os.path.join(fixed, f) for f in os.listdir(fixed) if re.match(r"cg\d{3}_.*\.py$", f))
    return out


def run_all(d, jobs, batches, replays, out_path, dry, extra):
    files = probe_files(d) + extra
    procs, results, log = [], [], []
    start = time.time()
    pending = list(files)
    while pending or procs:
        while pending and len(procs) < jobs:
            f = pending.pop(0)
            cmd = [sys.executable, os.path.abspath(__file__), f, "--batches", ",".join(map(str, batches)),
                   "--replays", str(replays)] + (["--dry"] if dry else [])
            procs.append((f, time.time(), subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
        time.sleep(0.05)
        for item in list(procs):
            f, t0, p = item
            if p.poll() is None and time.time() - t0 < 180:
                continue
            if p.poll() is None:
                p.kill()
            text = p.communicate()[0] or ""
            procs.remove(item)
            last = [l for l in text.splitlines() if l.startswith("{")]
            try:
                r = json.loads(last[-1])
            except Exception:
                rule, role = header(f)
                r = {"probe": probe_name(f), "rule": rule, "role": role,
                     "verdict": "error", "error": "no result (exit %s): %s" % (p.returncode, text[-500:])}
            r["seconds"] = round(time.time() - t0, 1)
            results.append(r)
            log.append("=== %s (%.1fs)\n%s" % (os.path.basename(f), r["seconds"], text))
            print("%-40s %-6s %-9s %s" % (r["probe"], r["rule"], r["role"], r["verdict"]), flush=True)
    results.sort(key=lambda r: r["probe"])
    doc = {"measured": not dry, "batches": batches, "replays": replays, "seconds": round(time.time() - start, 1),
           "probes": results}
    if results and not dry:
        doc["device"] = next((r.get("device") for r in results if r.get("device")), None)
        doc["torch"] = next((r.get("torch") for r in results if r.get("torch")), None)
        doc["triton"] = next((r.get("triton") for r in results if r.get("triton")), None)
    if out_path:
        with open(out_path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
    return doc, "\n".join(log)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("probe", nargs="?")
    ap.add_argument("--all", metavar="DIR")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--batches", default="1,4,32")
    ap.add_argument("--replays", type=int, default=5)
    ap.add_argument("--out")
    ap.add_argument("--log")
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--compare")
    ap.add_argument("--extra", action="append", default=[], help="more probe files for --all (fixed versions)")
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    if a.all:
        doc, log = run_all(a.all, a.jobs, batches, a.replays, a.out, a.dry, a.extra)
        if a.log:
            with open(a.log, "w") as f:
                f.write(log)
        bad = [r["probe"] for r in doc["probes"] if r["verdict"] == "error"]
        return 1 if bad else 0
    if not a.probe:
        ap.error("a probe file or --all DIR")
    r = run_probe(a.probe, batches, a.replays, a.dry, a.compare)
    print(json.dumps(r, sort_keys=True), flush=True)
    # No teardown: a poisoned CUDA context must not be touched again.
    sys.stdout.flush()
    os._exit(0 if r["verdict"] != "error" else 1)


if __name__ == "__main__":
    main()
