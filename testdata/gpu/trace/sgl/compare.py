"""Judge a GPU run of testdata/gpu/trace/sgl/run.sh (no GPU needed):
python3 compare.py RUNS_DIR CAPGUARD OUT_DIR

RUNS_DIR is the unpacked runs.tar.gz. For each variant: the planted hazard
shown against eager (wrong steps, or a capture error), the traced run of the
whole length with the same outputs (digests) as the untraced one and the
dispatch state clean at the end, the runtime finding the hazard must give,
and capguard check on the engine alone and with the variant's map (errors,
warnings, findings proved by line coverage, demoted, and whether the check
reports the hazard). Writes OUT_DIR/summary.json and OUT_DIR/report.txt."""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECT = {  # plant: (rule, kind, file, marker)
    "rebind": ("CG201", "rebound", "attention.py", "PLANT-REBIND"),
    "stale": ("CG203", "stale-tail", "runner.py", "PLANT-STALE"),
    "resize": ("CG201", "rebound", "runner.py", "PLANT-RESIZE"),
    "stored": ("CG201", "stored-under-capture", "model.py", "PLANT-STORED"),
    "baked": ("CG102", "host-value", "attention.py", "PLANT-BAKED"),
    "dynamic": ("CG104", "dynamic-shape", "model.py", "PLANT-DYNAMIC"),
}


def marker_line(fname, marker):
    with open(os.path.join(HERE, "sgleng", fname)) as f:
        for i, l in enumerate(f, 1):
            if "# " + marker in l:
                return i
    return None


def check(capguard, cmap=None):
    cmd = [capguard, "check", "--format", "json", "--no-cache", "sgleng", "serve.py"]
    if cmap:
        cmd[2:2] = ["--capture-map", cmap]
    p = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
    return json.loads(p.stdout)["findings"]


def counts(fs):
    c = {"errors": 0, "warnings": 0, "runtime": 0, "proved": 0, "branch_not_run": 0, "never_entered": 0}
    for f in fs:
        c["errors" if f["severity"] == "error" else "warnings"] += 1
        m = f["message"]
        if m.startswith("traced:"):
            c["runtime"] += 1
        elif "in the traced run" in m:
            if "ran under capture in the traced run" in m or "ran in replay prep in the traced run" in m:
                c["proved"] += 1
            elif "not executed" in m:
                c["branch_not_run"] += 1
            elif "never ran" in m:
                c["never_entered"] += 1
    return c


def main(runs, capguard, out):
    os.makedirs(out, exist_ok=True)
    report, summary = [], {"variants": {}}
    static = check(capguard)
    summary["static_alone"] = counts(static)
    report.append("capguard check alone on the engine: %s" % json.dumps(summary["static_alone"]))
    for v in ["none", "rebind", "stale", "resize", "stored", "baked", "dynamic", "compile"]:
        r = {}
        try:
            plain = json.load(open(os.path.join(runs, "plain-%s.json" % v)))
            traced = json.load(open(os.path.join(runs, "traced-%s.json" % v)))
            m = json.load(open(os.path.join(runs, "traced-%s.map.json" % v)))
        except (OSError, ValueError) as e:
            summary["variants"][v] = {"error": str(e)}
            report.append("%s: missing (%s)" % (v, e))
            continue
        r["shown"] = {"wrong_steps_untraced": plain["wrong_steps"], "capture_errors": plain["capture_errors"]}
        r["hazard_shown"] = plain["wrong_steps"] > 0 or bool(plain["capture_errors"]) or v in ("none", "compile")
        r["traced_steps"] = traced["steps"]
        r["same_outputs"] = plain["digests"] == traced["digests"]
        r["traced_wrong_steps"] = traced["wrong_steps"]
        r["dispatch_state_end"] = traced["dispatch_state"]
        r["clean_state"] = traced["dispatch_state"] == {"dispatch_stack": 0, "function_stack": 0, "python_key": False}
        r["tracer_errors"] = m["tracer_errors"]
        r["capture_s"] = [plain["capture_s"], traced["capture_s"]]
        r["steady_replay_ms"] = [plain["replay_ms_steady_median"], traced["replay_ms_steady_median"]]
        r["runtime_findings"] = sorted(set("%s %s %s:%s" % (f["rule"], f["kind"], os.path.basename(f.get("path") or "?"), f.get("line"))
                                           for f in m["findings"]))
        exp = EXPECT.get(v)
        with_map = check(capguard, os.path.join(runs, "traced-%s.map.json" % v))
        r["check_with_map"] = counts(with_map)
        if exp:
            rule, kind, fname, marker = exp
            line = marker_line(fname, marker)
            hits = [f for f in m["findings"] if f["rule"] == rule and f["kind"] == kind and os.path.basename(f.get("path") or "") == fname]
            r["expected"] = "%s %s %s:%d" % (rule, kind, fname, line)
            r["found_by_trace"] = bool(hits)
            r["found_at_lines"] = sorted(set(f["line"] for f in hits))
            def at(fs):
                return [f for f in fs if f["rule"] == rule and f["path"].endswith(fname) and abs(f["line"] - line) <= 2]
            r["static_alone_reports_it"] = bool(at(static))
            r["check_with_map_reports_it"] = bool(at(with_map))
        allowed = {(exp[0], exp[1])} if exp else set()
        if v == "baked":
            allowed.add(("CG102", "host-value-arg"))
        r["unexpected_findings"] = sorted(set("%s %s %s:%s" % (f["rule"], f["kind"], os.path.basename(f.get("path") or "?"), f.get("line"))
                                              for f in m["findings"] if (f["rule"], f["kind"]) not in allowed))
        ok = not r["unexpected_findings"] and r["hazard_shown"] and r["traced_steps"] == plain["steps"] and r["clean_state"] and not r["tracer_errors"] and \
            (r["same_outputs"] or v == "resize") and (not exp or r["found_by_trace"])
        r["pass"] = ok
        summary["variants"][v] = r
        report.append("%-8s %s  shown: wrong %d/%d untraced%s; traced %d steps, same outputs %s, state %s; trace: %s; unexpected: %s; check alone %s, with map %s %s" % (
            v, "PASS" if ok else "FAIL", plain["wrong_steps"], plain["steps"],
            (", capture error" if plain["capture_errors"] else ""), traced["steps"], r["same_outputs"],
            "clean" if r["clean_state"] else r["dispatch_state_end"],
            ", ".join(r["runtime_findings"]) or "-", len(r["unexpected_findings"]), r.get("static_alone_reports_it", "-"), r.get("check_with_map_reports_it", "-"),
            json.dumps(r["check_with_map"])))
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write("\n".join(report) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main(*sys.argv[1:4])
