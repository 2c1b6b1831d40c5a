package guard

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// boundRulesGarbage caps the heap while the rules run on a large project,
// and returns the function that lifts the cap (nil when it set none).
//
// The collector runs at 4x the live heap (cli's tuneGC) and one collection
// follows the solve (load), so on a large project the heap is then mostly
// live (syntax trees, the points-to graph) with its next collection at 5x
// that: the contexts' and the rules' garbage (per file, short-lived: about
// 360 MB on FlagGems' src/) piled on top of it made the run's peak. A soft
// memory limit of 1.5x the live heap (and 64 MiB for what is not heap)
// collects it when it gets there, and never on a run that stays under it.
// A lower limit already in force (GOMEMLIMIT) stays; runs that overlap (the
// server) share the first one's cap, lifted when the last one ends.
func boundRulesGarbage(proj *Project) func() {
	if sourceBytes(proj.Files) <= 4<<20 {
		return nil
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[0].Value.Uint64() == 0 {
		return nil
	}
	live := int64(s[0].Value.Uint64())
	gcCap.Lock()
	defer gcCap.Unlock()
	if gcCap.runs == 0 {
		limit := live + live/2 + 64<<20
		old := debug.SetMemoryLimit(-1)
		if limit >= old {
			return nil
		}
		gcCap.old = old
		debug.SetMemoryLimit(limit)
	}
	gcCap.runs++
	return func() {
		gcCap.Lock()
		defer gcCap.Unlock()
		if gcCap.runs--; gcCap.runs == 0 {
			debug.SetMemoryLimit(gcCap.old)
		}
	}
}

// gcCap is the cap boundRulesGarbage set: the runs under it and the limit
// before it.
var gcCap struct {
	sync.Mutex
	runs int
	old  int64
}
