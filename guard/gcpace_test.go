package guard

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestBoundRulesGarbage: on a large project the rules run under a soft
// memory limit near the live heap, overlapping runs share it, and the
// limit in force before comes back when the last one ends; a small project
// and a lower limit already set are left alone.
func TestBoundRulesGarbage(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	debug.SetMemoryLimit(math.MaxInt64)
	runtime.GC() // the live heap the limit is made from

	big := &Project{Files: []*File{{Src: make([]byte, 5<<20)}}}
	lift := boundRulesGarbage(big)
	if lift == nil {
		t.Fatal("no cap on a 5 MiB project")
	}
	capped := debug.SetMemoryLimit(-1)
	if capped == math.MaxInt64 || capped > 4<<30 {
		t.Fatalf("limit %d: not near the live heap", capped)
	}
	inner := boundRulesGarbage(big) // an overlapping run
	if inner == nil || debug.SetMemoryLimit(-1) != capped {
		t.Fatalf("the overlapping run moved the cap to %d", debug.SetMemoryLimit(-1))
	}
	lift()
	if debug.SetMemoryLimit(-1) != capped {
		t.Error("the cap was lifted while a run is still under it")
	}
	inner()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after both runs, want the one before", got)
	}

	if boundRulesGarbage(&Project{Files: []*File{{Src: make([]byte, 1<<20)}}}) != nil {
		t.Error("a cap on a 1 MiB project")
	}
	debug.SetMemoryLimit(1 << 20) // lower than any cap
	if boundRulesGarbage(big) != nil || debug.SetMemoryLimit(-1) != 1<<20 {
		t.Error("a lower limit in force was replaced")
	}
}
