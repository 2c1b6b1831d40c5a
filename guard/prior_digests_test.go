package guard

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPriorDigests: a run given an earlier run's digests (Options.
// PriorDigests) takes them for its parsed files instead of making them,
// only when its Relevance is the earlier run's; a prior digest kept
// without its lines is made again, whole, for a file with findings; and
// the digests it returns are those a run without priors makes.
func TestPriorDigests(t *testing.T) {
	files := map[string]string{
		"eng/__init__.py": "",
		"eng/runner.py":   "import torch\n\nfrom eng.steps import step\n\n\ndef capture(x):\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n        step(x)\n    return g\n",
		"eng/steps.py":    "# the step\ndef sync(x):\n    return x.item()  # reads the host\n\n\ndef step(x):\n    y = x * 2\n\n    return y + sync(y)\n",
		"eng/plain.py":    "import torch\n\n\ndef scale(x):\n    # twice\n    torch.cuda.synchronize()\n    return x * 2\n",
	}
	dir := writeTree(t, files)
	steps, plain := filepath.Join(dir, "eng", "steps.py"), filepath.Join(dir, "eng", "plain.py")
	opts := Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &Config{}, Digests: true}
	want, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Diagnostics) != 1 || want.Diagnostics[0].Path != steps {
		t.Fatalf("findings %v: want one, in steps.py", want.Diagnostics)
	}
	if want.Digests[steps].Trimmed() || want.Digests[plain].Trimmed() || want.Digests[plain] == nil || want.Digests[steps] == nil {
		t.Fatalf("a run without priors made %d digests, trimmed: steps %v, plain %v", len(want.Digests), want.Digests[steps].Trimmed(), want.Digests[plain].Trimmed())
	}
	// Priors: plain.py's whole, steps.py's trimmed (as the results cache
	// keeps a file's digest when it had no findings).
	trimmed := &FileDigest{Sum: want.Digests[steps].Sum, Kept: want.Digests[steps].KeptLines()}
	prior := map[string]*FileDigest{plain: want.Digests[plain], steps: trimmed}
	rel := want.Relevance
	opts.PriorDigests, opts.PriorRelevance = prior, &rel
	got, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digests[plain] != prior[plain] {
		t.Errorf("plain.py's digest was made again, not taken from the priors")
	}
	if got.Digests[steps] == trimmed || got.Digests[steps].Trimmed() {
		t.Errorf("steps.py has a finding, and its digest was kept trimmed")
	}
	for p, d := range want.Digests {
		g := got.Digests[p]
		if g == nil || g.Sum != d.Sum || g.Lines != d.Lines || !reflect.DeepEqual(g.Dropped, d.Dropped) || !reflect.DeepEqual(g.Tails, d.Tails) || g.KeptLines() != d.KeptLines() {
			t.Errorf("%s: digest %+v, a run without priors made %+v", filepath.Base(p), g, d)
		}
	}
	if findingsText(got) != findingsText(want) {
		t.Errorf("findings differ with priors:\n%s\nwant\n%s", findingsText(got), findingsText(want))
	}
	// Another relevance (a preset the earlier run's imports turned on):
	// the priors are not taken.
	other := Relevance{ImportPresets: []string{"sglang"}}
	opts.PriorRelevance = &other
	got, err = Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digests[plain] == prior[plain] {
		t.Errorf("plain.py's prior digest was taken from a run of another relevance")
	}
}

// TestTreeCacheDigests: runs sharing a TreeCache (capguard server) take
// the digests of the files whose bytes did not change from the last run,
// make the edited file's, and return what a run without the cache makes;
// a run whose configuration names other tokens makes them all again.
func TestTreeCacheDigests(t *testing.T) {
	files := capturedStep
	dir := writeTree(t, files)
	runner, steps := filepath.Join(dir, "eng", "runner.py"), filepath.Join(dir, "eng", "steps.py")
	trees := NewTreeCache()
	overlay := map[string][]byte{}
	run := func(cfg *Config) (got, want *Result) {
		t.Helper()
		opts := Options{Paths: []string{filepath.Join(dir, "eng")}, Config: cfg, Overlay: overlay, Digests: true}
		want, err := Run(opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Trees = trees
		if got, err = Run(opts); err != nil {
			t.Fatal(err)
		}
		if len(got.Digests) != len(want.Digests) || len(got.Digests) < 2 {
			t.Fatalf("%d digests, %d without the tree cache", len(got.Digests), len(want.Digests))
		}
		for p, d := range want.Digests {
			if g := got.Digests[p]; g == nil || g.Sum != d.Sum || g.KeptLines() != d.KeptLines() || !reflect.DeepEqual(g.Tails, d.Tails) {
				t.Errorf("%s: digest %+v, without the tree cache %+v", filepath.Base(p), g, d)
			}
		}
		return got, want
	}
	first, _ := run(&Config{})
	overlay[steps] = []byte(strings.Replace(files["eng/steps.py"], "y = x * 2", "y = x * 3", 1))
	second, _ := run(&Config{})
	if second.Digests[runner] != first.Digests[runner] {
		t.Errorf("runner.py's bytes did not change, and its digest was made again")
	}
	if second.Digests[steps] == first.Digests[steps] || second.Digests[steps].Sum == first.Digests[steps].Sum {
		t.Errorf("steps.py was edited, and its digest was taken from the run before")
	}
	third, _ := run(&Config{EntryPoints: []string{"eng.runner:capture"}})
	if third.Digests[runner] == second.Digests[runner] {
		t.Errorf("a run with other prefilter tokens took the digest of a run without them")
	}
}

// writeTree writes files (relative names) under a new folder and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// capturedStep: eng.runner captures eng.steps.step, which reads a tensor
// on the host through sync (one CG101).
var capturedStep = map[string]string{
	"eng/__init__.py": "",
	"eng/runner.py":   "import torch\n\nfrom eng.steps import step\n\n\ndef capture(x):\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n        step(x)\n    return g\n",
	"eng/steps.py":    "def sync(x):\n    return x.item()\n\n\ndef step(x):\n    # scaled\n    y = x * 2\n    return y + sync(y)\n",
}
