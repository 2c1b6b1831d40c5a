"""One case of a GPU question about capture: run body eagerly on a side stream (the warm-up), capture
it on a fresh graph, replay once, and print the verdict as a JSON line; a capture error is caught
and reported, with whether the process's CUDA state stayed usable. Shared by the probes here (one
case a process: a failed capture can leave the CUDA state unusable)."""
import json

import torch


def case(name, body, show_eager=False):
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(s):
            eager = body()  # warm-up, eager
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            body()
        torch.cuda.synchronize()
        g.replay()
        torch.cuda.synchronize()
        verdict = "captured (eager result %r)" % (eager,) if show_eager else "captured"
    except Exception as exc:  # noqa: BLE001
        verdict = "capture-error: " + type(exc).__name__ + ": " + str(exc).splitlines()[0][:160]
        try:
            torch.cuda.synchronize()
        except Exception as exc2:  # noqa: BLE001
            verdict += " | sticky: " + str(exc2).splitlines()[0][:80]
    print(json.dumps({"case": name, "verdict": verdict}), flush=True)
