"""Random code edits for the bench scripts (server_diff.py, graph_delta.py).

make_edit(lines, rnd) picks, in an order drawn from rnd, one of three kinds and a place for it:
"bind" adds `_cg_probe = <first parameter>` as the first statement of a def's body, "delete"
replaces a one-line call statement with `pass`, "dup" doubles one. It returns (kind, 1-based line,
new lines), or None where the file has no place for any.
"""
import re

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
