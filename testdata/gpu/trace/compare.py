"""Checks one traced run of the mini engine (run by run.sh on the GPU machine).

python3 compare.py VARIANT MAP RUNLOG STATIC_JSON MERGED_JSON > VARIANT.check.json

- the map's functions under capture in engine files (minieng/runlog.py left
  out: it is the record itself) must equal the engine's own record;
- the planted hazard of VARIANT must be a runtime finding with the rule, line
  and allocation site of its marker comments (# PLANT-..., # ALLOC-..., # DROP-...);
- static alone (STATIC_JSON, capguard check) against static + map
  (MERGED_JSON, capguard check --capture-map): which planted lines each finds.
"""

import json
import os
import sys

ENGINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine")

EXPECT = {
    "rebind": {"rule": "CG201", "kind": "rebound", "line": "PLANT-REBIND", "alloc": "ALLOC-BLOCK-TABLE"},
    "freed": {"rule": "CG301", "kind": "freed", "line": "DROP-META", "alloc": "PLANT-FREED-ALLOC"},
    "sync": {"rule": "CG101", "line": "PLANT-SYNC"},
    "baked": {"rule": "CG102", "kind": "host-value", "line": "PLANT-BAKED"},
}


def markers():
    out = {}
    for root, _, files in os.walk(ENGINE):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(root, f)
                for i, line in enumerate(open(p), 1):
                    for tag in ("PLANT-REBIND", "PLANT-FREED-ALLOC", "PLANT-SYNC", "PLANT-BAKED", "ALLOC-BLOCK-TABLE", "DROP-META"):
                        if "# " + tag in line:
                            out[tag] = (os.path.relpath(p, ENGINE), i)
    return out


def rel(p):
    try:
        r = os.path.relpath(os.path.realpath(p), os.path.realpath(ENGINE))
    except ValueError:
        return None
    return None if r.startswith("..") else r


def main(variant, map_path, runlog_path, static_path, merged_path):
    m = json.load(open(map_path))
    rec = json.load(open(runlog_path))
    res = {"variant": variant, "checks": {}}
    traced = set()
    for g in m["graphs"]:
        for f in g["functions"]:
            r = rel(f["path"])
            if r and r != os.path.join("minieng", "runlog.py"):
                traced.add((r, f["qual"], f["first_line"]))
    record = set((rel(x["path"]), x["qual"], x["first_line"]) for x in rec)
    res["functions_traced"] = sorted("%s:%s" % (a, b) for a, b, _ in traced)
    res["only_in_map"] = sorted("%s:%s" % (a, b) for a, b, _ in traced - record)
    res["only_in_record"] = sorted("%s:%s" % (a, b) for a, b, _ in record - traced)
    res["checks"]["map_equals_record"] = traced == record and bool(record)
    res["graphs"] = [{k: g.get(k) for k in ("id", "api", "status", "error", "replays", "capture_ms", "analysis_ms",
                                            "external_inputs", "private_inputs", "ops", "launches", "pool_test")}
                     for g in m["graphs"]]
    res["graph_sites"] = sorted(set("%s:%s" % (rel(g["site"]["path"]), g["site"]["line"]) for g in m["graphs"] if g.get("site")))
    res["replay_prep"] = sorted(set("%s:%s" % (rel(p["path"]), p["qual"]) for g in m["graphs"] for p in g["replay_prep"]))
    res["findings"] = [{k: f.get(k) for k in ("rule", "kind", "graph", "line", "qual", "message")} for f in m["findings"]]
    for f, ff in zip(res["findings"], m["findings"]):
        f["path"] = rel(ff.get("path") or "")
        f["alloc"] = ["%s:%s" % (rel(a["path"]), a["line"]) for a in ff.get("alloc") or [] if rel(a["path"])]
        f["dropped"] = ["%s:%s" % (rel(a["path"]), a["line"]) for a in ff.get("dropped") or [] if rel(a["path"])]
    res["tracer_errors"] = m.get("tracer_errors")
    mk = markers()
    exp = EXPECT.get(variant)
    if exp:
        want_path, want_line = mk[exp["line"]]
        hits = [f for f in res["findings"] if f["rule"] == exp["rule"] and f["path"] == want_path and f["line"] == want_line
                and (not exp.get("kind") or f["kind"] == exp["kind"])]
        res["checks"]["planted_finding"] = bool(hits)
        if exp.get("alloc"):
            ap, al = mk[exp["alloc"]]
            res["checks"]["planted_alloc_site"] = any(("%s:%d" % (ap, al)) in f["alloc"] for f in hits)
        res["expected"] = {"rule": exp["rule"], "at": "%s:%d" % (want_path, want_line)}

        def found(path):
            try:
                doc = json.load(open(path))
            except Exception as e:
                return {"error": str(e)}
            lines = [(os.path.normpath(d["path"]), d["line"], d["rule"], d.get("context")) for d in doc.get("findings", [])]
            at = [l for l in lines if l[0].endswith(want_path) and l[1] == want_line]
            return {"findings": len(lines), "at_planted_line": ["%s:%d %s (%s)" % l for l in at]}

        res["static_alone"] = found(static_path)
        res["static_with_map"] = found(merged_path)
        res["checks"]["static_alone_misses"] = not res["static_alone"].get("at_planted_line")
        res["checks"]["check_with_map_finds"] = bool(res["static_with_map"].get("at_planted_line"))
    res["passed"] = all(res["checks"].values())
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:6])
