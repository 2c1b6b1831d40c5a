package guard

import (
	"os"
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

// A capture map's runtime findings go through the one suppression filter:
// a `# capguard: ignore[...]` on the line and the config's
// per-file-ignores drop them as they drop static findings.
func TestCaptureMapSuppressed(t *testing.T) {
	m, err := filepath.Abs("capmap/testdata/cpu_engine.map.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../templates/testdata/trace")
	traced := func(res *Result) []*Diagnostic {
		var out []*Diagnostic
		for _, d := range res.Diagnostics {
			if d.Resolution == Traced && strings.HasPrefix(d.Message, "traced: ") {
				out = append(out, d)
			}
		}
		return out
	}
	res, err := Run(Options{Paths: []string{"cpu_engine.py"}, CaptureMap: m, Config: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
	found := traced(res)
	if len(found) == 0 {
		t.Fatal("no runtime finding from the map")
	}
	// Every traced finding's line gets an ignore comment.
	src, err := os.ReadFile("cpu_engine.py")
	if err != nil {
		t.Fatal(err)
	}
	res, err = Run(Options{Paths: []string{"cpu_engine.py"}, CaptureMap: m, Config: &Config{},
		Overlay: map[string][]byte{"cpu_engine.py": src}})
	if err != nil {
		t.Fatal(err)
	}
	if len(traced(res)) != len(found) {
		t.Fatalf("with the source as an overlay: %d traced findings, want %d", len(traced(res)), len(found))
	}
	lines := strings.Split(string(src), "\n")
	for _, d := range found {
		if !strings.Contains(lines[d.Start.Line-1], "# capguard: ignore") {
			lines[d.Start.Line-1] += "  # capguard: ignore[" + d.Rule.ID + "] reviewed: the trace's buffer is rebuilt each step"
		}
	}
	res, err = Run(Options{Paths: []string{"cpu_engine.py"}, CaptureMap: m, Config: &Config{},
		Overlay: map[string][]byte{"cpu_engine.py": []byte(strings.Join(lines, "\n"))}})
	if err != nil {
		t.Fatal(err)
	}
	if left := traced(res); len(left) > 0 {
		t.Errorf("%d traced findings survive their line's ignore comment: %s:%d %s", len(left), left[0].Path, left[0].Start.Line, left[0].Rule.ID)
	}
	for _, d := range res.Diagnostics {
		if d.Rule.ID == "CG900" || d.Rule.ID == "CG901" {
			t.Errorf("the ignore comment of a traced finding is reported unused: %s:%d", d.Path, d.Start.Line)
		}
	}
	ignores := map[string][]string{}
	for _, d := range found {
		ignores["cpu_engine.py"] = append(ignores["cpu_engine.py"], d.Rule.ID)
	}
	res, err = Run(Options{Paths: []string{"cpu_engine.py"}, CaptureMap: m, Config: &Config{PerFileIgnores: ignores}})
	if err != nil {
		t.Fatal(err)
	}
	if left := traced(res); len(left) > 0 {
		t.Errorf("%d traced findings survive per-file-ignores", len(left))
	}
}
