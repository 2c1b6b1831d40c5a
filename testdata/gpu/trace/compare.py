"""Checks one run of the mini engine (run by run.sh on the GPU machine).

python3 compare.py VARIANT DIR > VARIANT.check.json

DIR holds what run.sh wrote for the run: VARIANT.rc, VARIANT.timing.json,
VARIANT.runlog.json and, for a traced variant, VARIANT.map.json and
VARIANT.merged.json (capguard check --capture-map), plus static.json
(capguard check alone) and plain.timing.json. Every check is true or false,
never missing or null; "passed" is all of them. A file that is missing or
unreadable makes its checks false (and is named in "errors"), never a crash.

Checks (EXPECT says which apply to each variant):
- exit_ok: the engine (under capguard trace) exited 0;
- map_lists: every list field of the map is a list (a map without findings
  once said "findings": null);
- tracer_errors_none: the tracer hit no internal error;
- map_equals_record: the map's functions under capture in engine files
  (minieng/runlog.py left out: it is the record itself) equal the engine's
  own record (runlog.here());
- runtime_as_expected: the map has graphs, and the planted hazard is a
  runtime finding with the rule, kind, line and allocation site of its marker
  comments (# PLANT-..., # ALLOC-..., # DROP-...); a variant without a plant
  has no runtime finding;
- (not a pass/fail check) static_alone_misses: capguard check alone
  reports none of the variant's lines; call graph v2 reaches the engine's
  replay-prep statically, so the rebind line is found without a map too;
- check_with_map_finds: capguard check --capture-map reports every static
  expectation as a static finding and every runtime expectation (traced);
- replays_unhooked: every captured graph was seen for exactly its first
  N = prep_replays replays (the tracer then put the original replay back);
- replay_steady_ok (clean and nostacks, same workload as plain): the median
  replay after each graph's first N is within 25% + 0.05 ms of plain's.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The engine sources whose marker comments give the expected lines
# (CAPGUARD_ENGINE_SRC: another checkout's, to check an older run).
ENGINE = os.environ.get("CAPGUARD_ENGINE_SRC") or os.path.join(HERE, "engine")
MARKERS = ("PLANT-REBIND", "PLANT-FREED-ALLOC", "PLANT-SYNC", "PLANT-BAKED", "PLANT-BAKED-PRE", "ALLOC-BLOCK-TABLE",
           "DROP-META", "BAKED-ARG")
MAP_LISTS = ("command", "hooked", "graphs", "findings", "tracer_errors")
GRAPH_LISTS = ("functions", "inputs", "replay_prep", "between")

# static: (rule, marker) that capguard check finds once the map supplies the
# context (the model is picked from a registry, so check alone never sees it);
# runtime: the planted hazard as the tracer must report it.
_STATIC_TRITON = [("CG101", "PLANT-SYNC"), ("CG102", "BAKED-ARG"), ("CG201", "PLANT-REBIND")]
EXPECT = {
    "clean": {"static": _STATIC_TRITON, "runtime": [], "steady": True},
    "nostacks": {"static": _STATIC_TRITON, "runtime": [], "steady": True},
    "hidden": {"static": [("CG201", "PLANT-REBIND")], "runtime": []},  # torch attention: no Triton backend traced
    "rebind": {"static": [("CG201", "PLANT-REBIND")],
               "runtime": [{"rule": "CG201", "kind": "rebound", "at": "PLANT-REBIND", "alloc": "ALLOC-BLOCK-TABLE"}]},
    "freed": {"static": [], "runtime": [{"rule": "CG301", "kind": "freed", "at": "DROP-META", "alloc": "PLANT-FREED-ALLOC"}]},
    "sync": {"static": [("CG101", "PLANT-SYNC")], "runtime": [{"rule": "CG101", "at": "PLANT-SYNC"}], "replays": False},
    "baked": {"static": [("CG102", "BAKED-ARG")], "runtime": [{"rule": "CG102", "kind": "host-value", "at": "PLANT-BAKED"}]},
    # read before the capture region, passed to the kernel as a Python int:
    # linked by value for the graphs after the first (see the README)
    "baked-pre": {"static": [], "runtime": [{"rule": "CG102", "kind": "host-value-arg", "at": "PLANT-BAKED-PRE",
                                             "argument": "max_len"}]},
}


def markers():
    out = {}
    for root, _, files in os.walk(ENGINE):
        for f in sorted(files):
            if f.endswith(".py"):
                p = os.path.join(root, f)
                for i, line in enumerate(open(p), 1):
                    for tag in MARKERS:
                        if line.rstrip().endswith("# " + tag) or ("# " + tag + ":") in line:
                            out[tag] = (os.path.relpath(p, ENGINE).replace(os.sep, "/"), i)
    return out


def rel(p, base):
    """p relative to the traced run's engine folder (the map's cwd), or None outside it."""
    if not p or p.startswith("<"):
        return None
    for b in (base, ENGINE):
        if not b:
            continue
        r = os.path.relpath(os.path.normpath(p), os.path.normpath(b))
        if not r.startswith(".."):
            return r.replace(os.sep, "/")
    return None


def load(path, errors):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception as e:
        errors.append("%s: %s: %s" % (os.path.basename(path), type(e).__name__, e))
        return None


def as_list(x):
    return x if isinstance(x, list) else []


def main(variant, d):
    errors = []
    res = {"variant": variant, "checks": {}, "errors": errors}
    checks = res["checks"]
    exp = EXPECT.get(variant, {"static": [], "runtime": []})
    mk = markers()
    rc = load(os.path.join(d, variant + ".rc"), errors)
    res["rc"] = rc if isinstance(rc, int) else -1
    checks["exit_ok"] = rc == 0
    m = load(os.path.join(d, variant + ".map.json"), errors) or {}
    rec = load(os.path.join(d, variant + ".runlog.json"), errors)
    base = m.get("cwd") or ENGINE
    graphs = [g for g in as_list(m.get("graphs")) if isinstance(g, dict)]
    findings = [f for f in as_list(m.get("findings")) if isinstance(f, dict)]

    checks["map_lists"] = bool(m) and all(isinstance(m.get(k), list) for k in MAP_LISTS) and all(
        isinstance(g.get(k), list) for g in graphs for k in GRAPH_LISTS)
    res["tracer_error_count"] = int(m.get("tracer_error_count") or 0)
    res["tracer_errors"] = as_list(m.get("tracer_errors"))
    checks["tracer_errors_none"] = bool(m) and res["tracer_error_count"] == 0

    # map vs the engine's own record
    traced = set()
    for g in graphs:
        for f in as_list(g.get("functions")):
            r = rel(f.get("path"), base)
            if r and r != "minieng/runlog.py":
                traced.add((r, f.get("qual"), f.get("first_line")))
    record = set((rel(x.get("path"), base), x.get("qual"), x.get("first_line")) for x in as_list(rec) if isinstance(x, dict))
    res["functions_traced"] = sorted("%s:%s" % (a, b) for a, b, _ in traced)
    res["only_in_map"] = sorted("%s:%s" % (a, b) for a, b, _ in traced - record)
    res["only_in_record"] = sorted("%s:%s" % (a, b) for a, b, _ in record - traced)
    # Functions outside the engine (a lazy import under capture once put 62
    # of sympy's and typing_extensions' there): reported, not a check.
    outside = sorted(set(f.get("path") for g in graphs for f in as_list(g.get("functions")) if not rel(f.get("path"), base)))
    res["functions_outside_engine"] = {"count": sum(1 for g in graphs for f in as_list(g.get("functions")) if not rel(f.get("path"), base)),
                                       "files": outside[:10]}
    checks["map_equals_record"] = bool(record) and traced == record

    res["graphs"] = [{k: g.get(k) for k in ("id", "api", "status", "error", "replays", "replays_checked", "capture_ms",
                                            "analysis_ms", "external_inputs", "private_inputs", "ops", "launches", "pool_test")}
                     for g in graphs]
    res["graph_sites"] = sorted(set("%s:%s" % (rel(g["site"].get("path"), base), g["site"].get("line"))
                                    for g in graphs if isinstance(g.get("site"), dict)))
    res["replay_prep"] = sorted(set("%s:%s" % (rel(p.get("path"), base), p.get("qual"))
                                    for g in graphs for p in as_list(g.get("replay_prep"))))
    fl = []
    for f in findings:
        fl.append({"rule": f.get("rule"), "kind": f.get("kind"), "graph": f.get("graph"), "line": f.get("line"),
                   "path": rel(f.get("path"), base), "qual": f.get("qual"), "message": f.get("message"),
                   "values": as_list(f.get("values"))[:4], "kernel": f.get("kernel") or "", "argument": f.get("argument") or "",
                   "alloc": ["%s:%s" % (rel(a.get("path"), base), a.get("line")) for a in as_list(f.get("alloc")) if rel(a.get("path"), base)],
                   "dropped": ["%s:%s" % (rel(a.get("path"), base), a.get("line")) for a in as_list(f.get("dropped")) if rel(a.get("path"), base)]})
    res["findings"] = fl

    # the planted hazard as a runtime finding
    want_runtime = []
    ok = True
    for e in exp["runtime"]:
        if e["at"] not in mk:
            errors.append("no marker %s in %s" % (e["at"], ENGINE))
            ok = False
            continue
        p, line = mk[e["at"]]
        hits = [f for f in fl if f["rule"] == e["rule"] and f["path"] == p and f["line"] == line
                and (not e.get("kind") or f["kind"] == e["kind"]) and (not e.get("argument") or f["argument"] == e["argument"])]
        if e.get("alloc") and e["alloc"] in mk:
            a = "%s:%d" % mk[e["alloc"]]
            hits = [f for f in hits if a in f["alloc"]]
        want_runtime.append({"rule": e["rule"], "at": "%s:%d" % (p, line), "found": len(hits)})
        ok = ok and bool(hits)
    if not exp["runtime"]:
        ok = not fl
    res["expected_runtime"] = want_runtime
    checks["runtime_as_expected"] = bool(graphs) and ok  # no graph: nothing was traced

    # static alone against static + map
    static = load(os.path.join(d, "static.json"), errors)
    merged = load(os.path.join(d, variant + ".merged.json"), errors)

    def at(doc, path, line, rule=None, traced=None):
        out = []
        for f in as_list((doc or {}).get("findings")):
            if os.path.normpath(f.get("path", "")).replace(os.sep, "/").endswith(path) and f.get("line") == line \
                    and (rule is None or f.get("rule") == rule):
                t = str(f.get("message", "")).startswith("traced:")
                if traced is None or t == traced:
                    out.append("%s:%s %s%s (%s)" % (path, line, f.get("rule"), " traced" if t else "", f.get("context")))
        return out

    lines = [(r, mk[k]) for r, k in exp["static"] if k in mk] + [(e["rule"], mk[e["at"]]) for e in exp["runtime"] if e["at"] in mk]
    alone = sorted(set(x for _, (p, l) in lines for x in at(static, p, l)))
    withmap = [{"rule": r, "at": "%s:%d" % mk[k], "static": at(merged, mk[k][0], mk[k][1], r, False)} for r, k in exp["static"] if k in mk]
    withmap += [{"rule": e["rule"], "at": "%s:%d" % mk[e["at"]], "traced": at(merged, mk[e["at"]][0], mk[e["at"]][1], e["rule"], True)}
                for e in exp["runtime"] if e["at"] in mk]
    res["static_alone"] = {"findings": len(as_list((static or {}).get("findings"))), "at_expected_lines": alone}
    res["static_with_map"] = {"findings": len(as_list((merged or {}).get("findings"))), "expected": withmap}
    res["static_alone_misses"] = static is not None and bool(lines) and not alone
    checks["check_with_map_finds"] = merged is not None and bool(lines) and all(w.get("static") or w.get("traced") for w in withmap)

    # the replay hook: on for each graph's first N replays, then gone
    n = (m.get("tool") or {}).get("prep_replays")
    timing = load(os.path.join(d, variant + ".timing.json"), errors) or {}
    captured = [g for g in graphs if g.get("status") == "captured"]
    if exp.get("replays", True):
        checks["replays_unhooked"] = isinstance(n, int) and bool(captured) and all(
            g.get("replays") == n and g.get("replays_checked") == n for g in captured) and timing.get("replays_steady", 0) > 0
    # replay overhead after warm-up (each graph's first N replays), against plain
    plain = load(os.path.join(d, "plain.timing.json"), errors) or {}
    ov = {"warm_replays": timing.get("warm_replays"), "steady_replays": timing.get("replays_steady"),
          "traced_steady_median_ms": timing.get("replay_ms_steady_median"), "plain_steady_median_ms": plain.get("replay_ms_steady_median"),
          "traced_steady_mean_ms": timing.get("replay_ms_steady_mean"), "plain_steady_mean_ms": plain.get("replay_ms_steady_mean"),
          "traced_first_mean_ms": timing.get("replay_ms_first_mean"), "plain_first_mean_ms": plain.get("replay_ms_first_mean"),
          "same_workload_as_plain": bool(exp.get("steady"))}
    t, p = ov["traced_steady_median_ms"], ov["plain_steady_median_ms"]
    if isinstance(t, (int, float)) and isinstance(p, (int, float)) and p > 0:
        ov["overhead_ms"] = round(t - p, 4)
        ov["ratio"] = round(t / p, 3)
    res["replay_overhead_after_warmup"] = ov
    if exp.get("steady"):
        checks["replay_steady_ok"] = "ratio" in ov and t <= 1.25 * p + 0.05
    res["passed"] = all(checks.values())
    return res


def main_plain(d):
    """plain: no tracer; the reference timing."""
    errors = []
    rc = load(os.path.join(d, "plain.rc"), errors)
    t = load(os.path.join(d, "plain.timing.json"), errors) or {}
    checks = {"exit_ok": rc == 0, "replays_timed": t.get("replays_steady", 0) > 0 and not t.get("capture_errors")}
    return {"variant": "plain", "checks": checks, "errors": errors, "passed": all(checks.values()),
            "rc": rc if isinstance(rc, int) else -1}


if __name__ == "__main__":
    v, d = sys.argv[1], sys.argv[2]
    try:
        out = main_plain(d) if v == "plain" else main(v, d)
    except Exception as e:  # never leave the summary without a verdict
        import traceback

        out = {"variant": v, "checks": {"compare_ran": False}, "passed": False,
               "errors": ["compare.py: %s: %s" % (type(e).__name__, e), traceback.format_exc()[-2000:]]}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
