"""List every fix a stress run (bench/fixreview/stress.sh) applied, one per
line: run, repository, path:line, rule, applicability, and the context of its
finding (from `capguard check --format json` on the untouched copy, with the
run's configuration).

    python3 bench/fixreview/list_fixes.py CAPGUARD OUT[=CONFIG] ...

prints a TSV on stdout: run repo path line rule applicability context.
"""
import json
import os
import re
import subprocess
import sys

FIX = re.compile(r"^    (\d+):(\d+) (CG\d+) \((safe|unsafe)\): ")
FILE = re.compile(r"^(\S.*\.pyi?): CG")


def contexts(binary, out, repo, config):
    cmd = [binary, "check", "--format", "json", "--no-progress", "--unsafe-fixes"]
    if config:
        cmd += ["--config", config]
    targets = {}
    for line in open("/work/measure/targets.txt"):
        parts = line.split()
        if len(parts) == 3:
            targets[parts[1]] = parts[2]
    where = "." if os.path.basename(out.rstrip("/")).endswith("root") else targets.get(repo, ".")
    res = subprocess.run(cmd + [where], cwd=os.path.join(out, "orig", repo), capture_output=True, text=True)
    ctx = {}
    try:
        for f in json.loads(res.stdout)["findings"]:
            ctx[(f["path"], f["line"], f["rule"])] = f["context"]
    except (ValueError, KeyError):
        pass
    return ctx


def main():
    binary = sys.argv[1]
    print("run\trepo\tpath\tline\trule\tapplicability\tcontext")
    for arg in sys.argv[2:]:
        out, _, config = arg.partition("=")
        run = os.path.basename(out.rstrip("/"))
        for name in sorted(os.listdir(out)):
            if not name.endswith(".fixes"):
                continue
            repo = name[: -len(".fixes")]
            rows, path = [], None
            for line in open(os.path.join(out, name), errors="replace"):
                m = FILE.match(line)
                if m:
                    path = m.group(1)
                    continue
                m = FIX.match(line)
                if m and path:
                    rows.append((path, int(m.group(1)), m.group(3), m.group(4)))
            if not rows:
                continue
            ctx = contexts(binary, out, repo, config)
            for path, line, rule, app in rows:
                print(f"{run}\t{repo}\t{path}\t{line}\t{rule}\t{app}\t{ctx.get((path, line, rule), '?')}")


if __name__ == "__main__":
    main()
