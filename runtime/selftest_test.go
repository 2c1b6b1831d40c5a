package runtime

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/capguard/capguard/runtime/backend"
	"github.com/capguard/capguard/runtime/sim"
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
