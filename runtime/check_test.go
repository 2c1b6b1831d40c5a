package runtime

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"github.com/cudagraph-capguard/capguard/runtime/sim"
)

// A detector without either half — canaries or comparison — must fail the
// self-test: otherwise the self-test could not catch a broken checker.
func TestSelfTestFailsWithoutCanaries(t *testing.T) {
	res, err := SelfTest(context.Background(), SelfTestOptions{
		Open: simOpener(sim.Options{}, nil), check: Options{noCanaries: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed {
		t.Fatal("self-test passed with canary checking off")
	}
	if c := res.Cases[0]; c.Passed || c.Verdict != Clean {
		t.Errorf("without canaries %s is %s (passed %v), want a missed hazard (clean)", c.Case, c.Verdict, c.Passed)
	}
}

func TestSelfTestFailsWithoutComparison(t *testing.T) {
	res, err := SelfTest(context.Background(), SelfTestOptions{
		Open: simOpener(sim.Options{}, nil), check: Options{noCompare: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed {
		t.Fatal("self-test passed with comparison off")
	}
	if c := res.Cases[1]; c.Passed || c.Verdict != Clean {
		t.Errorf("without comparison %s is %s (passed %v), want a missed hazard (clean)", c.Case, c.Verdict, c.Passed)
	}
}

// faultCase gathers through an unmasked index: variant 0 is in range, later
// variants point far outside the key pool, so the replay faults.
func faultCase() Case {
	const n = 256
	gatherRaw := func(m backend.Memory, grid, block backend.Dim, args []backend.Arg) error {
		idx, keys, out := args[0].(backend.Ptr), args[1].(backend.Ptr), args[2].(backend.Ptr)
		ib := make([]byte, 4*n)
		if err := m.Read(idx, ib); err != nil {
			return err
		}
		ob := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			j := int64(int32(binary.LittleEndian.Uint32(ib[4*i:])))
			if err := m.Read(keys+backend.Ptr(4*j), ob[4*i:4*i+4]); err != nil {
				return err
			}
		}
		return m.Write(out, ob)
	}
	return Case{
		Name:    "unmasked-gather",
		Modules: []backend.ModuleSource{{Name: "fault", Go: map[string]backend.KernelFunc{"gather": gatherRaw}}},
		Inputs: func(e *Env, batch, variant int) error {
			idx := e.Persistent("idx", 4*n)
			e.Persistent("keys", 4*n)
			e.Persistent("out", 4*n)
			b := make([]byte, 4*n)
			for i := 0; i < n; i++ {
				v := int32(i)
				if variant > 0 {
					v = 1 << 28
				}
				binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
			}
			e.Upload(idx, b)
			return e.Err()
		},
		Step: func(e *Env, batch int) error {
			idx, _ := e.Arena().Lookup("idx")
			keys, _ := e.Arena().Lookup("keys")
			out, _ := e.Arena().Lookup("out")
			e.Launch("gather", backend.D1(1), backend.D1(n), idx.Addr, keys.Addr, out.Addr)
			return e.Err()
		},
		Outputs: []Output{{Key: "out", Type: Float32, Len: func(int) int { return n }}},
	}
}

func TestFaultOnReplayIsAVerdict(t *testing.T) {
	for _, sticky := range []bool{false, true} {
		b := sim.Open(sim.Options{Sticky: sticky})
		rep, err := Check(b, faultCase(), Options{})
		if err != nil {
			t.Fatalf("sticky=%v: %v", sticky, err)
		}
		if rep.Verdict != Fault || rep.Phase != "replay" || !strings.Contains(rep.Error, "illegal address") {
			t.Errorf("sticky=%v: verdict %s in phase %q (%s), want fault in replay", sticky, rep.Verdict, rep.Phase, rep.Error)
		}
		if !sticky {
			if live := sim.Unwrap(b).Live(); live.Total() != 0 {
				t.Errorf("leaked after a fault: %+v", live)
			}
		}
	}
}

func TestCaptureErrorReleasesEverything(t *testing.T) {
	b := sim.Open(sim.Options{})
	p := PlantedCases("")[4]
	rep, err := Check(b, p.Case, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != CaptureError || rep.Phase != "capture" {
		t.Errorf("verdict %s in %q, want capture-error in capture", rep.Verdict, rep.Phase)
	}
	if live := sim.Unwrap(b).Live(); live.Total() != 0 {
		t.Errorf("leaked after a capture error: %+v", live)
	}
}

// Every planted case on every placement leaves nothing allocated.
func TestCheckReleasesEverything(t *testing.T) {
	for _, o := range []sim.Options{{}, {NoVirtualMemory: true}, {NoVirtualMemory: true, NoReuse: true}} {
		b := sim.Open(o)
		for _, p := range PlantedCases("") {
			if _, err := Check(b, p.Case, Options{}); err != nil {
				t.Fatalf("%+v %s: %v", o, p.Case.Name, err)
			}
			if live := sim.Unwrap(b).Live(); live.Total() != 0 {
				t.Errorf("%+v %s leaked: %+v", o, p.Case.Name, live)
			}
		}
	}
}

// When reallocation cannot land on the freed range the report says so; the
// simulated replay then writes unmapped memory and faults.
func TestUncoveredFreedRangeIsReported(t *testing.T) {
	b := sim.Open(sim.Options{NoVirtualMemory: true, NoReuse: true})
	rep, err := Check(b, PlantedCases("")[0].Case, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cov := rep.Batches[0].Covered
	if len(cov) != 1 || cov[0].Covered != 0 || cov[0].Method != "realloc" {
		t.Errorf("coverage %+v, want one freed range, 0 bytes covered by realloc", cov)
	}
	if rep.Verdict != Fault {
		t.Errorf("verdict %s, want fault (the replay writes unmapped memory)", rep.Verdict)
	}
}

func TestRemapCoversExactly(t *testing.T) {
	b := sim.Open(sim.Options{})
	rep, err := Check(b, PlantedCases("")[0].Case, Options{Placement: Remap})
	if err != nil {
		t.Fatal(err)
	}
	br := rep.Batches[0]
	if len(br.Covered) != 1 || br.Covered[0].Covered != br.Covered[0].Buffer.Size || br.Covered[0].Method != "remap" {
		t.Errorf("coverage %+v, want the freed range fully covered by remap", br.Covered)
	}
	if len(br.Suspects) != 1 || br.Suspects[0].Kind != "temp" || !strings.Contains(br.Suspects[0].Name, "cases.go") {
		t.Errorf("suspects %+v, want the captured temporary with its call site", br.Suspects)
	}
	if rep.CaptureSeconds <= 0 || rep.ReplaySeconds <= 0 || rep.EagerSeconds <= 0 {
		t.Errorf("times not measured: %+v", rep)
	}
}

func TestRemapNeedsVirtualMemory(t *testing.T) {
	b := sim.Open(sim.Options{NoVirtualMemory: true})
	if _, err := Check(b, PlantedCases("")[2].Case, Options{Placement: Remap}); err == nil {
		t.Error("remap on a backend without virtual memory did not fail")
	}
	if live := sim.Unwrap(b).Live(); live.Total() != 0 {
		t.Errorf("leaked: %+v", live)
	}
}

func TestToleranceAndFirstMismatch(t *testing.T) {
	br := &BatchReport{Batch: 4}
	f := func(v ...float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	compare(br, "out", Float32, 2, f(1, 2, 3.5, 4), f(1, 2.0001, 3, 4), 0.001)
	if br.Mismatched != 1 || br.MaxDiff != 0.5 || br.Compared != 4 {
		t.Errorf("got %+v", br)
	}
	if m := br.FirstMismatch; m == nil || m.Index != 2 || m.Replay != "3.5" || m.Eager != "3" || m.Variant != 2 || m.Batch != 4 {
		t.Errorf("first mismatch %+v", br.FirstMismatch)
	}
}

func TestCaseNeedsStepInputsOutputs(t *testing.T) {
	if _, err := Check(sim.Open(sim.Options{}), Case{Name: "empty"}, Options{}); err == nil {
		t.Error("an empty case did not fail")
	}
}

func TestSelfTestDevicesSim(t *testing.T) {
	res, errs := SelfTestDevices(context.Background(), SelfTestOptions{Backend: "sim"}, []int{0, 1})
	if errs[0] != nil || res[0] == nil || !res[0].Passed {
		t.Errorf("device 0: %v %+v", errs[0], res[0])
	}
	if !IsUnavailable(errs[1]) {
		t.Errorf("sim device 1: %v, want unavailable", errs[1])
	}
}

func TestCUDAUnavailableWithoutBuildTag(t *testing.T) {
	if CUDAAvailable() {
		t.Skip("cuda build")
	}
	if _, err := Open("cuda", 0); !IsUnavailable(err) || !strings.Contains(err.Error(), "build-cuda.sh") {
		t.Errorf("Open(cuda) = %v, want an unavailable error naming the build script", err)
	}
	if n, _ := ResolveBackend("auto"); n != "sim" {
		t.Errorf("auto resolves to %s without the cuda tag", n)
	}
}
