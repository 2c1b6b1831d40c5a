"""Start the mini engine: build it, capture its decode graphs, serve decode
steps. python serve.py --attention triton --plant none --steps 24"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from minieng import runlog  # noqa: E402
from minieng.config import EngineConfig  # noqa: E402
from minieng.engine import LLMEngine  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="tiny-llama")
    ap.add_argument("--attention", default="triton", choices=["triton", "torch"])
    ap.add_argument("--batch-sizes", default="1,2,4,8")
    ap.add_argument("--capture-via", default="with", choices=["with", "getattr"])
    ap.add_argument("--plant", default="none", choices=["none", "rebind", "freed", "sync", "baked", "baked-pre"])
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--warm", type=int, default=int(os.environ.get("CAPGUARD_TRACE_PREP_REPLAYS", "3") or 3),
                    help="replays per graph before the steady state (default: the tracer's prep-replays, 3)")
    ap.add_argument("--runlog", help="write the independent record of functions run under capture here")
    ap.add_argument("--timing", help="write capture and replay times here (JSON)")
    ap.add_argument("--device", default="cuda", help="cpu: run.sh's CPU=1 check of its own plumbing (cpushim/)")
    a = ap.parse_args(argv)
    cfg = EngineConfig(model=a.model, attention=a.attention, capture_via=a.capture_via, plant=a.plant,
                       batch_sizes=[int(x) for x in a.batch_sizes.split(",")])
    t0 = time.perf_counter()
    eng = LLMEngine(cfg, device=a.device)
    capture_s = eng.capture()
    timed = eng.serve(a.steps)  # (batch size, its replay index, seconds)
    if a.runlog:
        runlog.dump(a.runlog)
    times = [s for _, _, s in timed]
    # The steady state: every replay after each graph's first --warm (the
    # tracer checks those, then puts the original replay back).
    steady = sorted(s for _, i, s in timed if i >= a.warm)
    first = [s for _, i, s in timed if i < a.warm]

    def ms(xs, f):
        return 1e3 * f(xs) if xs else 0.0

    res = {"capture_s": capture_s, "capture_s_per_bs": eng.runner.capture_seconds,
           "capture_errors": eng.runner.errors, "replays": len(times), "warm_replays": a.warm,
           "replay_ms_mean": ms(times, lambda x: sum(x) / len(x)),
           "replay_ms_min": ms(times, min),
           "replay_ms_first_mean": ms(first, lambda x: sum(x) / len(x)),
           "replays_steady": len(steady),
           "replay_ms_steady_mean": ms(steady, lambda x: sum(x) / len(x)),
           "replay_ms_steady_median": ms(steady, lambda x: x[len(x) // 2]),
           "total_s": time.perf_counter() - t0}
    if a.timing:
        with open(a.timing, "w") as f:
            json.dump(res, f, indent=1)
    print("minieng: %s" % json.dumps(res))


if __name__ == "__main__":
    main(sys.argv[1:])
