package cache

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard"
)

// TestEditTakesStoredDigests: after a code edit the run takes the stored
// digests of the files whose bytes did not change (guard.Options.
// PriorDigests), and stores what a run into an empty cache stores: each
// file's hash, digest and findings, and a kernel pack with every kernel's
// text, though the taken digests carry no texts. Here an unchanged file
// gains a finding, so its digest, stored without lines, must be made
// whole: a comment edit to it is then served.
func TestEditTakesStoredDigests(t *testing.T) {
	noRacy(t)
	files := maps.Clone(kernelProject)
	host := "import torch\n\n\n# host reads\ndef read(x):\n    # one value\n    return x.item()\n\n\ndef wait():\n    torch.cuda.synchronize()\n"
	files["eng/host.py"] = host
	dir := project(t, files)
	opts := guard.Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &guard.Config{}}
	runIn := func(cacheDir string) (*guard.Result, Status) {
		t.Helper()
		res, st, err := Run(opts, Options{Dir: cacheDir, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return res, st
	}
	cached := filepath.Join(t.TempDir(), "cache")
	first, st := runIn(cached)
	if e := onlyEntry(t, cached); e.Files[1].Path != filepath.Join(dir, "eng", "host.py") || !e.Files[1].Digest.Trimmed() {
		t.Fatalf("host.py's stored digest: %+v, want one without lines", e.Files[1])
	}
	if st != Miss || len(first.Diagnostics) == 0 {
		t.Fatalf("first run: %s, %d findings (want a miss, and ops.py's)", st, len(first.Diagnostics))
	}
	settle()
	write(t, filepath.Join(dir, "eng", "runner.py"), "import torch\n\nfrom eng.host import read\nfrom eng.ops import add\n\n\ndef capture(x, y, out):\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n        add(x, y, out)\n        read(x)\n    return g\n")
	if res, st := runIn(cached); st != Miss || len(res.Diagnostics) != len(first.Diagnostics)+1 {
		t.Fatalf("after the code edit: %s, %d findings (want a miss, and host.py's finding beside the %d)", st, len(res.Diagnostics), len(first.Diagnostics))
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	runIn(fresh)
	got, want := onlyEntry(t, cached), onlyEntry(t, fresh)
	if len(got.Files) != len(want.Files) {
		t.Fatalf("%d files stored, a run into an empty cache stores %d", len(got.Files), len(want.Files))
	}
	for i, w := range want.Files {
		g := got.Files[i]
		gj, _ := json.Marshal([]any{g.Path, g.Hash, g.Digest, g.Findings})
		wj, _ := json.Marshal([]any{w.Path, w.Hash, w.Digest, w.Findings})
		if string(gj) != string(wj) {
			t.Errorf("stored after the edit:\n%s\na run into an empty cache stores:\n%s", gj, wj)
		}
	}
	gk, wk := readKernels(packOf(t, cached)), readKernels(packOf(t, fresh))
	if len(wk) == 0 || !maps.EqualFunc(gk, wk, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Errorf("kernel pack after the edit holds %d texts, a run into an empty cache %d", len(gk), len(wk))
	}
	settle()
	write(t, filepath.Join(dir, "eng", "host.py"), strings.Replace(host, "# one value", "# one value, read", 1))
	if _, st := runIn(cached); st != Reused {
		t.Errorf("a comment edit to host.py, which gained its finding in the run before: %s, want it served", st)
	}
}

// onlyEntry reads the one stored entry of a cache folder.
func onlyEntry(t *testing.T, cacheDir string) *entry {
	t.Helper()
	ps, _ := filepath.Glob(filepath.Join(cacheDir, formatVersion, "*.json"))
	if len(ps) != 1 {
		t.Fatalf("entries %v, want one", ps)
	}
	e, corrupt := readEntry(ps[0])
	if e == nil || corrupt {
		t.Fatalf("%s: not read", ps[0])
	}
	return e
}

func packOf(t *testing.T, cacheDir string) string {
	t.Helper()
	ps, _ := filepath.Glob(filepath.Join(cacheDir, formatVersion, "*.json"))
	if len(ps) != 1 {
		t.Fatalf("entries %v, want one", ps)
	}
	return packPath(ps[0])
}
