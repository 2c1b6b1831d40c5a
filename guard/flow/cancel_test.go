package flow

import (
	"slices"
	"testing"
)

// A solve asked to stop (Options.Canceled) returns a graph with only
// Canceled set, whether it is asked while the constraints are built or
// while the solve runs; one never told to stop is the plain solve.
func TestAnalyzeCanceled(t *testing.T) {
	old := stopEvery
	stopEvery = 1
	t.Cleanup(func() { stopEvery = old })
	files := map[string]string{"a.py": unknownReceiver, "b.py": `
from a import Manager, use


class Meter(Manager):
    def current_setting_of_manager(self):
        return 2


def main():
    return use(Meter())
`}
	plain := Analyze(projectOf(t, files), Options{})
	want := callees(plain, "a.use")
	if len(want) == 0 {
		t.Fatal("a.use calls nothing: the project no longer tests a solve")
	}
	for _, c := range []struct {
		name  string
		after int // questions answered false before the first true (-1: never true)
	}{
		{"before the first file", 0},
		{"between the files", 1},
		{"in the solve", 2},
		{"never", -1},
	} {
		asked := 0
		g := Analyze(projectOf(t, files), Options{Canceled: func() bool {
			asked++
			return c.after >= 0 && asked > c.after
		}})
		if c.after < 0 {
			if g.Canceled || !slices.Equal(callees(g, "a.use"), want) {
				t.Errorf("%s: canceled %v, a.use calls %v, want %v", c.name, g.Canceled, callees(g, "a.use"), want)
			}
			continue
		}
		if !g.Canceled || len(g.Out) != 0 || asked != c.after+1 {
			t.Errorf("%s: canceled %v with %d functions' edges after %d questions, want canceled after %d", c.name, g.Canceled, len(g.Out), asked, c.after+1)
		}
	}
}
