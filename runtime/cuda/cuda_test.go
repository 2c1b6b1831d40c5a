//go:build cuda

package cuda

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"github.com/cudagraph-capguard/capguard/templates"
)

func open(t *testing.T) backend.Backend {
	t.Helper()
	t0 := time.Now()
	b, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("open %s: %.1f ms", b.Device(), 1e3*time.Since(t0).Seconds())
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return b
}

func ptx(t *testing.T) string {
	if p := os.Getenv("CAPGUARD_PTX"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return templates.SelfTestPTX
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCopyRoundTrip(t *testing.T) {
	b := open(t)
	p, err := b.Alloc(4096)
	must(t, err)
	defer b.Free(p)
	in := make([]byte, 4096)
	for i := range in {
		in[i] = byte(i * 7)
	}
	must(t, b.CopyHtoD(p, in))
	out := make([]byte, 4096)
	must(t, b.CopyDtoH(out, p))
	if string(in) != string(out) {
		t.Fatal("round trip changed the bytes")
	}
}

// TestCaptureReplaysWithCapturedArguments captures the conversion, changes the
// input, replays, and checks the replay converted the new input.
func TestCaptureReplaysWithCapturedArguments(t *testing.T) {
	b := open(t)
	const n = 4096
	mod, err := b.LoadModule(backend.ModuleSource{Name: "selftest", PTX: ptx(t)})
	must(t, err)
	defer mod.Unload()
	cvt, err := mod.Function("cvt_i64_i32")
	must(t, err)
	s, err := b.NewStream()
	must(t, err)
	defer s.Destroy()
	src, _ := b.Alloc(8 * n)
	dst, _ := b.Alloc(4 * n)
	defer b.Free(src)
	defer b.Free(dst)
	write := func(base int64) {
		buf := make([]byte, 8*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(base+int64(i)))
		}
		must(t, b.CopyHtoD(src, buf))
	}
	write(1)
	must(t, s.BeginCapture())
	must(t, s.Launch(cvt, backend.D1(n/256), backend.D1(256), src, dst, int32(n)))
	g, err := s.EndCapture()
	must(t, err)
	defer g.Destroy()
	if g.Nodes() != 1 {
		t.Errorf("graph has %d nodes, want 1", g.Nodes())
	}
	x, err := g.Instantiate()
	must(t, err)
	defer x.Destroy()
	write(1000)
	must(t, x.Launch(s))
	must(t, s.Synchronize())
	out := make([]byte, 4*n)
	must(t, b.CopyDtoH(out, dst))
	for i := 0; i < n; i++ {
		if got := int32(binary.LittleEndian.Uint32(out[4*i:])); got != int32(1000+i) {
			t.Fatalf("dst[%d] = %d, want %d", i, got, 1000+i)
		}
	}
}

func TestSyncUnderCaptureIsCaptureError(t *testing.T) {
	b := open(t)
	s, err := b.NewStream()
	must(t, err)
	defer s.Destroy()
	must(t, s.BeginCapture())
	err = s.Synchronize()
	if backend.KindOf(err) != backend.Capture {
		t.Errorf("sync under capture: %v (kind %s), want a capture error", err, backend.KindOf(err))
	}
	_, err = s.EndCapture()
	if backend.KindOf(err) != backend.Capture {
		t.Errorf("end capture: %v (kind %s), want a capture error", err, backend.KindOf(err))
	}
	// The stream is usable again.
	must(t, s.Synchronize())
}

// TestRemapSameAddress maps, unmaps and maps fresh memory at one address.
func TestRemapSameAddress(t *testing.T) {
	b := open(t)
	vm, ok := b.(backend.VirtualMemory)
	if !ok {
		t.Skip("device has no virtual memory management")
	}
	g := vm.Granularity()
	t.Logf("granularity %d bytes", g)
	base, err := vm.Reserve(4 * g)
	must(t, err)
	defer vm.FreeReservation(base, 4*g)
	p := base + backend.Ptr(g)
	must(t, vm.MapFresh(p, g))
	s, err := b.NewStream()
	must(t, err)
	defer s.Destroy()
	must(t, s.MemsetD32(p, 0x12345678, g/4))
	must(t, s.Synchronize())
	must(t, vm.Unmap(p, g))
	must(t, vm.MapFresh(p, g))
	must(t, s.MemsetD32(p, 0xDEADBEEF, g/4))
	must(t, s.Synchronize())
	w := make([]byte, 8)
	must(t, b.CopyDtoH(w, p+backend.Ptr(g-8)))
	if binary.LittleEndian.Uint32(w[4:]) != 0xDEADBEEF {
		t.Errorf("fresh mapping reads %#x", binary.LittleEndian.Uint32(w[4:]))
	}
	must(t, vm.Unmap(p, g))
}

// TestFaultIsReported launches a kernel on an unmapped address: the error
// must come back as a Fault, not crash. Run it last and alone: the fault is
// sticky in this context.
func TestFaultIsReported(t *testing.T) {
	b, err := Open(0)
	must(t, err)
	defer func() { t.Logf("close after the fault: %v", b.Close()) }()
	mod, err := b.LoadModule(backend.ModuleSource{Name: "selftest", PTX: ptx(t)})
	must(t, err)
	cvt, err := mod.Function("cvt_i64_i32")
	must(t, err)
	s, err := b.NewStream()
	must(t, err)
	err = s.Launch(cvt, backend.D1(1), backend.D1(32), backend.Ptr(0x1000), backend.Ptr(0x2000), int32(32))
	if err == nil {
		err = s.Synchronize()
	}
	t.Logf("fault: %v", err)
	if backend.KindOf(err) != backend.Fault {
		t.Errorf("launch on an unmapped address: %v (kind %s), want a fault", err, backend.KindOf(err))
	}
}
