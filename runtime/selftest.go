package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

// SelfTestOptions configure SelfTest.
type SelfTestOptions struct {
	// Backend is "auto" (default: cuda in a cuda build, else sim), "sim" or
	// "cuda".
	Backend string
	// Device is the device index.
	Device int
	// Placement of temporaries (default Auto: remap where the backend has
	// virtual memory).
	Placement Placement
	// PTX replaces the committed self-test PTX when not empty.
	PTX string
	// Open, when set, opens the backend instead of Backend and Device.
	Open func() (backend.Backend, error)

	check Options // detector switches, for tests
}

// CaseResult is one planted case's outcome; its Report is the evidence.
type CaseResult struct {
	*Report
	Expected Verdict `json:"expected"`
	Passed   bool    `json:"passed"`
	Why      string  `json:"planted"`
}

// SelfTestResult is the outcome of SelfTest on one device.
type SelfTestResult struct {
	Backend     string       `json:"backend"`
	Device      string       `json:"device"`
	DeviceIndex int          `json:"device_index"`
	Placement   Placement    `json:"placement"`
	Cases       []CaseResult `json:"cases"`
	Passed      bool         `json:"passed"`
	// Seconds is the whole self-test, context creation included;
	// OpenSeconds is the part that opened the device (context creation).
	Seconds     float64 `json:"seconds"`
	OpenSeconds float64 `json:"open_seconds"`
	// Incomplete says why the cases after a fault did not run (the device
	// could not be opened again); Passed is then false.
	Incomplete string `json:"incomplete,omitempty"`
}

// SelfTest runs the planted cases on one device and says whether every one
// got its expected verdict: a detector that misses a planted hazard fails.
// It is meant for a server's start-up (a fraction of a second on an H200,
// context creation included). The error is for a self-test that could not
// run (IsUnavailable: no driver, no device, no cuda build); a case that got
// the wrong verdict is not an error, Passed is false.
func SelfTest(ctx context.Context, opt SelfTestOptions) (*SelfTestResult, error) {
	return selfTestWith(ctx, opt, PlantedCases(opt.PTX))
}

func selfTestWith(ctx context.Context, opt SelfTestOptions, cases []Planted) (*SelfTestResult, error) {
	t0 := time.Now()
	open := opt.Open
	if open == nil {
		open = func() (backend.Backend, error) { return Open(opt.Backend, opt.Device) }
	}
	b, err := open()
	if err != nil {
		return nil, err
	}
	res := &SelfTestResult{Backend: b.Name(), Device: b.Device(), DeviceIndex: opt.Device,
		OpenSeconds: time.Since(t0).Seconds(), Passed: true}
	defer func() {
		if b != nil {
			b.Close()
		}
	}()
	check := opt.check
	check.Placement = opt.Placement
	for _, p := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep, err := Check(b, p.Case, check)
		if err != nil {
			return nil, fmt.Errorf("self-test case %s: %w", p.Case.Name, err)
		}
		res.Placement = rep.Placement
		cr := CaseResult{Report: rep, Expected: p.Expected, Passed: rep.Verdict == p.Expected, Why: p.Why}
		res.Passed = res.Passed && cr.Passed
		res.Cases = append(res.Cases, cr)
		if rep.Verdict == Fault {
			// A device fault is sticky on CUDA: start the next case afresh.
			b.Close()
			if b, err = open(); err != nil {
				// Report what ran (the faulted case among it), not nothing.
				b = nil
				res.Passed = false
				res.Incomplete = fmt.Sprintf("case %s faulted and the device could not be opened again (%v): the later cases did not run", p.Case.Name, err)
				break
			}
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	return res, nil
}

// SelfTestDevices runs SelfTest on each device at once, one goroutine with
// a locked OS thread per device, and returns the results in device order.
// errs[i] is device i's error.
func SelfTestDevices(ctx context.Context, opt SelfTestOptions, devices []int) ([]*SelfTestResult, []error) {
	res := make([]*SelfTestResult, len(devices))
	errs := make([]error, len(devices))
	var wg sync.WaitGroup
	for i, d := range devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			goruntime.LockOSThread()
			defer goruntime.UnlockOSThread()
			o := opt
			o.Device = d
			res[i], errs[i] = SelfTest(ctx, o)
		}()
	}
	wg.Wait()
	return res, errs
}
