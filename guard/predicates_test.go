package guard

import (
	"os"
	"path/filepath"
	"testing"
)

// A capture predicate says what a condition is during capture: code under
// a condition that is false then ("!" pattern) is not captured, and under
// `and`/`not` the truth combines. Without the predicate the same code is
// captured (the CG101 shows it).
func TestCapturePredicates(t *testing.T) {
	dir := t.TempDir()
	src := `import torch


def step(state, x):
    if state.is_prefill and x.numel() > 0:
        n = x.sum().item()
    if not state.is_prefill:
        return x * 2
    else:
        m = x.max().item()
    return x


def capture(g, state, x):
    with torch.cuda.graph(g):
        step(state, x)
`
	if err := os.WriteFile(filepath.Join(dir, "engine.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	count := func(cfg *Config) int {
		res, err := Run(Options{Paths: []string{dir}, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range res.Diagnostics {
			if d.Rule.ID == "CG101" {
				n++
			}
		}
		return n
	}
	if n := count(&Config{}); n != 2 {
		t.Errorf("without predicates: %d CG101, want 2", n)
	}
	if n := count(&Config{Predicates: []string{"!*.is_prefill"}}); n != 0 {
		t.Errorf("with !*.is_prefill: %d CG101, want 0 (both syncs are under a prefill branch)", n)
	}
	// True during capture: `p and unknown` stays unknown, and `not p` is
	// false, so its else branch is what runs: both syncs stay captured.
	if n := count(&Config{Predicates: []string{"*.is_prefill"}}); n != 2 {
		t.Errorf("with *.is_prefill (true during capture): %d CG101, want 2", n)
	}
}
