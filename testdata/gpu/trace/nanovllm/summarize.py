"""Summarize the nano-vllm runs of run.sh in counts only (the maps and logs
name the corpus's functions and are never committed).

python3 summarize.py RUNS CAPGUARD ENGINE
  RUNS     the folder nv.tar.gz was unpacked into (nv-plain.json, nv-traced.json, nv-traced.map.json)
  CAPGUARD the capguard binary
  ENGINE   a checkout of nano-vllm (the folder holding the nanovllm package)
Prints JSON: tokens with and without the tracer, the graphs, the functions the
map puts under capture against those `capguard graph` marks captured, and
`capguard check` alone, with the map and with --coverage-required (errors and
warnings; proved, demoted, unchanged)."""

import collections
import json
import os
import subprocess
import sys


def check(capguard, engine, args):
    out = subprocess.run([capguard, "check", "--no-cache", "--format", "json"] + args + ["nanovllm"], cwd=engine,
                         capture_output=True, text=True).stdout
    c = collections.Counter()
    for f in json.loads(out)["findings"]:
        m = f["message"]
        if m.startswith("traced:"):
            kind = "runtime"
        elif "not executed" in m or "never ran" in m:
            kind = "demoted"
        elif "torch.compile'd code" in m:
            kind = "compiled, unchanged"
        elif "in the traced run" in m:
            kind = "proved"
        else:
            kind = "static"
        c["%s %s" % (f["severity"], kind)] += 1
    return dict(c)


def main(runs, capguard, engine):
    a = json.load(open(os.path.join(runs, "nv-plain.json")))
    b = json.load(open(os.path.join(runs, "nv-traced.json")))
    m = json.load(open(os.path.join(runs, "nv-traced.map.json")))
    mp = os.path.join(runs, "nv-traced.map.json")
    cwd = m["cwd"]
    traced, compiled, shim = set(), set(), set()
    for g in m["graphs"]:
        for f in g["functions"]:
            rel = os.path.relpath(f["path"], cwd)
            if not rel.startswith("nanovllm" + os.sep):
                shim.add((rel, f["qual"]))
                continue
            name = rel[:-3].replace(os.sep, ".") + "." + f["qual"]
            traced.add(name)
            if f.get("compiled"):
                compiled.add(name)
    gj = json.loads(subprocess.run([capguard, "graph", "--format", "json", "nanovllm"], cwd=engine,
                                   capture_output=True, text=True).stdout)
    static = set(f["name"] for f in gj["functions"] if f["context"] == "captured")
    lines = sum(b_ - a_ + 1 for g in m["graphs"][:1] for p, rs in g["lines"].items()
                if os.path.relpath(p, cwd).startswith("nanovllm") for a_, b_ in rs)
    res = {
        "tokens_untraced": sum(len(t) for t in a["timed_tokens"]),
        "tokens_traced": sum(len(t) for t in b["timed_tokens"]),
        "tokens_identical": a["timed_tokens"] == b["timed_tokens"] and a["warm_tokens"] == b["warm_tokens"],
        "graphs_untraced": a["graphs"], "graphs_traced": b["graphs"],
        "graph_status": collections.Counter(g["status"] for g in m["graphs"]),
        "tracer_errors": m["tracer_error_count"], "runtime_findings": len(m["findings"]),
        "compiled_calls": m["tool"].get("compiled_calls"), "compiled_calls_hidden": m["tool"].get("compiled_calls_hidden"),
        "map_captured_functions": len(traced), "of_them_compiled": len(compiled),
        "stand_in_functions_under_capture": len(shim),
        "graph_captured_functions": len(static), "both": len(traced & static),
        "map_only": len(traced - static), "graph_only": len(static - traced),
        "engine_lines_executed_under_capture_graph0": lines,
        "check_alone": check(capguard, engine, []),
        "check_with_map": check(capguard, engine, ["--capture-map", mp]),
        "check_coverage_required": check(capguard, engine, ["--capture-map", mp, "--coverage-required"]),
    }
    print(json.dumps(res, indent=1, sort_keys=True))


if __name__ == "__main__":
    main(*sys.argv[1:4])
