package guard

import (
	"sync"
	"testing"
)

// TestProgressInOrder: reports reach the callback one at a time, and a
// report whose Done is lower than the one before it in the same phase (a
// worker's count taken before another's) does not reach it; a new phase
// starts again from its own counts.
func TestProgressInOrder(t *testing.T) {
	var got []Progress
	f := inOrder(func(p Progress) { got = append(got, p) })
	for _, p := range []Progress{
		{Phase: "reading", Done: 1, Total: 3}, {Phase: "reading", Done: 3, Total: 3}, {Phase: "reading", Done: 2, Total: 3},
		{Phase: "analysing", Done: 1, Total: 2}, {Phase: "analysing", Done: 2, Total: 2}, {Phase: "analysing", Done: 1, Total: 2},
	} {
		f(p)
	}
	want := []Progress{{Phase: "reading", Done: 1, Total: 3}, {Phase: "reading", Done: 3, Total: 3},
		{Phase: "analysing", Done: 1, Total: 2}, {Phase: "analysing", Done: 2, Total: 2}}
	if len(got) != len(want) {
		t.Fatalf("reports passed on: %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("report %d: %v, want %v", i, got[i], want[i])
		}
	}
	if inOrder(nil) != nil {
		t.Error("inOrder(nil) is not nil")
	}
}

// TestRunProgressInOrder: a run on a fixture project reports, in each
// phase, counts that never go back, one call at a time (the callback
// holds no lock of its own: -race would see two at once).
func TestRunProgressInOrder(t *testing.T) {
	var busy sync.Mutex
	last := map[string]int{}
	for i := 0; i < 20; i++ {
		_, err := Run(Options{Paths: []string{"../testdata/sglang_like"}, Progress: func(p Progress) {
			if !busy.TryLock() {
				t.Error("two progress calls at once")
				return
			}
			defer busy.Unlock()
			if p.Done < last[p.Phase] {
				t.Errorf("%s: Done %d after %d", p.Phase, p.Done, last[p.Phase])
			}
			last[p.Phase] = p.Done
		}})
		if err != nil {
			t.Fatal(err)
		}
		clear(last)
	}
}
