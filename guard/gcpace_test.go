package guard

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// waitLimit waits up to 5 s for the memory limit to satisfy ok (the pacer
// reads the live heap every 5 ms) and returns it.
func waitLimit(ok func(int64) bool) int64 {
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := debug.SetMemoryLimit(-1)
		if ok(got) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMemoryLimits: the rules' cap and the solve's pacer set a soft
// memory limit near the live heap, whatever the project's size; the pacer's
// follows the live heap; overlapping uses of both kinds (the server's
// runs) keep the lowest, and the limit before the first comes back when
// the last ends, in whatever order they end (a pacer ending after a cap
// restored the cap's limit for good before they shared one manager); a
// lower limit already set is left alone.
func TestMemoryLimits(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	debug.SetMemoryLimit(math.MaxInt64)
	runtime.GC() // the live heap the limits are made from

	lift := boundRulesGarbage()
	if lift == nil {
		t.Fatal("no cap")
	}
	capped := debug.SetMemoryLimit(-1)
	if capped == math.MaxInt64 || capped > 4<<30 {
		t.Fatalf("limit %d: not near the live heap", capped)
	}

	end := paceSolve() // an overlapping run's solve
	if got := debug.SetMemoryLimit(-1); got > capped {
		t.Fatalf("limit %d with a cap of %d in force: not the lowest", got, capped)
	}
	// 64 MiB more live heap: the pacer's limit follows it (about 96 MiB
	// higher), the cap does not; the lowest is still the cap.
	ballast := make([]byte, 64<<20)
	runtime.GC()
	lift()
	if got := waitLimit(func(l int64) bool { return l >= capped+64<<20 }); got < capped+64<<20 || got == math.MaxInt64 {
		t.Errorf("limit %d after the cap ended and the live heap grew by 64 MiB, want the pacer's, at least %d", got, capped+64<<20)
	}
	runtime.KeepAlive(ballast)
	end()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after both uses, want the one before", got)
	}
	debug.SetMemoryLimit(1 << 20) // lower than any limit of theirs
	if boundRulesGarbage() != nil {
		t.Error("a cap over a lower limit in force")
	}
	end = paceSolve()
	time.Sleep(20 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != 1<<20 {
		t.Errorf("a lower limit in force was replaced by %d", got)
	}
	end()
	end() // a second call does nothing
	if got := debug.SetMemoryLimit(-1); got != 1<<20 {
		t.Errorf("limit %d after the run, want the lower one before it", got)
	}
}
