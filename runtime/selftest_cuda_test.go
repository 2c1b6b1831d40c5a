//go:build cuda

package runtime

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// ptxOverride lets a GPU run test freshly compiled PTX (CAPGUARD_PTX=file).
func ptxOverride(t *testing.T) string {
	p := os.Getenv("CAPGUARD_PTX")
	if p == "" {
		return ""
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernels from %s", p)
	return string(b)
}

func TestSelfTestCUDA(t *testing.T) {
	ptx := ptxOverride(t)
	for _, p := range []Placement{Remap, Realloc} {
		t.Run(string(p), func(t *testing.T) {
			t0 := time.Now()
			res, err := SelfTest(context.Background(), SelfTestOptions{Backend: "cuda", Placement: p, PTX: ptx})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s, %.3f s (open %.3f s, measured %.3f s)", res.Device, res.Placement, res.Seconds, res.OpenSeconds, time.Since(t0).Seconds())
			for _, c := range res.Cases {
				t.Logf("  %s [expected %s] capture %.2f ms, replay %.2f ms, eager %.2f ms",
					c.Summary(), c.Expected, 1e3*c.CaptureSeconds, 1e3*c.ReplaySeconds, 1e3*c.EagerSeconds)
				for _, b := range c.Batches {
					for _, cv := range b.Covered {
						t.Logf("    batch %d: freed %s covered %d/%d bytes by %s", b.Batch, cv.Buffer, cv.Covered, cv.Buffer.Size, cv.Method)
					}
				}
			}
			if p == Realloc {
				// Reallocation may not land on the freed address; only a
				// covered write-after-free case is held to its verdict.
				for _, c := range res.Cases {
					full := true
					for _, b := range c.Batches {
						for _, cv := range b.Covered {
							full = full && cv.Covered == cv.Buffer.Size
						}
					}
					if c.Verdict != c.Expected && (c.Expected != WriteAfterFree || full) {
						t.Errorf("%s: %s, want %s", c.Case, c.Verdict, c.Expected)
					}
				}
				return
			}
			if !res.Passed {
				b, _ := json.MarshalIndent(res, "", "  ")
				t.Fatalf("self-test failed:\n%s", b)
			}
		})
	}
}

func TestCheckReleasesCUDA(t *testing.T) {
	// Repeating the self-test must not grow device memory: everything a case
	// made is released.
	b, err := Open("cuda", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := 0; i < 3; i++ {
		for _, p := range PlantedCases(ptxOverride(t)) {
			rep, err := Check(b, p.Case, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != p.Expected {
				t.Errorf("round %d %s: %s, want %s", i, p.Case.Name, rep.Verdict, p.Expected)
			}
		}
	}
}
