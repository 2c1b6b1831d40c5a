"""How much of the solve does one code edit change? The fact dump before and after, compared.

    python3 bench/fact_delta.py CAPGUARD TREE N SEED

On a copy of TREE, the solved state is dumped (CAPGUARD_FACTS: guard/flow/factdump.go, every fact,
call edge, dropped call, assumption, mixed node and widened container under keys that name code),
then N random code edits (bench/random_edits.py: a statement binding a parameter added, a call
statement deleted or doubled), each alone on the original tree, are dumped and compared with the
original. For each edit it prints the lines that differ (added + removed), split by where the fact
lives: in the edited module, or elsewhere; and among those elsewhere, the ones whose value names the
edited module (a value made there, whose key an edit in its function may move) and the ones that do
not (a fact that came or went through propagation alone). Facts are split by strength too: a fact at
name strength (1: a guess by method name, or through a mix) or at hierarchy strength (2: a seed from a
class family) comes from the solve's steps that act on what is empty, which an edit's delete and
re-derive would have to undo. After each edit is undone the dump must be the original's again
(determinism); a difference there is printed as NONDETERMINISTIC.

Ends with "RESULT tree edits E facts F changed-elsewhere median M p90 P max X; decisions-elsewhere
edits D" where decisions are facts at strength 1 or 2, mixed nodes and widenings outside the edited
module.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from random_edits import edit_run_args, fact_dump, make_edit  # noqa: E402


def dump(cg, tree, out):
    return fact_dump(cg, tree, out, "fact_delta")[0]


def module_of(tree, rel):
    """The dotted name capguard gives the file, run from the tree's root."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    # a tree that is a package: its own name comes first (index.ModuleName)
    d, top = tree, []
    while os.path.exists(os.path.join(d, "__init__.py")):
        top.insert(0, os.path.basename(d))
        d = os.path.dirname(d)
    return ".".join(top + parts)


def mentions(key, mod):
    return key == mod or key.startswith(mod + ".") or key.startswith(mod + "/") or key.startswith(mod + "#")


def fields(line):
    return line.split("\t")


def key_mentions(k, mod):
    """A key (a node, value or site) that names something of module mod."""
    for part in k.replace("@", ":").split(":"):
        if mentions(part, mod):
            return True
    return False


def main():
    cg, src, n, rnd, work, tree, files = edit_run_args(__doc__, "fact_delta-")
    base = dump(cg, tree, os.path.join(work, "base.txt"))
    nfacts = sum(1 for line in base if line.startswith("F\t"))
    print(f"# {src}: {len(base)} lines, {nfacts} facts")
    elsewhere_counts, decision_edits, edits = [], 0, 0
    for i in range(n):
        for _ in range(200):
            rel = rnd.choice(files)
            path = os.path.join(tree, rel)
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                old = fh.read()
            e = make_edit(old.split("\n"), rnd)
            if e is None:
                continue
            text = "\n".join(e[2])
            try:
                compile(text, rel, "exec")
                break
            except (SyntaxError, ValueError):
                continue
        else:
            continue
        kind, line = e[0], e[1]
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
        after = dump(cg, tree, os.path.join(work, "after.txt"))
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(old)
        again = dump(cg, tree, os.path.join(work, "again.txt"))
        if again != base:
            print(f"NONDETERMINISTIC after undoing {kind} {rel}:{line}: {len(again ^ base)} lines differ")
            for d in sorted(again ^ base)[:10]:
                print("   ", d[:300])
        edits += 1
        mod = module_of(tree, rel)
        diff = after ^ base
        here = elsewhere_named = elsewhere = decisions = 0
        by_kind = {}
        for d in diff:
            f = fields(d)
            by_kind[f[0]] = by_kind.get(f[0], 0) + 1
            if f[0] in ("F", "M", "W"):
                node = f[1]
                if key_mentions(node, mod) and f[0] != "W":
                    here += 1
                    continue
                if f[0] == "F" and key_mentions(f[2], mod):
                    elsewhere_named += 1
                    continue
                elsewhere += 1
                if f[0] in ("M", "W") or f[3] in ("1", "2"):
                    decisions += 1
            else:
                site = f[1]
                if key_mentions(site, mod):
                    here += 1
                else:
                    elsewhere += 1
        elsewhere_counts.append(elsewhere)
        if decisions:
            decision_edits += 1
        kinds = " ".join(f"{k}{v}" for k, v in sorted(by_kind.items()))
        print(f"{kind:6} {rel}:{line}  changed {len(diff)} ({kinds}): in the module {here}, "
              f"elsewhere naming it {elsewhere_named}, elsewhere {elsewhere} (decisions {decisions})", flush=True)
    elsewhere_counts.sort()
    if not elsewhere_counts:
        sys.exit("fact_delta: no edit made")
    med = elsewhere_counts[len(elsewhere_counts) // 2]
    p90 = elsewhere_counts[min(len(elsewhere_counts) - 1, int(0.9 * len(elsewhere_counts)))]
    print(f"RESULT {src} edits {edits} facts {nfacts} changed-elsewhere median {med} p90 {p90} "
          f"max {elsewhere_counts[-1]}; decisions-elsewhere edits {decision_edits}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
