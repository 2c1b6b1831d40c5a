package guard

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestTreeCacheReuse: runs sharing a TreeCache parse only the files whose
// bytes changed, and report what a run without it reports, after an edit
// that adds a call edge and after one that removes the capture.
func TestTreeCacheReuse(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"eng/__init__.py": "",
		"eng/runner.py":   "import torch\n\nfrom eng.steps import step\n\n\ndef capture(x):\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n        step(x)\n    return g\n",
		"eng/steps.py":    "def sync(x):\n    return x.item()\n\n\ndef other(x):\n    return x.tolist()\n\n\ndef step(x):\n    y = x * 2\n    return y + sync(y)\n",
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps, runner := filepath.Join(dir, "eng", "steps.py"), filepath.Join(dir, "eng", "runner.py")
	trees := NewTreeCache()
	overlay := map[string][]byte{}
	check := func(name string, wantReused, wantFindings int) {
		t.Helper()
		opts := Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &Config{}, Overlay: overlay}
		// The solves compare fact by fact too (the fact dump, flow's
		// factdump.go): a reused tree keeps nothing of the run before
		// (syntax.Node.Aux is cleared).
		wantFacts, gotFacts := filepath.Join(t.TempDir(), "want.txt"), filepath.Join(t.TempDir(), "got.txt")
		t.Setenv("CAPGUARD_FACTS", wantFacts)
		want, err := Run(opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Trees = trees
		t.Setenv("CAPGUARD_FACTS", gotFacts)
		got, err := Run(opts)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := readFacts(t, wantFacts), readFacts(t, gotFacts); a != b || !strings.Contains(a, "F\t") {
			t.Errorf("%s: the solve's facts differ with the tree cache (or there are none):\n%s\n--\n%s", name, a, b)
		}
		if trees.Reused != wantReused {
			t.Errorf("%s: %d trees reused, want %d", name, trees.Reused, wantReused)
		}
		if len(want.Diagnostics) != wantFindings {
			t.Fatalf("%s: %d findings, want %d: the edit no longer tests what it names", name, len(want.Diagnostics), wantFindings)
		}
		if len(got.Diagnostics) != len(want.Diagnostics) {
			t.Fatalf("%s: %d findings, %d without the tree cache", name, len(got.Diagnostics), len(want.Diagnostics))
		}
		for i := range want.Diagnostics {
			if !reflect.DeepEqual(got.Diagnostics[i], want.Diagnostics[i]) {
				t.Errorf("%s: finding %d differs:\n%+v\n%+v", name, i, got.Diagnostics[i], want.Diagnostics[i])
			}
		}
	}
	check("first run", 0, 1)
	check("unchanged", 3, 1)
	check("unchanged again", 3, 1)
	overlay[steps] = []byte(strings.Replace(files["eng/steps.py"], "return y + sync(y)", "return y + sync(y) + other(y)", 1))
	check("a call edge added", 2, 2)
	overlay[runner] = []byte(strings.Replace(files["eng/runner.py"], "    with torch.cuda.graph(g):\n        step(x)", "    step(x)", 1))
	check("the capture removed", 2, 0)
	check("unchanged after the edits", 3, 0)
}

// readFacts is the fact dump at path.
func readFacts(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
