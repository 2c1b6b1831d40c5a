"""Run the SGLang-style engine: capture, then decode steps, each compared
with an eager reference. python serve.py --plant none --steps 60 --out r.json

In the program, on purpose (the tracer must change none of it): every step
under torch.inference_mode(), factory calls without a tensor argument
between replays, a FlopCounterMode around some steps, a TorchFunctionMode of
its own open across replays, a thread making tensors, and (--compile) a
torch.compile'd norm in the captured forward."""

import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from sgleng import plants  # noqa: E402
from sgleng.engine import Engine, background, dispatch_state  # noqa: E402


class CountCalls(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--plant", default="none", choices=["none", "rebind", "stale", "resize", "stored", "baked", "dynamic"])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warm", type=int, default=3, help="replays per graph before the steady state")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    plants.PLANT[0] = a.plant
    t0 = time.perf_counter()
    eng = Engine(compile_norm=a.compile)
    capture_s = eng.capture()
    stop, made = threading.Event(), []
    th = threading.Thread(target=background, args=(stop, made), daemon=True)
    th.start()
    steps, flops, fmode = [], FlopCounterMode(display=False), CountCalls()
    seen = {}
    try:
        for i in range(a.steps):
            # (not with --compile: Dynamo guards on a function mode's mutable state and fails its
            # own guard, "Guard failed on the same frame it was created", untraced too)
            if i % 7 == 1 and not a.compile:
                fmode.__enter__()  # open before one step, closed after the next
            with torch.inference_mode():
                if i % 5 == 2:
                    with flops:
                        r = eng.step(i)
                else:
                    r = eng.step(i)
            if i % 7 == 2 and not a.compile:
                fmode.__exit__(None, None, None)
            if r["padded"] is not None:
                seen[r["padded"]] = seen.get(r["padded"], 0) + 1
                r["replay_index"] = seen[r["padded"]]  # 1-based, per graph
            steps.append(r)
            print("step %d bs %d diff %.3g" % (i, r["bs"], r["diff"]), flush=True)
    finally:
        stop.set()
        th.join()
    tol = 1e-3
    steady = sorted(r["replay_s"] for r in steps if r["replay_s"] is not None and r["replay_index"] > a.warm)
    res = {"plant": a.plant, "compile": a.compile, "steps": len(steps), "capture_s": capture_s,
           "capture_errors": eng.runner.errors, "graphs": sorted(eng.runner.graphs),
           "wrong_steps": sum(1 for r in steps if not r["diff"] <= tol), "tolerance": tol,
           "max_diff": max((r["diff"] for r in steps), default=0.0),
           "replay_ms_steady_median": 1e3 * steady[len(steady) // 2] if steady else None,
           "replays_steady": len(steady), "background_made": made[0] if made else 0,
           "flop_counter_flops": flops.get_total_flops(),
           "function_mode_calls": fmode.calls, "dispatch_state": dispatch_state(),
           "digests": [r["digest"] for r in steps], "step_log": steps, "total_s": time.perf_counter() - t0}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print("sgleng: plant %s steps %d wrong %d max_diff %.3g capture %.2fs steady replay %s ms errors %s state %s" % (
        a.plant, len(steps), res["wrong_steps"], res["max_diff"], capture_s, res["replay_ms_steady_median"],
        res["capture_errors"], res["dispatch_state"]))


if __name__ == "__main__":
    main(sys.argv[1:])
