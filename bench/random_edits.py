"""Random code edits for the bench scripts (server_diff.py, graph_delta.py, cache_eq.py,
fact_delta.py), and what those scripts share: the copy of a tree they edit (copy_tree,
edit_run_args) and the fact dump of a run (write_fact_dump, fact_dump).

make_edit(lines, rnd) picks, in an order drawn from rnd, one of three kinds and a place for it:
"bind" adds `_cg_probe = <first parameter>` as the first statement of a def's body, "delete"
replaces a one-line call statement with `pass`, "dup" doubles one. It returns (kind, 1-based line,
new lines), or None where the file has no place for any.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

DEF = re.compile(r"^(\s*)def \w+\((\s*\w+)")
CALLSTMT = re.compile(r"^(\s+)[\w.]+\(.*\)\s*$")


def make_edit(lines, rnd):
    kinds = ["bind", "delete", "dup"]
    rnd.shuffle(kinds)
    for kind in kinds:
        idx = list(range(len(lines)))
        rnd.shuffle(idx)
        for i in idx:
            if kind == "bind":
                m = DEF.match(lines[i])
                if m and lines[i].rstrip().endswith(":") and i + 1 < len(lines):
                    nxt = lines[i + 1]
                    ind = nxt[: len(nxt) - len(nxt.lstrip())]
                    if len(ind) <= len(m.group(1)) or nxt.lstrip().startswith(('"""', "'''")):
                        continue
                    p = m.group(2).strip()
                    return kind, i + 1, lines[: i + 1] + [f"{ind}_cg_probe = {p}"] + lines[i + 1:]
            elif CALLSTMT.match(lines[i]) and not lines[i].rstrip().endswith(("(", ",", "\\")):
                ind = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
                if i + 1 < len(lines) and len(lines[i + 1]) - len(lines[i + 1].lstrip()) > len(ind) and lines[i + 1].strip():
                    continue
                if kind == "delete":
                    return kind, i + 1, lines[:i] + [ind + "pass"] + lines[i + 1:]
                return kind, i + 1, lines[: i + 1] + [lines[i]] + lines[i + 1:]
    return None


def copy_tree(src, prefix):
    """A copy of tree src (without its results cache or .git) in a new temporary folder named with
    prefix: (the folder, the copy, the copy's .py files relative to it, sorted)."""
    work = tempfile.mkdtemp(prefix=prefix)
    tree = os.path.join(work, os.path.basename(os.path.normpath(src)))
    shutil.copytree(src, tree, ignore=shutil.ignore_patterns(".capguard_cache", ".git"))
    files = sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs if f.endswith(".py"))
    return work, tree, files


def edit_run_args(doc, prefix):
    """The arguments `CAPGUARD TREE N SEED` of an edit script whose usage is doc, and a copy of TREE
    (copy_tree): (capguard, TREE as given, N, a random.Random(SEED), the folder, the copy, its files)."""
    if len(sys.argv) != 5:
        sys.exit(doc)
    cg, src, n, seed = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    return (cg, src, n, random.Random(seed)) + copy_tree(src, prefix)


def write_fact_dump(cg, tree, out, who, **env):
    """Writes the fact dump (CAPGUARD_FACTS) of `check --no-cache .` in tree to out and returns the
    run's standard error; env adds to the environment. who names the script in an error."""
    e = dict(os.environ, CAPGUARD_FACTS=out, **env)
    p = subprocess.run([cg, "check", "--no-cache", "--no-progress", "--format", "json", "."], cwd=tree,
                       capture_output=True, text=True, env=e)
    if p.returncode not in (0, 1):
        sys.exit(f"{who}: check in {tree}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.stderr


def fact_dump(cg, tree, out, who, **env):
    """The fact dump of `check --no-cache .` in tree (write_fact_dump) as a set of lines, and the
    run's standard error."""
    err = write_fact_dump(cg, tree, out, who, **env)
    with open(out) as fh:
        return set(fh.read().splitlines()), err
