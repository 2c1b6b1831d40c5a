"""GPU proof of `capguard fix` on the motivating bf16 index reader.

Runs the original reader (testdata/readers/bf16_index_reader.py) and the one
`capguard fix` produced (testdata/gpu/fix/bf16_index_reader_patched.py) on the
same inputs, eager and under torch.cuda.graph capture + replay, at batch
sizes 1, 4 and 32, and reports:

- eager: patched == original, bitwise;
- replay: for each replay new inputs are copied into the static inputs, the
  caching allocator is churned and poisoned, the graph replays, and its output
  is compared bitwise with eager on the same inputs, for both readers, and
  patched replay == original replay;
- after all batch sizes: the graphs captured first (B=1, B=4) replay again
  with new inputs, after the patched reader's buffers grew for B=32;
- replay latency of both graphs (CUDA events; the two graphs timed in
  alternating trials, the ratio patched / original the median of the
  per-trial ratios) and whether it is at most MAX_RATIO (latency parity: the
  helper returns a source that needs no copy as it is while capturing, so
  the patched graph does no more work than the original); eager latency too;
- capturing the patched reader at a batch size it was not warmed up for
  raises the helper's error.

Needs torch and triton on a CUDA GPU; no Go. Run from the repository root:

    python3 bench/gpu_fix_proof.py --json OUT.json
"""

import argparse
import importlib.util
import json
import os
import statistics
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORIGINAL = os.path.join(ROOT, "testdata", "readers", "bf16_index_reader.py")
PATCHED = os.path.join(ROOT, "testdata", "gpu", "fix", "bf16_index_reader_patched.py")

D = 128  # index head dim
PAGE = 16
T = 256  # max tokens per request
MAX_PAGES = T // PAGE
KEYS = 4096  # rows of the paged index-key cache
REPLAYS = 5
BATCHES = (1, 4, 32)
DEV = "cuda"
MAX_RATIO = 1.02  # patched replay latency over the original's, at every batch size


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_inputs(batch, gen):
    seq_lens = torch.randint(1, T + 1, (batch,), generator=gen).to(torch.int64)
    page_table = torch.randint(0, KEYS // PAGE, (batch, MAX_PAGES), generator=gen).to(torch.int64)
    q = torch.randn((batch, 1, D), generator=gen).to(torch.bfloat16)
    return q, seq_lens, page_table


def churn():
    """Free and poison allocator blocks so a stale read would see garbage."""
    junk = [torch.full((1 << 20,), -7.0, device=DEV) for _ in range(8)]
    junk_i = [torch.full((1 << 18,), 123456789, dtype=torch.int64, device=DEV) for _ in range(8)]
    del junk, junk_i
    return [torch.full((1 << 22,), 0x7FFFFFF0, dtype=torch.int32, device=DEV) for _ in range(16)]


def same(a, b):
    return a.shape == b.shape and bool(torch.equal(a, b))


def mismatches(a, b):
    return int((a != b).sum().item()) if a.shape == b.shape else -1


class Case:
    """One reader captured at one batch size, with its static inputs."""

    def __init__(self, fn, batch, k):
        self.fn, self.batch, self.k = fn, batch, k
        self.q = torch.empty((batch, 1, D), dtype=torch.bfloat16, device=DEV)
        self.seq_lens = torch.empty((batch,), dtype=torch.int64, device=DEV)
        self.page_table = torch.empty((batch, MAX_PAGES), dtype=torch.int64, device=DEV)
        self.graph = None
        self.out = None

    def load(self, inputs):
        q, sl, pt = inputs
        self.q.copy_(q)
        self.seq_lens.copy_(sl)
        self.page_table.copy_(pt)

    def eager(self):
        return self.fn(self.q, self.k, self.seq_lens, self.page_table, T)

    def capture(self):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):  # warm up: compiles the kernel, sizes the persistent buffers
                self.eager()
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = self.eager()
        torch.cuda.synchronize()

    def replay(self):
        poison = churn()
        self.graph.replay()
        got = self.out.clone()
        torch.cuda.synchronize()
        del poison
        return got


def time_ms(step, iters=200, trials=7):
    """Median over trials of the mean time of one step, CUDA events."""
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    per = []
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            step()
        end.record()
        torch.cuda.synchronize()
        per.append(start.elapsed_time(end) / iters)
    return statistics.median(per)


def time_pair(a, b, iters=2000, trials=15):
    """Replay latency of graphs a and b in alternating trials (so that clock and thermal drift hit both
    alike): the median time of each, in ms, and the median of the per-trial ratios b / a."""
    for _ in range(50):
        a()
        b()
    torch.cuda.synchronize()
    ta, tb, ratios = [], [], []
    for _ in range(trials):
        got = []
        for step in (a, b):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                step()
            end.record()
            torch.cuda.synchronize()
            got.append(start.elapsed_time(end) / iters)
        ta.append(got[0])
        tb.append(got[1])
        ratios.append(got[1] / got[0])
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()

    torch.manual_seed(0)
    original = load(ORIGINAL, "bf16_index_reader")
    patched = load(PATCHED, "bf16_index_reader_patched")
    readers = {"original": original.bf16_index_logits, "patched": patched.bf16_index_logits}

    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "triton": __import__("triton").__version__, "batches": [], "ok": True}
    gen_k = torch.Generator().manual_seed(1234)
    k = torch.randn((KEYS, D), generator=gen_k).to(torch.bfloat16).to(DEV)
    cases = {}
    for batch in BATCHES:
        row = {"batch": batch, "replays": REPLAYS}
        gen = torch.Generator().manual_seed(batch)
        first = make_inputs(batch, gen)
        for name, fn in readers.items():
            c = cases[name, batch] = Case(fn, batch, k)
            c.load(first)
            c.capture()
        # eager: patched == original on the same inputs
        eager = {name: cases[name, batch].eager().clone() for name in readers}
        row["eager_equal"] = same(eager["original"], eager["patched"])
        stale = {name: 0 for name in readers}
        cross = 0
        for _ in range(REPLAYS):
            inputs = make_inputs(batch, gen)
            got = {}
            for name in readers:
                c = cases[name, batch]
                c.load(inputs)
                got[name] = c.replay()
                want = c.eager()
                torch.cuda.synchronize()
                if not same(got[name], want):
                    stale[name] += 1
                    print(f"B={batch} {name}: replay != eager, {mismatches(got[name], want)} elements", flush=True)
            if not same(got["original"], got["patched"]):
                cross += 1
        row["replay_vs_eager_diverged"] = stale
        row["replay_patched_vs_original_diverged"] = cross
        ta, tb, ratio = time_pair(cases["original", batch].graph.replay, cases["patched", batch].graph.replay)
        row["replay_ms_original"], row["replay_ms_patched"] = ta, tb
        row["replay_ratio_patched_over_original"] = ratio
        row["latency_parity"] = ratio <= MAX_RATIO
        for name in readers:
            c = cases[name, batch]
            row[f"eager_ms_{name}"] = time_ms(c.eager, iters=50)
        row["eager_ratio_patched_over_original"] = row["eager_ms_patched"] / row["eager_ms_original"]
        results["ok"] &= row["eager_equal"] and not any(stale.values()) and cross == 0 and row["latency_parity"]
        results["batches"].append(row)
        print(json.dumps(row), flush=True)

    # The graphs captured first still replay right after the buffers grew.
    regrown = {}
    for batch in BATCHES[:-1]:
        gen = torch.Generator().manual_seed(1000 + batch)
        bad = 0
        for _ in range(REPLAYS):
            inputs = make_inputs(batch, gen)
            outs = []
            for name in readers:
                c = cases[name, batch]
                c.load(inputs)
                got = c.replay()
                want = c.eager()
                torch.cuda.synchronize()
                bad += not same(got, want)
                outs.append(got)
            bad += not same(*outs)
        regrown[str(batch)] = bad
    results["old_graphs_after_growth_diverged"] = regrown
    results["ok"] &= not any(regrown.values())
    print(json.dumps({"old_graphs_after_growth_diverged": regrown}), flush=True)

    # Capture at a batch size never warmed up: the helper must refuse to grow.
    big = max(BATCHES) * 2
    c = Case(readers["patched"], big, k)
    c.load(make_inputs(big, torch.Generator().manual_seed(7)))
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            c.eager()
        results["unwarmed_capture"] = "no error (wrong)"
        results["ok"] = False
    except RuntimeError as e:
        results["unwarmed_capture"] = str(e).splitlines()[0][:300]
    print(json.dumps({"unwarmed_capture": results["unwarmed_capture"]}), flush=True)

    print(("PASS" if results["ok"] else "FAIL") + f": {results['device']}, torch {results['torch']}, triton {results['triton']}")
    for row in results["batches"]:
        print(f"B={row['batch']:>2}  eager equal={row['eager_equal']}  replay diverged {row['replay_vs_eager_diverged']}"
              f"  replay original {row['replay_ms_original'] * 1000:.2f} us  patched {row['replay_ms_patched'] * 1000:.2f} us"
              f"  ratio {row['replay_ratio_patched_over_original']:.3f} (parity <= {MAX_RATIO}: {row['latency_parity']})"
              f"  (eager ratio {row['eager_ratio_patched_over_original']:.3f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if results["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
