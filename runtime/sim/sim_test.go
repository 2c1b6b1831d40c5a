package sim

import (
	"encoding/binary"
	"testing"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

// inc adds args[1] (int32) to every word of the n-word buffer at args[0].
func inc(m backend.Memory, grid, block backend.Dim, args []backend.Arg) error {
	p, v := args[0].(backend.Ptr), args[1].(int32)
	b := make([]byte, 16)
	if err := m.Read(p, b); err != nil {
		return err
	}
	for i := 0; i < 16; i += 4 {
		binary.LittleEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:])+uint32(v))
	}
	return m.Write(p, b)
}

func setup(t *testing.T, o Options) (*Device, backend.Stream, backend.Kernel) {
	t.Helper()
	d := Unwrap(Open(o))
	m, err := d.LoadModule(backend.ModuleSource{Name: "t", Go: map[string]backend.KernelFunc{"inc": inc}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Function("inc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unload() })
	s, _ := d.NewStream()
	t.Cleanup(func() { s.Destroy() })
	return d, s, k
}

func word(t *testing.T, d *Device, p backend.Ptr) uint32 {
	b := make([]byte, 4)
	if err := d.CopyDtoH(b, p); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint32(b)
}

func TestAllocatorHandsFreedAddressesOutAgain(t *testing.T) {
	d := Unwrap(Open(Options{}))
	p, _ := d.Alloc(1000)
	d.Free(p)
	if q, _ := d.Alloc(1000); q != p {
		t.Errorf("reallocation at %#x, freed %#x", q, p)
	}
	n := Unwrap(Open(Options{NoReuse: true}))
	p, _ = n.Alloc(1000)
	n.Free(p)
	if q, _ := n.Alloc(1000); q == p {
		t.Error("NoReuse handed the freed address out again")
	}
}

func TestReplayUsesCapturedArguments(t *testing.T) {
	d, s, k := setup(t, Options{})
	p, _ := d.Alloc(16)
	if err := s.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	s.Launch(k, backend.D1(1), backend.D1(4), p, int32(5))
	if word(t, d, p) != 0 {
		t.Fatal("a captured launch ran during capture")
	}
	g, err := s.EndCapture()
	if err != nil || g.Nodes() != 1 {
		t.Fatalf("end capture: %v, %d nodes", err, g.Nodes())
	}
	x, _ := g.Instantiate()
	x.Launch(s)
	x.Launch(s)
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if w := word(t, d, p); w != 10 {
		t.Errorf("after two replays the word is %d, want 10", w)
	}
	x.Destroy()
	g.Destroy()
	d.Free(p)
}

func TestSyncInvalidatesCapture(t *testing.T) {
	_, s, _ := setup(t, Options{})
	s.BeginCapture()
	if err := s.Synchronize(); backend.KindOf(err) != backend.Capture {
		t.Errorf("sync under capture: %v", err)
	}
	if _, err := s.EndCapture(); backend.KindOf(err) != backend.Capture {
		t.Errorf("end of an invalidated capture: %v", err)
	}
	if err := s.Synchronize(); err != nil {
		t.Errorf("stream unusable after the capture: %v", err)
	}
}

func TestFaultIsReportedAtSync(t *testing.T) {
	for _, sticky := range []bool{false, true} {
		d, s, k := setup(t, Options{Sticky: sticky})
		p, _ := d.Alloc(16)
		d.Free(p)
		if err := s.Launch(k, backend.D1(1), backend.D1(4), p, int32(1)); err != nil {
			t.Fatalf("launch returned %v; faults come at sync", err)
		}
		if err := s.Synchronize(); backend.KindOf(err) != backend.Fault {
			t.Errorf("sticky=%v: sync after a write to freed memory: %v", sticky, err)
		}
		_, err := d.Alloc(16)
		if sticky != (err != nil) {
			t.Errorf("sticky=%v: alloc after the fault: %v", sticky, err)
		}
	}
}

func TestVirtualMemory(t *testing.T) {
	d := Unwrap(Open(Options{}))
	base, err := d.Reserve(4 * granule)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MapFresh(base+1, granule); err == nil {
		t.Error("unaligned map accepted")
	}
	if err := d.MapFresh(base, granule); err != nil {
		t.Fatal(err)
	}
	if err := d.MapFresh(base, granule); err == nil {
		t.Error("overlapping map accepted")
	}
	if err := d.FreeReservation(base, 4*granule); err == nil {
		t.Error("freed a reservation that has a mapping")
	}
	d.Unmap(base, granule)
	if err := d.Read(base, make([]byte, 4)); backend.KindOf(err) != backend.Fault {
		t.Errorf("read of unmapped memory: %v", err)
	}
	if err := d.FreeReservation(base, 4*granule); err != nil {
		t.Fatal(err)
	}
	if d.Live().Total() != 0 {
		t.Errorf("live %+v", d.Live())
	}
	if _, ok := Open(Options{NoVirtualMemory: true}).(backend.VirtualMemory); ok {
		t.Error("NoVirtualMemory still offers virtual memory")
	}
}

// FuzzAllocator checks that live allocations never overlap and that the
// live count is exact, over any sequence of allocations and frees.
func FuzzAllocator(f *testing.F) {
	f.Add([]byte{10, 200, 3, 0x81, 50, 0x80, 7})
	f.Fuzz(func(t *testing.T, ops []byte) {
		d := Unwrap(Open(Options{}))
		var live []backend.Ptr
		sizes := map[backend.Ptr]int64{}
		for _, op := range ops {
			if op&0x80 != 0 && len(live) > 0 {
				i := int(op&0x7f) % len(live)
				if err := d.Free(live[i]); err != nil {
					t.Fatal(err)
				}
				delete(sizes, live[i])
				live = append(live[:i], live[i+1:]...)
				continue
			}
			n := int64(op&0x7f)*300 + 1
			p, err := d.Alloc(n)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range live {
				if p < q+backend.Ptr(sizes[q]) && q < p+backend.Ptr(n) {
					t.Fatalf("allocation [%#x,+%d) overlaps [%#x,+%d)", p, n, q, sizes[q])
				}
			}
			live = append(live, p)
			sizes[p] = n
		}
		if d.Live().Allocs != len(live) {
			t.Fatalf("Live().Allocs %d, want %d", d.Live().Allocs, len(live))
		}
	})
}
