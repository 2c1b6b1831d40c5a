"""How much of a solve is instances seeded from the class hierarchy, and what one abstract value for a
set of them ("this class or a subclass", a cone) could save: the measure the next step of issue 20's
"no fact budget hit" and its speed at scale are planned on (docs/design.md, "Floods of subclass
instances").

Usage: python3 bench/hierarchy_facts.py CAPGUARD TREE [NAME]

Runs `capguard check --no-cache .` in TREE with CAPGUARD_FACTS (guard/flow/factdump.go, through
random_edits.write_fact_dump) and reads the dump a line at a time (a holdout package's dump is millions of lines). It prints one line:
- facts: every `F node value strength` line;
- hierarchy instances: the facts whose value is a project instance held at hierarchy strength (2:
  a subclass instance that a declared type or a method's empty self stands for, dispatch.go's seeds);
- nodes with 2 or more such facts, and the facts saved if each of those nodes held one value for its
  set instead (an upper bound: what the cone must reach without losing a fact once expanded);
- the distinct sets among those nodes (how many cone values that would intern), and the largest set.
"""
import os
import sys
import tempfile

from random_edits import write_fact_dump


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    cg, tree = sys.argv[1], sys.argv[2]
    name = sys.argv[3] if len(sys.argv) == 4 else os.path.basename(os.path.normpath(tree))
    fd, out = tempfile.mkstemp(prefix="capguard-facts-")
    os.close(fd)
    try:
        write_fact_dump(os.path.abspath(cg), tree, out, "hierarchy_facts")
        facts = hier = 0
        cur, members = None, []
        sets = {}
        multi = saved = 0

        def close():
            nonlocal multi, saved
            if len(members) > 1:
                multi += 1
                saved += len(members) - 1
                key = tuple(sorted(members))
                sets[key] = sets.get(key, 0) + 1

        with open(out) as fh:
            for line in fh:
                if not line.startswith("F\t"):
                    continue
                _, node, value, st = line.rstrip("\n").split("\t")
                facts += 1
                if node != cur:
                    close()
                    cur, members = node, []
                if st == "2" and value.startswith("inst:"):
                    hier += 1
                    members.append(value)
        close()
    finally:
        os.remove(out)
    largest = max((len(k) for k in sets), default=0)
    pct = 100 * saved / facts if facts else 0
    print(f"{name}\tfacts {facts}\thierarchy instances {hier}\tnodes with 2+ {multi}\tsaved by one value a set {saved} ({pct:.0f}%)"
          f"\tdistinct sets {len(sets)}\tlargest set {largest}")


if __name__ == "__main__":
    main()
