"""Graphs that live and replay only in the function that captures them (a test, a tuning loop).

capguard's CG102 and CG202 stay silent on such a graph where nothing rebinds (CG102) or writes
into (CG202) what the capture baked or derived from, between the capture and the replays: a
replay then runs the region's launches on the values an eager run of the region would read.
CG201 reports a name the capture read that is bound to a new tensor (or, as a loop's target, to
another element of a device tensor) between the capture and a replay: the replay reads the
tensor bound at capture.
This script measures each claim on the GPU: for each case, the graph's output after its replays
against an eager run of the region's statements at the same point, at several sizes. A case
whose claim is "stale" must diverge; one whose claim is "clean" must not.

    python3 testdata/gpu/local_graph/local_graph.py --json OUT.json
"""
import argparse
import json
import sys
import time

import torch


def case_scale_each(n, dev):
    # CG102 silent: a new graph each time round, replayed before the scalar is rebound.
    scales = [torch.tensor(float(i + 2), device=dev) for i in range(4)]
    x = torch.randn(n, device=dev)
    worst = 0.0
    for s in scales:
        scale = s.item()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = torch.mul(x, scale)
        x.copy_(torch.randn(n, device=dev))
        g.replay()
        worst = max(worst, (y - torch.mul(x, scale)).abs().max().item())
    return worst


def case_scale_rebound(n, dev):
    # CG102 reported: the scalar is rebound after the capture, then the graph replays.
    scales = [torch.tensor(float(i + 2), device=dev) for i in range(4)]
    x = torch.randn(n, device=dev)
    scale = scales[0].item()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.mul(x, scale)
    worst = 0.0
    for s in scales[1:]:
        scale = s.item()
        g.replay()
        worst = max(worst, (y - torch.mul(x, scale)).abs().max().item())
    return worst


def case_derived_settled(n, dev):
    # CG202 silent: `cu` is derived from `lens`, which the graph reads but nothing writes.
    lens = torch.randint(1, 9, (n,), device=dev)
    cu = torch.cumsum(lens, 0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = cu * 2 + lens.sum()
    worst = 0.0
    for _ in range(3):
        g.replay()
        worst = max(worst, (y - (torch.cumsum(lens, 0) * 2 + lens.sum())).abs().max().item())
    return float(worst)


def case_derived_helper(n, dev):
    # CG202 silent: the same, replayed through a helper the function only calls.
    pages = torch.randn(n, device=dev)
    cache = torch.stack((pages, pages * 2), dim=1)
    out = torch.empty(n, 2, device=dev)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.mul(cache, 3.0, out=out)

    def replay():
        out.fill_(float("nan"))
        g.replay()

    worst = 0.0
    for _ in range(3):
        replay()
        worst = max(worst, (out - torch.stack((pages, pages * 2), dim=1) * 3.0).abs().max().item())
    return float(worst)


def refill(t):
    t.add_(1)


def case_derived_refilled(n, dev):
    # CG202 reported: `lens` is handed after the capture to a function that writes into it.
    lens = torch.randint(1, 9, (n,), device=dev)
    cu = torch.cumsum(lens, 0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = cu * 2 + lens.sum()
    refill(lens)
    g.replay()
    return float((y - (torch.cumsum(lens, 0) * 2 + lens.sum())).abs().max().item())


def case_derived_graph_writes(n, dev):
    # CG202 reported: the graph itself advances `lens`, from which `cu` was derived.
    lens = torch.randint(1, 9, (n,), device=dev)
    cu = torch.cumsum(lens, 0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = cu * 2 + lens.sum()
        lens.add_(1)
    g.replay()
    g.replay()
    # An eager run of the region now: what it computes before its own add_.
    return float((y - (torch.cumsum(lens - 1, 0) * 2 + (lens - 1).sum())).abs().max().item())


def case_derived_held(n, dev):
    # CG202 silent: the graphs live in a local dict and replay from it, through a bound method
    # taken from each; nothing writes into `lens`.
    lens = torch.randint(1, 9, (n,), device=dev)
    cu = torch.cumsum(lens, 0)
    runners, outs = {}, {}
    for name in ("a", "b"):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            outs[name] = cu * 2 + lens.sum()
        runners[name] = g
    worst = 0.0
    for name in ("a", "b"):
        graph = runners[name]
        run = graph.replay
        for _ in range(3):
            run()
        worst = max(worst, (outs[name] - (torch.cumsum(lens, 0) * 2 + lens.sum())).abs().max().item())
    return float(worst)


def case_derived_held_refilled(n, dev):
    # CG202 reported: the same holder, but `lens` is written before the replays.
    lens = torch.randint(1, 9, (n,), device=dev)
    cu = torch.cumsum(lens, 0)
    graphs = []
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = cu * 2 + lens.sum()
    graphs.append(g)
    lens.add_(1)
    for i in range(len(graphs)):
        graphs[i].replay()
    return float((y - (torch.cumsum(lens, 0) * 2 + lens.sum())).abs().max().item())


def case_rebind_input(n, dev):
    # CG201 reported: the input is bound to a new tensor after the capture, then the graph replays.
    x = torch.randn(n, device=dev)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2 + 1
    worst = 0.0
    for _ in range(3):
        x = torch.randn(n, device=dev)
        g.replay()
        worst = max(worst, (y - (x * 2 + 1)).abs().max().item())
    return float(worst)


def case_copy_input(n, dev):
    # CG201 silent: the new values are copied into the tensor the capture read.
    x = torch.randn(n, device=dev)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2 + 1
    worst = 0.0
    for _ in range(3):
        x.copy_(torch.randn(n, device=dev))
        g.replay()
        worst = max(worst, (y - (x * 2 + 1)).abs().max().item())
    return float(worst)


def case_rebind_after_replay(n, dev):
    # CG201 reported: a decode loop binds the next input after each replay, as a new tensor; the
    # next round's replay reads the tensor bound at capture.
    x = torch.randn(n, device=dev)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 0.5 + 1
    worst = 0.0
    want = x * 0.5 + 1
    for _ in range(3):
        g.replay()
        worst = max(worst, (y - want).abs().max().item())
        x = y * 2.0
        want = x * 0.5 + 1
    return float(worst)


def case_loop_target(n, dev):
    # CG201 reported: a loop over a device tensor binds its target to another element, a view at
    # another address, before each replay.
    steps = torch.arange(1.0, 5.0, device=dev)
    base = torch.randn(n, device=dev)
    t = steps[0]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = base * t
    worst = 0.0
    for t in steps:
        base.add_(1.0)
        g.replay()
        worst = max(worst, (y - base * t).abs().max().item())
    return float(worst)


def case_loop_copied(n, dev):
    # CG201 silent: the loop copies each element into the tensor the capture read.
    steps = torch.arange(1.0, 5.0, device=dev)
    base = torch.randn(n, device=dev)
    cur = steps[0].clone()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = base * cur
    worst = 0.0
    for t in steps:
        cur.copy_(t)
        g.replay()
        worst = max(worst, (y - base * t).abs().max().item())
    return float(worst)


CASES = [
    ("cg102_local_scale_each", "CG102", "clean", case_scale_each),
    ("cg102_local_scale_rebound", "CG102", "stale", case_scale_rebound),
    ("cg202_local_derived_settled", "CG202", "clean", case_derived_settled),
    ("cg202_local_derived_helper", "CG202", "clean", case_derived_helper),
    ("cg202_local_derived_refilled", "CG202", "stale", case_derived_refilled),
    ("cg202_local_graph_writes", "CG202", "stale", case_derived_graph_writes),
    ("cg202_local_derived_held", "CG202", "clean", case_derived_held),
    ("cg202_local_derived_held_refilled", "CG202", "stale", case_derived_held_refilled),
    ("cg201_local_rebind_input", "CG201", "stale", case_rebind_input),
    ("cg201_local_copy_input", "CG201", "clean", case_copy_input),
    ("cg201_local_loop_target", "CG201", "stale", case_loop_target),
    ("cg201_local_loop_copied", "CG201", "clean", case_loop_copied),
    ("cg201_local_rebind_after_replay", "CG201", "stale", case_rebind_after_replay),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    dev = torch.device("cuda")
    s = torch.cuda.Stream()
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d", time.gmtime()),
           "command": "python3 testdata/gpu/local_graph/local_graph.py --json OUT.json", "cases": []}
    ok = True
    for name, rule, claim, fn in CASES:
        diffs = {}
        for n in (4, 64, 1024):
            torch.manual_seed(n)
            with torch.cuda.stream(s):
                diffs[str(n)] = fn(n, dev)
            torch.cuda.synchronize()
        diverged = any(d > 1e-5 for d in diffs.values())
        verdict = "stale" if diverged else "clean"
        agrees = verdict == claim
        ok = ok and agrees
        out["cases"].append({"case": name, "rule": rule, "claim": claim, "verdict": verdict, "agrees": agrees, "max_abs_diff": diffs})
        print("%-32s %-6s claim %-6s GPU %-6s %s %s" % (name, rule, claim, verdict, "ok" if agrees else "DISAGREES", diffs))
    json.dump(out, open(args.json, "w"), indent=1, sort_keys=True)
    open(args.json, "a").write("\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
