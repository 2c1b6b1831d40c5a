package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"github.com/cudagraph-capguard/capguard/runtime/sim"
)

func simOpener(o sim.Options, devs *[]*sim.Device) func() (backend.Backend, error) {
	return func() (backend.Backend, error) {
		b := sim.Open(o)
		if devs != nil {
			*devs = append(*devs, sim.Unwrap(b))
		}
		return b, nil
	}
}

func TestSelfTestSimClassifiesEveryPlantedCase(t *testing.T) {
	for _, tc := range []struct {
		name string
		sim  sim.Options
		want Placement
	}{
		{"remap", sim.Options{}, Remap},
		{"realloc", sim.Options{NoVirtualMemory: true}, Realloc},
		// Work runs only when the stream is waited for, as on a GPU that
		// other processes keep busy: the checker must wait before it frees.
		{"remap-async", sim.Options{Async: true, Sticky: true}, Remap},
		{"realloc-async", sim.Options{NoVirtualMemory: true, Async: true, Sticky: true}, Realloc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var devs []*sim.Device
			res, err := SelfTest(context.Background(), SelfTestOptions{Open: simOpener(tc.sim, &devs)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Placement != tc.want {
				t.Errorf("placement %s, want %s", res.Placement, tc.want)
			}
			for _, c := range res.Cases {
				t.Logf("%s (expected %s)", c.Summary(), c.Expected)
				if !c.Passed || c.Verdict != c.Expected {
					t.Errorf("case %s: verdict %s, want %s", c.Case, c.Verdict, c.Expected)
				}
			}
			if !res.Passed {
				t.Error("self-test failed")
			}
			if len(res.Cases) != 5 {
				t.Errorf("%d cases, want 5", len(res.Cases))
			}
			for _, d := range devs {
				if live := d.Live(); live.Total() != 0 {
					t.Errorf("leaked after the self-test: %+v", live)
				}
			}
			if _, err := json.Marshal(res); err != nil {
				t.Errorf("result does not marshal: %v", err)
			}
		})
	}
}

// A case that faults when the device cannot be opened again still gives a
// result: the cases that ran (the faulted one among them), and why the rest
// did not.
func TestSelfTestReportsAFaultItCannotRecoverFrom(t *testing.T) {
	opens := 0
	open := func() (backend.Backend, error) {
		opens++
		if opens > 1 {
			return nil, &backend.Error{Op: "cuCtxCreate", Code: 700, Kind: backend.Fault, Msg: "illegal address"}
		}
		return sim.Open(sim.Options{Async: true, Sticky: true}), nil
	}
	planted := PlantedCases("")
	res, err := selfTestWith(context.Background(), SelfTestOptions{Open: open}, []Planted{planted[0], faultingCase(), planted[2]})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || len(res.Cases) != 2 || res.Cases[1].Verdict != Fault || !strings.Contains(res.Incomplete, "case reads-unmapped faulted") {
		t.Fatalf("passed %v, %d cases, incomplete %q", res.Passed, len(res.Cases), res.Incomplete)
	}
}

// faultingCase's step reads an address nothing maps.
func faultingCase() Planted {
	p := PlantedCases("")[2]
	p.Case.Name = "reads-unmapped"
	p.Case.Step = func(e *Env, batch int) error {
		gather(e, backend.Ptr(0xdead0000), batch)
		return e.Err()
	}
	return p
}
