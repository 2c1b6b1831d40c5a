"""Is a graph-compiled step's output, fed back as the next call's input, a hazard?

CG205 reported a compiled step's output kept across the next call (appended to a list read after
the loop, or held in a name read after the next call), not an output passed back as the next
call's input and nothing else (`x = step(x)`, `tok, logits = step(tok)`): decode loops feed
`next_token.view(1, -1)` back, and a fixed real bug fed its tokens back and was fixed with
`x=tokens.clone()` after an "overwritten" error. This probe's answer (every fed-back shape raised,
a clone ran clean) made CG205 report the shape (9349b68). Each case runs a torch.compile'd step
(mode="reduce-overhead", CUDA Graph Trees) for several rounds, each round's input the last round's
output, and compares every round with the same loop run eagerly. Verdicts per case: "clean"
(every round bitwise equal), "stale" (a round differs) or "raised: ..." (PyTorch's check, or any
error). Run: python3 bench/probes/compiled_feedback.py [--json OUT.json]
"""
import json
import sys
import traceback

import torch

dev = "cuda"
torch.manual_seed(0)
W = torch.randn(64, 64, device=dev) / 8


def step_same_shape(x):
    # output shape == input shape: the graph's output storage could serve as the next input
    return torch.tanh(x @ W) + 1.0


def step_tuple(x):
    # (token, logits) from a (B, 1) token: the token of shape (B, 1) goes back in, as a decode
    # step's does
    logits = torch.tanh((x * W[0]) @ W)
    tok = logits.argmax(-1, keepdim=True).to(x.dtype) / 64.0 + x * 0.5
    return tok, logits


def run_rounds(fn, x0, n, feed, mark=False):
    outs = []
    x = x0
    for _ in range(n):
        if mark:
            # documented as marking a new iteration of the compiled step
            torch.compiler.cudagraph_mark_step_begin()
        r = fn(x)
        # record this round's value before the next call (a copy: the record itself keeps nothing)
        outs.append((r[0] if isinstance(r, tuple) else r).detach().clone())
        x = feed(r)
    return outs


CASES = {
    # x = step(x): the raw output is the next input
    "raw": (step_same_shape, lambda r: r),
    # x = step(x).view(...): a view of the output is the next input (gpt-fast's cur_token)
    "view": (step_same_shape, lambda r: r.view(r.shape)),
    # tok, logits = step(tok): the token output goes back raw (torchtune's shape)
    "tuple_token": (step_tuple, lambda r: r[0]),
    # the fix: the output cloned before it goes back
    "raw_cloned": (step_same_shape, lambda r: r.clone()),
    # x = step(x) with torch.compiler.cudagraph_mark_step_begin() before each call
    "raw_marked": (step_same_shape, lambda r: r),
}


def main():
    out = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "cases": {}}
    for name, (fn, feed) in CASES.items():
        verdicts = {}
        for B in (1, 4, 32):
            torch._dynamo.reset()
            comp = torch.compile(fn, mode="reduce-overhead", dynamic=False)
            x0 = torch.randn(B, 1 if fn is step_tuple else 64, device=dev)
            try:
                with torch.no_grad():
                    want = run_rounds(fn, x0.clone(), 6, feed)
                    got = run_rounds(comp, x0.clone(), 6, feed, mark=name.endswith("_marked"))
                torch.cuda.synchronize()
                bad = sum(1 for a, b in zip(want, got) if not torch.allclose(a, b, atol=1e-4, rtol=1e-4))
                verdicts[str(B)] = "clean" if bad == 0 else "stale %d/6" % bad
            except Exception as e:  # PyTorch's overwritten-output check, or anything else
                # where it raised, in this script: the statement that touched the overwritten output
                here = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith("compiled_feedback.py")]
                at = "line %d (%s)" % (here[-1].lineno, here[-1].line) if here else "?"
                verdicts[str(B)] = "raised at %s: %s" % (at, str(e).splitlines()[0][:100])
        out["cases"][name] = verdicts
        print("%-18s %s" % (name, verdicts), flush=True)
    if len(sys.argv) > 2 and sys.argv[1] == "--json":
        json.dump(out, open(sys.argv[2], "w"), indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
