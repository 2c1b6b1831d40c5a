"""The random part of the review's sample: 12 of a stress run's FlagGems
fixes (random.seed(18)), then 4 more not among them (random.seed(19), the
first 4 new of a draw of 8).

    python3 bench/fixreview/sample.py /tmp/fs-strict/FlagGems.fixes
"""
import random
import re
import sys


def rows(path):
    out, file = [], None
    for line in open(path, errors="replace"):
        m = re.match(r"^(\S.*\.py): CG", line)
        if m:
            file = m.group(1)
            continue
        m = re.match(r"^    (\d+):(\d+) (CG\d+) \((safe|unsafe)\)", line)
        if m and file:
            out.append((file, int(m.group(1)), m.group(3), m.group(4)))
    return out


def main():
    all_rows = rows(sys.argv[1])
    random.seed(18)
    first = random.sample(all_rows, 12)
    random.seed(19)
    extra = [r for r in random.sample(all_rows, 8) if r not in set(first)][:4]
    for r in sorted(first) + sorted(extra):
        print(*r)


if __name__ == "__main__":
    main()
