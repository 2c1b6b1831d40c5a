package guard

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
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

// paceSolve keeps the heap near its live size while the points-to solve
// and the contexts run on a large project, and returns the function that
// ends it (nil when it does nothing).
//
// The collector runs at 4x the live heap (cli's tuneGC): the parse, whose
// trees are most of what it allocates and stay live, runs with few
// collections. But the solve then allocates its tables (and the garbage of
// growing them) on top of the trees with no collection at all — the next
// one was due at 5x the parse's live heap — so the run's peak was the
// trees plus everything the solve ever allocated (FlagGems' src/: 770 MB
// at a live heap of 340-500 MiB). Here a soft memory limit follows the live
// heap: every 5 ms it is set to 1.5x the live heap of the last collection
// plus 64 MiB, so a collection comes when the heap has grown by half since
// the last. It is never set above the limit in force before (GOMEMLIMIT,
// tuneGC's), which comes back when the last run under it ends (the server's
// runs overlap and share one pacer).
func paceSolve(files []*File) func() {
	if sourceBytes(files) <= 4<<20 {
		return nil
	}
	pacer.Lock()
	defer pacer.Unlock()
	if pacer.runs == 0 {
		pacer.old = debug.SetMemoryLimit(-1)
		pacer.stop, pacer.done = make(chan struct{}), make(chan struct{})
		old, stop, done := pacer.old, pacer.stop, pacer.done
		follow := func() {
			if limit := pacedLimit(); limit > 0 && limit < old {
				debug.SetMemoryLimit(limit)
			}
		}
		follow()
		go func() {
			defer close(done)
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					follow()
				}
			}
		}()
	}
	pacer.runs++
	return func() {
		pacer.Lock()
		defer pacer.Unlock()
		if pacer.runs--; pacer.runs == 0 {
			close(pacer.stop)
			<-pacer.done
			debug.SetMemoryLimit(pacer.old)
		}
	}
}

// pacedLimit is 1.5x the live heap of the last collection plus 64 MiB (0
// when the runtime does not say).
func pacedLimit() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[0].Value.Uint64() == 0 {
		return 0
	}
	live := int64(s[0].Value.Uint64())
	return live + live/2 + 64<<20
}

// pacer is paceSolve's state: the runs under it, the limit before it and
// its goroutine's stop and done channels.
var pacer struct {
	sync.Mutex
	runs       int
	old        int64
	stop, done chan struct{}
}
