"""Is a resumed solve the whole solve? The fact dumps compared, with the resume's own verdict.

    python3 bench/resume_facts.py CAPGUARD N SEED TREE...

For each tree, the whole solve's fact dump (CAPGUARD_FACTS) is made once; then for N files drawn at
random (SEED), the solve is resumed after that file (CAPGUARD_RESUME_LAST: every other file built and
solved through every stratum, then the file's constraints added and every stratum run on) and its
dump compared with the whole one. The resumed solve says itself whether it may differ
(guard/flow/premise.go: a decision of its first part whose premise the added file changed, or a cap
reached after it; every reason, with how often it came up). One line per file: how many dump lines
differ, the resumed part's time, the verdict. After each tree, how many resumes each reason came up in
(REASON lines). A "same decisions" verdict with a dump that differs is a premise the watch missed: printed as
MISSED. Ends with "RESULT tree files F same-decisions S (identical I) broken B (identical J) missed M; broken
by each mix of kinds of reason (cap: a widening, a mix, the budget; premise: a seed's or a fallback's
node got a fact; setter: a setter made generic got a call)".
"""
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from random_edits import fact_dump  # noqa: E402


def dump(cg, tree, out, last=None):
    env = {"CAPGUARD_TIMING": "1"}
    if last:
        env["CAPGUARD_RESUME_LAST"] = last
    lines, stderr = fact_dump(cg, tree, out, "resume_facts", **env)
    verdict, took = "", ""
    for line in stderr.splitlines():
        if "resumed solve may differ" in line:
            verdict = "broken: " + line.split(": ", 2)[-1]
        elif "resumed solve made the whole" in line:
            verdict = "same decisions"
        elif "resumed solve after adding" in line:
            took = line.split(": ")[-1]
    return lines, verdict, took


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    cg, n, seed = os.path.abspath(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    work = tempfile.mkdtemp(prefix="resume_facts-")
    for tree in sys.argv[4:]:
        rnd = random.Random(seed)
        whole, _, _ = dump(cg, tree, os.path.join(work, "whole.txt"))
        paths = sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs if f.endswith(".py"))
        pick = rnd.sample(paths, min(n, len(paths)))
        same = same_id = broken = broken_id = missed = 0
        reasons, shapes = {}, {}
        for f in pick:
            got, verdict, took = dump(cg, tree, os.path.join(work, "resumed.txt"), f)
            diff = len(got ^ whole)
            if not verdict:
                print(f"{'not analysed':40} {f}")
                continue
            if verdict == "same decisions":
                same += 1
                same_id += diff == 0
                tag = "MISSED " if diff else ""
                missed += diff > 0
            else:
                broken += 1
                broken_id += diff == 0
                tag = ""
            print(f"{tag}differ {diff:7}  resumed {took:9} {f}: {verdict}", flush=True)
            if verdict.startswith("broken: "):
                kinds = set()
                for why in verdict[len("broken: "):].split("; "):
                    kinds.add("premise" if why.startswith("a node that ") else "setter" if "setter" in why else "cap")
                    reasons[why.rsplit(" (", 1)[0]] = reasons.get(why.rsplit(" (", 1)[0], 0) + 1
                shapes["+".join(sorted(kinds))] = shapes.get("+".join(sorted(kinds)), 0) + 1
            if tag:
                for d in sorted(got ^ whole)[:8]:
                    print("    " + ("+ " if d in got else "- ") + d[:300])
        for why, k in sorted(reasons.items(), key=lambda x: -x[1]):
            print(f"REASON {k:3} resumes: {why}")
        print(f"RESULT {tree} files {same + broken} same-decisions {same} (identical {same_id}) "
              f"broken {broken} (identical {broken_id}) missed {missed}; broken by "
              + ", ".join(f"{k} {v}" for k, v in sorted(shapes.items())), flush=True)


if __name__ == "__main__":
    main()
