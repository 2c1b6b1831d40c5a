package guard

import (
	"runtime"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// The layers that work on every core (the parse, the capture evidence,
// the direct launchers, the rules) give what one core gives: every
// fixture project is checked with one worker and with eight, and the
// findings, messages, chains and fixes must be the same. A merge that
// followed the order the workers finished in would differ here.
func TestParallelEqualsSerial(t *testing.T) {
	report := func(dir string, procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		res, err := Run(Options{Paths: []string{dir}})
		if err != nil {
			t.Fatal(err)
		}
		return findingsText(res)
	}
	for _, dir := range testenv.FixtureProjects(t, "../testdata") {
		one := report(dir, 1)
		for run := 0; run < 3; run++ {
			if many := report(dir, 8); many != one {
				t.Fatalf("%s: eight workers (run %d) differ from one:\n%s\nvs\n%s", dir, run+1, many, one)
			}
		}
	}
}
