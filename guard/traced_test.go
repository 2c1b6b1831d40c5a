package guard

import (
	"path/filepath"
	"strings"
	"testing"
)

// A capture map makes the functions it recorded captured, with the
// recorded stack as the chain and edge kind traced, and its runtime
// findings are reported beside the static ones, tagged traced. The map was
// recorded in another checkout (the helper's worktree): its paths resolve
// by their place under the traced run's working directory.
func TestCaptureMapMerge(t *testing.T) {
	m, err := filepath.Abs("capmap/testdata/cpu_engine.map.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../templates/testdata/trace")
	g, err := BuildGraph(Options{Paths: []string{"cpu_engine.py"}, CaptureMap: m})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]GraphFunction{}
	for _, f := range g.Functions {
		byName[f.Name] = f
	}
	for _, name := range []string{"cpu_engine.Backend.forward", "cpu_engine.combine"} {
		f := byName[name]
		if f.Context != Captured {
			t.Errorf("%s: context %s, want captured (recorded by the trace)", name, f.Context)
			continue
		}
		if f.Resolution != Traced {
			t.Errorf("%s: resolution %s, want traced (chain %v kinds %v)", name, f.Resolution, f.Chain, f.ChainKinds)
		}
	}
	// Static analysis alone does not reach the planted rebind's function
	// as replay-prep context from a trace; the map does.
	if f := byName["cpu_engine.Backend.prepare_replay"]; f.Context != ReplayPrep {
		t.Errorf("prepare_replay: context %s, want replay-prep from the map", f.Context)
	}
	res, err := Run(Options{Paths: []string{"cpu_engine.py"}, CaptureMap: m})
	if err != nil {
		t.Fatal(err)
	}
	traced := 0
	for _, d := range res.Diagnostics {
		if d.Resolution == Traced && strings.HasPrefix(d.Message, "traced: ") {
			traced++
		}
	}
	if traced == 0 {
		t.Errorf("no runtime finding from the map among %d findings", len(res.Diagnostics))
	}
}
