package guard

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// capguard sets a soft memory limit (debug.SetMemoryLimit) at two stages
// of a run, because the collector runs at 4x the live heap (cli's tuneGC)
// and the garbage of those stages would otherwise pile on a heap that is
// mostly live:
//
//   - the points-to solve and the contexts (paceSolve): no collection ran
//     between the parse's end (its next one due at 5x the trees) and the
//     solve's, so the peak was the trees plus every array the solve ever
//     allocated (FlagGems' src/: 770 MB at a live heap of 340-500 MiB).
//     Its limit follows the live heap: 1.5x that of the last collection
//     plus 64 MiB, read every 5 ms;
//   - the rules (boundRulesGarbage): their per-file garbage (about 360 MB
//     on FlagGems' src/). Its limit is 1.5x the live heap when they start,
//     plus 64 MiB.
//
// What decides is the heap, not the source: both were keyed on 4 MiB of
// source, and a 4.1 MB checkout whose code mixes many values (8.6
// million points-to facts from 114k lines) solved unpaced to a 725 MB
// peak. Under a live heap of about 18 MiB the collector's own pace (4x)
// comes before the limit, so a small run is not slowed.
//
// Runs overlap in the server, so both go through one manager: each use
// holds a limit it wants, the limit in force is the lowest of them and of
// the limit before the first use (GOMEMLIMIT, tuneGC's), and that one
// comes back when the last use ends, whatever order they end in.

// largeHeapBytes is the heap over which the collection after the solve
// runs (largeHeap).
const largeHeapBytes = 64 << 20

// boundRulesGarbage caps the heap while the rules run, and returns the
// function that lifts the cap (nil when it sets none: a limit in force
// already at or under the cap).
func boundRulesGarbage() func() {
	want := pacedLimit()
	if want <= 0 {
		return nil
	}
	return memLimits.acquire(&limitUse{want: want}, true)
}

// paceSolve keeps the heap near its live size while the points-to solve
// and the contexts run, and returns the function that ends it.
func paceSolve() func() {
	return memLimits.acquire(&limitUse{follow: true}, false)
}

// pacedLimit is 1.5x the live heap of the last collection plus 64 MiB (0
// when the runtime does not say).
func pacedLimit() int64 {
	live := readMetric("/gc/heap/live:bytes")
	if live == 0 {
		return 0
	}
	return live + live/2 + 64<<20
}

// largeHeap reports whether the heap holds more than largeHeapBytes now,
// live or garbage: a collection then frees what a stage dropped before the
// next one grows the heap on top of it.
func largeHeap() bool {
	return readMetric("/memory/classes/heap/objects:bytes") > largeHeapBytes
}

// readMetric is a runtime metric's value (0 when the runtime does not say).
func readMetric(name string) int64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// limitUse is one use of the memory limit: a fixed limit it wants, or one
// that follows the live heap (pacedLimit).
type limitUse struct {
	want   int64
	follow bool
}

// limitManager holds the uses in force and the limit before the first.
type limitManager struct {
	sync.Mutex
	base       int64
	uses       map[*limitUse]bool
	stop, done chan struct{} // the follower goroutine, while a use follows
}

var memLimits limitManager

// acquire adds use u and returns the function that ends it; with
// onlyLower, nil (and no use) when u would not lower the limit in force.
func (m *limitManager) acquire(u *limitUse, onlyLower bool) func() {
	m.Lock()
	defer m.Unlock()
	if onlyLower && u.want >= debug.SetMemoryLimit(-1) {
		return nil
	}
	if len(m.uses) == 0 {
		m.base = debug.SetMemoryLimit(-1)
		m.uses = map[*limitUse]bool{}
	}
	m.uses[u] = true
	if u.follow && m.stop == nil {
		m.stop, m.done = make(chan struct{}), make(chan struct{})
		go m.follow(m.stop, m.done)
	}
	m.apply()
	var once sync.Once
	return func() { once.Do(func() { m.release(u) }) }
}

func (m *limitManager) release(u *limitUse) {
	m.Lock()
	delete(m.uses, u)
	following := false
	for x := range m.uses {
		following = following || x.follow
	}
	var stop, done chan struct{}
	if !following && m.stop != nil {
		// Retired under the lock: the goroutine applies no more (follow).
		stop, done = m.stop, m.done
		m.stop, m.done = nil, nil
	}
	if len(m.uses) == 0 {
		debug.SetMemoryLimit(m.base)
	} else {
		m.apply()
	}
	m.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// apply sets the lowest limit the uses want, never above the base (m is
// locked).
func (m *limitManager) apply() {
	limit := m.base
	paced := int64(-1)
	for u := range m.uses {
		w := u.want
		if u.follow {
			if paced < 0 {
				paced = pacedLimit()
			}
			w = paced
		}
		if w > 0 && w < limit {
			limit = w
		}
	}
	debug.SetMemoryLimit(limit)
}

// follow applies the uses every 5 ms until stop closes (and not once it
// is retired: release clears m.stop under the lock first).
func (m *limitManager) follow(stop, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			m.Lock()
			if m.stop == stop {
				m.apply()
			}
			m.Unlock()
		}
	}
}
