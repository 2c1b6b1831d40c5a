package guard

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/contexts"
)

// A process that analyses again and again (capguard server) keeps no
// per-function cache of the analyses before: the second run of the same
// project leaves the bindings cache as the first did, not twice as big.
func TestRepeatedRunsKeepNoOldBindings(t *testing.T) {
	run := func() int {
		if _, err := Run(Options{Paths: []string{"../testdata/flow/capture_args", "../testdata/flow/replayprep"}}); err != nil {
			t.Fatal(err)
		}
		return contexts.CachedBindings()
	}
	first := run()
	if first == 0 {
		t.Fatal("the analysis cached no bindings: the test no longer measures the cache")
	}
	for i := 0; i < 3; i++ {
		if n := run(); n > first {
			t.Fatalf("run %d left %d cached bindings, the first run %d: old analyses' entries are kept", i+2, n, first)
		}
	}
}
