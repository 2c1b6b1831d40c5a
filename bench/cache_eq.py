"""Does a run through the results cache report what a run without it reports, after an edit?

    python3 bench/cache_eq.py CAPGUARD TREE N SEED

On a copy of TREE (a package folder), the cache is filled, then N edits are made one after the other,
each to a file drawn at random (SEED fixes the draws), and after each edit, and again after it is
undone, `check --format json .` through the cache is compared with `check --no-cache --format json .`
on the same bytes. The kinds of edit, drawn in turn:

  comment    a full-line comment inserted above a line (every line after it moves)
  blank      a blank line inserted above a line
  docstring  the text of a one-line triple-quoted string changed
  literal    an integer literal on the right of an `=` changed
  kernel     a line of a @triton.jit function's body: a comment inserted above it, or an integer
             literal in it changed
  bind, delete, dup
             code edits (bench/random_edits.py): `_cg_probe = <parameter>` added, a call statement
             replaced by `pass`, a call statement doubled

An edit that does not compile is drawn again. The runs do not wait out the cache's racy window
(the 2 s around a stored result in which a file's stat is not trusted and its bytes are hashed):
both ways of finding a change end in the same comparison of bytes. Prints one line per run
("served" or "miss", the kind, the file, why the stored result was not reused) and a MISMATCH block with a diff where the outputs differ,
then "RESULT tree runs R served S miss M mismatches X". Exit status 1 on any mismatch.
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from random_edits import edit_run_args, make_edit  # noqa: E402

INT = re.compile(r"(=\s*)(\d+)\b")
DOC = re.compile(r'^(\s*)(""")([^"\\]+)(""")\s*$')
KERNEL = re.compile(r"^\s*@(triton\.)?jit\b")


def indent(s):
    return s[: len(s) - len(s.lstrip())]


def kernel_lines(lines):
    """Indexes of lines in the bodies of @triton.jit functions."""
    out = []
    i = 0
    while i < len(lines):
        if KERNEL.match(lines[i]):
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("def "):
                j += 1
            if j >= len(lines):
                break
            base = len(indent(lines[j]))
            # the body starts after the signature, which may span lines
            depth, k = 0, j
            while k < len(lines):
                depth += lines[k].count("(") - lines[k].count(")")
                if depth <= 0 and lines[k].split("#")[0].rstrip().endswith(":"):
                    break
                k += 1
            j = k
            k = j + 1
            while k < len(lines) and (not lines[k].strip() or len(indent(lines[k])) > base):
                if lines[k].strip():
                    out.append(k)
                k += 1
            i = k
        else:
            i += 1
    return out


def edit(kind, lines, rnd, tag):
    """The edited lines for kind, or None where the file has no place for it."""
    idx = list(range(len(lines)))
    rnd.shuffle(idx)
    if kind in ("comment", "blank"):
        for i in idx:
            if lines[i].strip():
                new = f"{indent(lines[i])}# cache_eq {tag}" if kind == "comment" else ""
                return lines[:i] + [new] + lines[i:]
        return None
    if kind == "docstring":
        for i in idx:
            m = DOC.match(lines[i])
            if m:
                return lines[:i] + [f'{m.group(1)}"""{m.group(3)} ({tag})"""'] + lines[i + 1:]
        return None
    if kind == "literal":
        for i in idx:
            s = lines[i]
            if s.lstrip().startswith(("def ", "class ", "#", "@")):
                continue
            m = INT.search(s)
            if m:
                n = int(m.group(2)) + 1
                return lines[:i] + [s[: m.start(2)] + str(n) + s[m.end(2):]] + lines[i + 1:]
        return None
    if kind == "kernel":
        ks = kernel_lines(lines)
        rnd.shuffle(ks)
        for i in ks:
            s = lines[i]
            m = INT.search(s)
            if m and rnd.random() < 0.5:
                n = int(m.group(2)) + 1
                return lines[:i] + [s[: m.start(2)] + str(n) + s[m.end(2):]] + lines[i + 1:]
            return lines[:i] + [f"{indent(s)}# cache_eq {tag}"] + lines[i:]
        return None
    while True:
        e = make_edit(lines, rnd)
        if e is None:
            return None
        if e[0] == kind or rnd.random() < 0.3:
            return e[2]


def compiles(text, path):
    try:
        compile(text, path, "exec")
        return True
    except (SyntaxError, ValueError):
        return False


def run(cg, tree, cached):
    args = [cg, "check", "--format", "json", "--no-progress"] + ([] if cached else ["--no-cache"]) + ["."]
    env = dict(os.environ, CAPGUARD_TIMING="1")
    p = subprocess.run(args, cwd=tree, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        sys.exit(f"cache_eq: {' '.join(args)} in {tree}: exit {p.returncode}\n{p.stderr[-2000:]}")
    why = [line.split("not reused: ", 1)[1] for line in p.stderr.splitlines() if "not reused: " in line]
    if why:
        return p.stdout, why[0]
    return p.stdout, "cache miss" if "cache miss" in p.stderr else ""


def main():
    cg, src, n, rnd, work, tree, files = edit_run_args(__doc__, "cache_eq-")
    seed = sys.argv[4]
    kinds = ["comment", "blank", "docstring", "literal", "kernel", "bind", "delete", "dup"]
    runs = served = miss = bad = 0

    def compare(what, rel):
        nonlocal runs, served, miss, bad
        a, was_miss = run(cg, tree, True)
        b, _ = run(cg, tree, False)
        runs += 1
        if was_miss:
            miss += 1
        else:
            served += 1
        state = "miss" if was_miss else "served"
        if a == b:
            print(f"{state:6} {what:18} {rel}" + (f" ({was_miss})" if was_miss else ""), flush=True)
            return
        bad += 1
        print(f"MISMATCH {state} {what} {rel}", flush=True)
        try:
            fa, fb = json.loads(a)["findings"], json.loads(b)["findings"]
            la = [json.dumps(f, sort_keys=True) for f in fa]
            lb = [json.dumps(f, sort_keys=True) for f in fb]
        except (ValueError, KeyError):
            la, lb = a.splitlines(), b.splitlines()
        for line in list(difflib.unified_diff(lb, la, "no-cache", "cached", lineterm="", n=0))[:40]:
            print("  " + line[:400])

    run(cg, tree, True)  # fill the cache
    k = 0
    for i in range(n):
        kind = kinds[i % len(kinds)]
        for _ in range(200):
            rel = rnd.choice(files)
            path = os.path.join(tree, rel)
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                old = fh.read()
            lines = old.split("\n")
            new = edit(kind, lines, rnd, f"{seed}-{i}")
            if new is None:
                continue
            text = "\n".join(new)
            if text != old and compiles(text, rel):
                break
        else:
            print(f"skip   {kind:18} (no file has a place for it)")
            continue
        k += 1
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
        compare(kind, rel)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(old)
        compare(kind + " undone", rel)
    print(f"RESULT {src} runs {runs} served {served} miss {miss} mismatches {bad}")
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
