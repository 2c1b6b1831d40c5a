"""file_only_eq.py OLD NEW SETDIR RESULTS: the file route of two capguard binaries, finding for finding.

For each repository under SETDIR with a folder run's JSON in RESULTS (REPO.json, the output of
`check --output-format json .` run from the repository), it takes
4 files with findings and 2 of its Python files at random (seed 7), runs `check --no-cache
--output-format json FILE` from the repository with each binary, and prints whether the two
outputs are the same bytes, then the count. Made to check guard.Options.FirstOnly (a file run
checks the named file's rules only) against the binary before it on code it was not written for.
"""
import json, subprocess, sys, os, random
base, new, setdir, resdir = sys.argv[1:5]
random.seed(7)
tot = same = 0
for repo in sorted(os.listdir(setdir)):
    j = os.path.join(resdir, repo + '.json')
    if not os.path.exists(j): continue
    d = json.load(open(j))
    withf = sorted({f['path'] for f in d['findings']})
    files = random.sample(withf, min(4, len(withf)))
    allpy = []
    for root, ds, fs in os.walk(os.path.join(setdir, repo)):
        ds[:] = [x for x in ds if not x.startswith('.')]
        allpy += [os.path.relpath(os.path.join(root, f), os.path.join(setdir, repo)) for f in fs if f.endswith('.py')]
    allpy.sort()
    files += random.sample(allpy, min(2, len(allpy)))
    for f in files:
        outs = []
        for b in (base, new):
            p = subprocess.run([b, 'check', '--no-cache', '--exit-zero', '--output-format', 'json', f], cwd=os.path.join(setdir, repo), capture_output=True, text=True)
            outs.append(p.stdout)
        tot += 1
        ok = outs[0] == outs[1]
        same += ok
        n = len(json.loads(outs[1])['findings']) if outs[1].strip() else -1
        print(f"{repo} {f}: {'same' if ok else 'DIFFERS'} ({n} findings)", flush=True)
print(f"{same}/{tot} identical")
