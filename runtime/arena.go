package runtime

import (
	"fmt"
	"path/filepath"
	goruntime "runtime"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

// Placement says where an Arena puts temporaries, and so how the checker
// covers a freed temporary with a canary.
type Placement string

const (
	// Auto is Remap where the backend has virtual memory, else Realloc.
	Auto Placement = "auto"
	// Realloc allocates temporaries with the backend's allocator and covers
	// a freed one by allocating again: cuMemAlloc usually, not always, hands
	// the freed address back. The report says how much was covered.
	Realloc Placement = "realloc"
	// Remap places temporaries in a reserved virtual range and covers a freed
	// one by mapping fresh physical memory under exactly its addresses.
	Remap Placement = "remap"
)

// reservation is the address space a Remap arena reserves for temporaries.
const reservation = 4 << 30

// Buffer is one device buffer an Arena handed out.
type Buffer struct {
	Name string      `json:"name"`
	Kind string      `json:"kind"` // "temp", "persistent" or "canary"
	Addr backend.Ptr `json:"addr"`
	Size int64       `json:"size"` // bytes asked for
	Span int64       `json:"span"` // bytes allocated or mapped (at least Size)
}

// End is the first address after the buffer's span.
func (b Buffer) End() backend.Ptr { return b.Addr + backend.Ptr(b.Span) }

func (b Buffer) String() string {
	return fmt.Sprintf("%s %s [%#x, +%d)", b.Kind, b.Name, uint64(b.Addr), b.Size)
}

// Arena is everything a step allocates: temporaries, freed when the step
// returns (like a Python temporary), and persistent buffers, allocated on
// first use and at the same address on every call after. Knowing every
// buffer is what lets the checker free, cover and poison exactly the memory a
// captured graph may still use.
type Arena struct {
	b          backend.Backend
	vm         backend.VirtualMemory // nil unless Remap
	placement  Placement
	persistent map[string]*Buffer
	keys       []string
	temps      []Buffer
	ntemp      int
	base       backend.Ptr
	used       int64
}

// NewArena makes an arena on b. Remap needs a backend with virtual memory.
func NewArena(b backend.Backend, p Placement) (*Arena, error) {
	a := &Arena{b: b, placement: p, persistent: map[string]*Buffer{}}
	vm, hasVM := b.(backend.VirtualMemory)
	switch p {
	case "", Auto:
		a.placement = Realloc
		if hasVM {
			a.placement = Remap
		}
	case Realloc:
	case Remap:
		if !hasVM {
			return nil, fmt.Errorf("arena: placement remap needs virtual memory, which backend %s lacks", b.Name())
		}
	default:
		return nil, fmt.Errorf("arena: unknown placement %q (auto, realloc or remap)", p)
	}
	if a.placement == Remap {
		a.vm = vm
		base, err := vm.Reserve(reservation)
		if err != nil {
			return nil, fmt.Errorf("arena: reserve address space: %w", err)
		}
		a.base = base
	}
	return a, nil
}

// Placement is the arena's placement (never Auto).
func (a *Arena) Placement() Placement { return a.placement }

func (a *Arena) gran() int64 {
	if a.vm == nil {
		return 1
	}
	return a.vm.Granularity()
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

// Temp allocates a temporary of size bytes, freed by Release.
func (a *Arena) Temp(size int64) (backend.Ptr, error) {
	return a.temp(size, caller(1))
}

func caller(skip int) string {
	_, file, line, ok := goruntime.Caller(skip + 1)
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

func (a *Arena) temp(size int64, site string) (backend.Ptr, error) {
	if size <= 0 {
		return 0, fmt.Errorf("arena: temporary of %d bytes", size)
	}
	a.ntemp++
	buf := Buffer{Name: fmt.Sprintf("temp%d@%s", a.ntemp, site), Kind: "temp", Size: size, Span: size}
	p, span, err := a.place(size)
	if err != nil {
		return 0, err
	}
	buf.Addr, buf.Span = p, span
	a.temps = append(a.temps, buf)
	return p, nil
}

// place allocates or maps size bytes for a temporary or canary.
func (a *Arena) place(size int64) (backend.Ptr, int64, error) {
	if a.vm == nil {
		p, err := a.b.Alloc(size)
		return p, size, err
	}
	span := roundUp(size, a.gran())
	if a.used+span > reservation {
		return 0, 0, fmt.Errorf("arena: reserved address space (%d bytes) used up", int64(reservation))
	}
	p := a.base + backend.Ptr(a.used)
	if err := a.vm.MapFresh(p, span); err != nil {
		return 0, 0, err
	}
	a.used += span
	return p, span, nil
}

// unplace frees what place made.
func (a *Arena) unplace(b Buffer) error {
	if a.vm == nil {
		return a.b.Free(b.Addr)
	}
	return a.vm.Unmap(b.Addr, b.Span)
}

// Persistent returns the buffer kept under key: allocated on first use, at
// the same address on every later call. Asking for more than the first call
// did is an error: allocate at the largest size first (warm up at the
// largest batch size).
func (a *Arena) Persistent(key string, size int64) (backend.Ptr, error) {
	if b, ok := a.persistent[key]; ok {
		if size > b.Size {
			return 0, fmt.Errorf("arena: persistent buffer %q has %d bytes, %d asked for: allocate it at the largest size first", key, b.Size, size)
		}
		return b.Addr, nil
	}
	if size <= 0 {
		return 0, fmt.Errorf("arena: persistent buffer %q of %d bytes", key, size)
	}
	p, err := a.b.Alloc(size)
	if err != nil {
		return 0, err
	}
	a.persistent[key] = &Buffer{Name: key, Kind: "persistent", Addr: p, Size: size, Span: size}
	a.keys = append(a.keys, key)
	return p, nil
}

// Lookup returns the persistent buffer kept under key.
func (a *Arena) Lookup(key string) (Buffer, bool) {
	b, ok := a.persistent[key]
	if !ok {
		return Buffer{}, false
	}
	return *b, true
}

// Temps are the temporaries live now.
func (a *Arena) Temps() []Buffer { return append([]Buffer(nil), a.temps...) }

// Release frees the live temporaries (the step returned) and says which.
// It frees all of them even when one fails, and returns the first error.
func (a *Arena) Release() ([]Buffer, error) {
	freed := a.temps
	a.temps, a.ntemp = nil, 0
	var first error
	for _, t := range freed {
		if err := a.unplace(t); err != nil && first == nil {
			first = fmt.Errorf("arena: free %s: %w", t, err)
		}
	}
	return freed, first
}

// Close frees every buffer and the reservation. It tries everything and
// returns the first error.
func (a *Arena) Close() error {
	_, first := a.Release()
	for _, k := range a.keys {
		if err := a.b.Free(a.persistent[k].Addr); err != nil && first == nil {
			first = fmt.Errorf("arena: free persistent %q: %w", k, err)
		}
	}
	a.persistent, a.keys = map[string]*Buffer{}, nil
	if a.vm != nil && a.base != 0 {
		if err := a.vm.FreeReservation(a.base, reservation); err != nil && first == nil {
			first = fmt.Errorf("arena: free reservation: %w", err)
		}
		a.base = 0
	}
	return first
}

// Coverage says how much of one freed temporary the canaries covered.
type Coverage struct {
	Buffer  Buffer `json:"buffer"`
	Covered int64  `json:"covered_bytes"`
	Method  string `json:"method"` // "remap" (exact) or "realloc"
}

// cover places canaries over freed temporaries: under Remap fresh memory is
// mapped at exactly the freed addresses; under Realloc the allocator is asked
// again (a few times) and canaries that land on nothing freed are dropped.
func (a *Arena) cover(freed []Buffer) ([]Buffer, []Coverage, error) {
	var canaries []Buffer
	cov := make([]Coverage, len(freed))
	for i, f := range freed {
		cov[i] = Coverage{Buffer: f, Method: string(a.placement)}
	}
	if a.vm != nil {
		for i, f := range freed {
			if err := a.vm.MapFresh(f.Addr, f.Span); err != nil {
				return canaries, cov, fmt.Errorf("arena: map canary over %s: %w", f, err)
			}
			canaries = append(canaries, Buffer{Name: "canary:" + f.Name, Kind: "canary", Addr: f.Addr, Size: f.Span, Span: f.Span})
			cov[i].Covered = f.Size
		}
		return canaries, cov, nil
	}
	overlap := func(c, f Buffer) int64 {
		lo, hi := max(c.Addr, f.Addr), min(c.End(), f.Addr+backend.Ptr(f.Size))
		if hi <= lo {
			return 0
		}
		return int64(hi - lo)
	}
	var spare []Buffer // canaries that landed on nothing freed: kept while trying, then freed
	for try := 0; try < 2; try++ {
		for i, f := range freed {
			if cov[i].Covered >= f.Size {
				continue
			}
			p, err := a.b.Alloc(f.Span)
			if err != nil {
				a.dropAll(spare)
				return canaries, cov, fmt.Errorf("arena: allocate canary for %s: %w", f, err)
			}
			c := Buffer{Name: "canary:" + f.Name, Kind: "canary", Addr: p, Size: f.Span, Span: f.Span}
			useful := false
			for j, g := range freed {
				if o := overlap(c, g); o > 0 {
					cov[j].Covered = min(g.Size, cov[j].Covered+o)
					useful = true
				}
			}
			if useful {
				canaries = append(canaries, c)
			} else {
				spare = append(spare, c)
			}
		}
	}
	return canaries, cov, a.dropAll(spare)
}

func (a *Arena) dropAll(bufs []Buffer) error {
	var first error
	for _, c := range bufs {
		if err := a.unplace(c); err != nil && first == nil {
			first = err
		}
	}
	return first
}
