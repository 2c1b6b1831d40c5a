package runtime

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/runtime/sim"
)

func TestPersistentKeepsItsAddress(t *testing.T) {
	for _, p := range []Placement{Realloc, Remap} {
		b := sim.Open(sim.Options{})
		a, err := NewArena(b, p)
		if err != nil {
			t.Fatal(err)
		}
		x, err := a.Persistent("idx", 1024)
		if err != nil {
			t.Fatal(err)
		}
		a.Temp(100)
		a.Release()
		if y, _ := a.Persistent("idx", 512); y != x {
			t.Errorf("%s: persistent moved from %#x to %#x", p, x, y)
		}
		if _, err := a.Persistent("idx", 2048); err == nil {
			t.Errorf("%s: growing a persistent buffer did not fail", p)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if live := sim.Unwrap(b).Live(); live.Total() != 0 {
			t.Errorf("%s: leaked %+v", p, live)
		}
	}
}

func TestReleaseFreesTemporaries(t *testing.T) {
	b := sim.Open(sim.Options{})
	a, _ := NewArena(b, Remap)
	defer a.Close()
	p1, _ := a.Temp(10)
	p2, _ := a.Temp(70000)
	freed, err := a.Release()
	if err != nil || len(freed) != 2 || freed[0].Addr != p1 || freed[1].Addr != p2 {
		t.Fatalf("freed %+v, %v", freed, err)
	}
	if freed[1].Span%b.(interface{ Granularity() int64 }).Granularity() != 0 {
		t.Errorf("remap span %d is not a multiple of the granularity", freed[1].Span)
	}
	if len(a.Temps()) != 0 || sim.Unwrap(b).Live().Mappings != 0 {
		t.Error("temporaries still live after Release")
	}
}

func TestPlacementAuto(t *testing.T) {
	a, _ := NewArena(sim.Open(sim.Options{}), Auto)
	if a.Placement() != Remap {
		t.Errorf("auto with virtual memory: %s", a.Placement())
	}
	a, _ = NewArena(sim.Open(sim.Options{NoVirtualMemory: true}), "")
	if a.Placement() != Realloc {
		t.Errorf("auto without virtual memory: %s", a.Placement())
	}
	if _, err := NewArena(sim.Open(sim.Options{}), "bogus"); err == nil {
		t.Error("unknown placement accepted")
	}
}
