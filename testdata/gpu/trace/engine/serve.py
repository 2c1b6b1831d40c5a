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
    ap.add_argument("--plant", default="none", choices=["none", "rebind", "freed", "sync", "baked"])
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--runlog", help="write the independent record of functions run under capture here")
    ap.add_argument("--timing", help="write capture and replay times here (JSON)")
    a = ap.parse_args(argv)
    cfg = EngineConfig(model=a.model, attention=a.attention, capture_via=a.capture_via, plant=a.plant,
                       batch_sizes=[int(x) for x in a.batch_sizes.split(",")])
    t0 = time.perf_counter()
    eng = LLMEngine(cfg)
    capture_s = eng.capture()
    times = eng.serve(a.steps)
    if a.runlog:
        runlog.dump(a.runlog)
    res = {"capture_s": capture_s, "capture_s_per_bs": eng.runner.capture_seconds,
           "capture_errors": eng.runner.errors, "replays": len(times),
           "replay_ms_mean": 1e3 * sum(times) / max(1, len(times)),
           "replay_ms_min": 1e3 * min(times) if times else None, "total_s": time.perf_counter() - t0}
    if a.timing:
        with open(a.timing, "w") as f:
            json.dump(res, f, indent=1)
    print("minieng: %s" % json.dumps(res))


if __name__ == "__main__":
    main(sys.argv[1:])
