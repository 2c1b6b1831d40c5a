package guard

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
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

// TestPaceSolve: on a large project the solve runs under a soft memory
// limit that follows the live heap (1.5x it plus 64 MiB), overlapping runs
// share one pacer, and the limit in force before comes back when the last
// one ends; a small project and a lower limit already set are left alone.
func TestPaceSolve(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	debug.SetMemoryLimit(math.MaxInt64)
	runtime.GC()

	big := []*File{{Src: make([]byte, 5<<20)}}
	end := paceSolve(big)
	if end == nil {
		t.Fatal("no pacing on a 5 MiB project")
	}
	paced := debug.SetMemoryLimit(-1)
	if paced == math.MaxInt64 || paced > 4<<30 {
		t.Fatalf("limit %d: not near the live heap", paced)
	}
	// The limit follows the live heap: 64 MiB more of it, kept live and
	// collected, raises the limit by about 96 MiB.
	ballast := make([]byte, 64<<20)
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < paced+64<<20 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < paced+64<<20 {
		t.Errorf("limit %d after the live heap grew by 64 MiB, want at least %d", got, paced+64<<20)
	}
	runtime.KeepAlive(ballast)
	inner := paceSolve(big) // an overlapping run
	if inner == nil {
		t.Fatal("the overlapping run got no pacer")
	}
	end()
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		t.Error("the limit was lifted while a run is still under it")
	}
	inner()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after both runs, want the one before", got)
	}

	if paceSolve([]*File{{Src: make([]byte, 1<<20)}}) != nil {
		t.Error("pacing on a 1 MiB project")
	}
	debug.SetMemoryLimit(1 << 20) // lower than any paced limit
	lift := paceSolve(big)
	time.Sleep(20 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != 1<<20 {
		t.Errorf("a lower limit in force was replaced by %d", got)
	}
	lift()
	if got := debug.SetMemoryLimit(-1); got != 1<<20 {
		t.Errorf("limit %d after the run, want the lower one before it", got)
	}
}
