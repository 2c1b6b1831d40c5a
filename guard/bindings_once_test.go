package guard

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/tensors"
	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// A function's bindings (what the value model reads first of it: its
// parameters and the names its body binds) are syntax, so a run records
// them once for each function, however many of its passes, contexts,
// rules and callers' passes read them. They were recorded once a file
// being checked and once more for each parameter whose callers a pass
// asked about: on FlagGems' src/ that was a fifth of the rules' CPU.
//
// One core: two files' passes that ask first at the same moment may both
// record it (analysis.Project.Memo keeps one), which is not what this
// counts.
func TestBindingsRecordedOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	worst, worstDir := 0.0, ""
	for _, dir := range testenv.FixtureProjects(t, filepath.Join("..", "testdata")) {
		g, err := BuildGraph(Options{Paths: []string{dir}})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		before := tensors.BindingsRecorded()
		if _, err := Run(Options{Paths: []string{dir}}); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		made := tensors.BindingsRecorded() - before
		if fns := len(g.Functions); made > int64(fns) {
			t.Errorf("%s: bindings recorded %d times for %d functions", dir, made, fns)
		}
		if fns := len(g.Functions); fns > 0 && float64(made)/float64(fns) > worst {
			worst, worstDir = float64(made)/float64(fns), dir
		}
	}
	t.Logf("most recordings a function: %.2f (%s)", worst, worstDir)
}
