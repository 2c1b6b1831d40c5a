#!/usr/bin/env python3
"""`check FILE` and `check --stdin-filename FILE -` against the folder run, on real code.

    python3 bench/file_diff.py CAPGUARD REPO N SEED

Copies REPO into /tmp/filediff-SEED and makes it a git work tree (so that the project a file belongs
to is the repository, as in a clone), runs `check --no-cache .` there, then for N files with findings
and N/3 files picked at random compares each file's findings (path, line, rule, message, chain) from
`check FILE` and from the file on standard input with the folder run's for that file. Prints each file
and every difference, then how many differed.
"""
import json, os, random, shutil, subprocess, sys

cg, repo, n, seed = sys.argv[1], os.path.abspath(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)
work = f"/tmp/filediff-{seed}/" + os.path.basename(repo)
shutil.rmtree(os.path.dirname(work), ignore_errors=True)
shutil.copytree(repo, work, ignore=shutil.ignore_patterns(".git", ".capguard_cache"), symlinks=True)
subprocess.run(["git", "init", "-q", work], check=True)


def findings(args, cwd, stdin=None):
    r = subprocess.run([cg, "check", "--no-cache", "--output-format", "json"] + args, cwd=cwd, capture_output=True, text=True, input=stdin)
    try:
        j = json.loads(r.stdout)
    except Exception:
        print("BAD OUTPUT", args, r.stderr[-500:])
        return set()
    return {(f["path"], f["line"], f["rule"], f["message"], tuple(f.get("chain") or ())) for f in j["findings"]}


whole = findings(["."], work)
byfile = {}
for f in whole:
    byfile.setdefault(f[0], set()).add(f)
pyfiles = sorted(os.path.relpath(os.path.join(d, f), work) for d, _, fs in os.walk(work) if "/.git" not in d for f in fs if f.endswith(".py"))
with_f = sorted(byfile)
picks = rnd.sample(with_f, min(n, len(with_f))) + rnd.sample(pyfiles, min(max(1, n // 3), len(pyfiles)))
bad = 0
for rel in picks:
    # from the repository root, and from the file's own folder with a relative path
    got = findings([rel], work)
    want = byfile.get(rel, set())
    d = os.path.dirname(rel) or "."
    with open(os.path.join(work, rel), encoding="utf-8", errors="replace") as fh:
        src = fh.read()
    got_stdin = findings(["--stdin-filename", rel, "-"], work, stdin=src)
    ok = got == want and got_stdin == want
    print(f"{rel}: folder {len(want)} file {len(got)} stdin {len(got_stdin)} {'ok' if ok else 'DIFF'}")
    if not ok:
        bad += 1
        for x in sorted(got ^ want)[:6]:
            print("   file^folder", x[:3], x[3][:120])
        for x in sorted(got_stdin ^ want)[:6]:
            print("   stdin^folder", x[:3], x[3][:120])
print(f"{os.path.basename(repo)}: {bad} of {len(picks)} differ")
