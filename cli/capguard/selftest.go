package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/cudagraph-capguard/capguard/runtime"
	"github.com/urfave/cli/v2"
)

func selftestCommand() *cli.Command {
	return &cli.Command{
		Name:  "selftest",
		Usage: "run the runtime checker's planted cases on a GPU (or the simulator)",
		Description: `Runs the planted capture hazards through the runtime checker and checks that each
gets its expected verdict: a temporary converted inside the capture and freed after
(write-after-free), a temporary converted before the capture (stale-read), a persistent
buffer refreshed inside the capture (clean), several batch sizes sharing one persistent
buffer (clean), and a sync inside the capture (capture-error).

Exit status: 0 every case got its expected verdict, 1 a case did not,
2 the self-test could not run (no cuda backend in this build, no driver, no device).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "backend", Value: "auto", Usage: "auto (cuda in a cuda build, else sim), sim or cuda"},
			&cli.StringFlag{Name: "device", Value: "0", Usage: "device index, or all (one goroutine and OS thread per device)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text or json"},
			&cli.StringFlag{Name: "placement", Value: "auto", Usage: "how freed temporaries are covered by canaries: auto, remap (exact, virtual memory) or realloc"},
			&cli.StringFlag{Name: "ptx", Usage: "load the self-test kernels from this PTX file instead of the embedded one"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("selftest takes no arguments (got %q)", c.Args().First())
			}
			return runSelftest(c, c.App.Writer)
		},
	}
}

func runSelftest(c *cli.Context, w io.Writer) error {
	format := c.String("format")
	if format != "text" && format != "json" {
		return usageError("--format must be text or json, not %q", format)
	}
	backendName, err := runtime.ResolveBackend(c.String("backend"))
	if err != nil {
		return usageError("%v", err)
	}
	placement := runtime.Placement(c.String("placement"))
	switch placement {
	case runtime.Auto, runtime.Remap, runtime.Realloc:
	default:
		return usageError("--placement must be auto, remap or realloc, not %q", placement)
	}
	opt := runtime.SelfTestOptions{Backend: backendName, Placement: placement}
	if p := c.String("ptx"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return exitCode(2, fmt.Errorf("selftest: %w", err))
		}
		opt.PTX = string(b)
	}
	var devices []int
	all := c.String("device") == "all"
	if d := c.String("device"); all {
		n, err := runtime.Devices(backendName)
		if err != nil {
			return exitCode(2, fmt.Errorf("selftest: %w", err))
		}
		for i := 0; i < n; i++ {
			devices = append(devices, i)
		}
	} else {
		i, err := strconv.Atoi(d)
		if err != nil || i < 0 {
			return usageError("--device must be a device index or all, not %q", d)
		}
		devices = []int{i}
	}

	// A run on the simulator proves the detector's logic, not a GPU: say
	// so, and warn where a GPU is there to test but this build cannot.
	simulated := backendName == "sim"
	gpuWarning := ""
	if simulated && c.String("backend") != "sim" && nvidiaDriverPresent() {
		gpuWarning = "this machine has an NVIDIA driver but this capguard was built without the cuda backend: no GPU was tested (build with `bash scripts/build-cuda.sh` and run that binary's selftest)"
		fmt.Fprintf(c.App.ErrWriter, "capguard: warning: %s\n", gpuWarning)
	}
	t0 := time.Now()
	results, errs := runtime.SelfTestDevices(c.Context, opt, devices)
	elapsed := time.Since(t0).Seconds()

	code := 0
	var msgs []string
	for i, err := range errs {
		if err != nil {
			code = 2
			msgs = append(msgs, fmt.Sprintf("device %d: %v", devices[i], err))
		} else if !results[i].Passed && code == 0 {
			code = 1
		}
	}
	if format == "json" {
		var err error
		switch {
		case !all && results[0] != nil:
			err = writeJSON(w, struct {
				*runtime.SelfTestResult
				Simulated bool   `json:"simulated"`
				GPUTested bool   `json:"gpu_tested"`
				Warning   string `json:"warning,omitempty"`
			}{results[0], simulated, !simulated, gpuWarning})
		case all:
			multi := struct {
				Backend   string                    `json:"backend"`
				Devices   []*runtime.SelfTestResult `json:"devices"`
				Errors    []string                  `json:"errors,omitempty"`
				Passed    bool                      `json:"passed"`
				Seconds   float64                   `json:"seconds"`
				Simulated bool                      `json:"simulated"`
				GPUTested bool                      `json:"gpu_tested"`
				Warning   string                    `json:"warning,omitempty"`
			}{backendName, nil, msgs, code == 0, elapsed, simulated, !simulated, gpuWarning}
			for _, r := range results {
				if r != nil {
					multi.Devices = append(multi.Devices, r)
				}
			}
			err = writeJSON(w, multi)
		}
		if err != nil {
			return exitCode(2, err)
		}
	} else {
		for _, r := range results {
			if r != nil {
				printSelftest(w, r)
			}
		}
	}
	switch code {
	case 2:
		return exitCode(2, fmt.Errorf("selftest could not run: %s", strings.Join(msgs, "; ")))
	case 1:
		return exitCode(1, fmt.Errorf("selftest FAILED: a planted case did not get its expected verdict"))
	}
	return nil
}

func printSelftest(w io.Writer, r *runtime.SelfTestResult) {
	fmt.Fprintf(w, "backend %s, device %s, placement %s\n", r.Backend, r.Device, r.Placement)
	for _, c := range r.Cases {
		mark := "ok  "
		if !c.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %-26s %-17s expected %-17s %s\n", mark, c.Case, c.Verdict, c.Expected, evidence(c.Report))
	}
	if r.Incomplete != "" {
		fmt.Fprintf(w, "  incomplete: %s\n", r.Incomplete)
	}
	status := "passed"
	if !r.Passed {
		status = "FAILED"
	}
	if r.Backend == "sim" {
		status += " on the simulator (no GPU was tested)"
	}
	fmt.Fprintf(w, "self-test %s in %.3f s (device open %.3f s)\n", status, r.Seconds, r.OpenSeconds)
}

// nvidiaDriverPresent reports whether this machine has an NVIDIA driver:
// its /proc entry, or nvidia-smi on the PATH.
func nvidiaDriverPresent() bool {
	if v := os.Getenv("CAPGUARD_NVIDIA_DRIVER"); v != "" { // tests: "1" present, "0" absent
		return v == "1"
	}
	if _, err := os.Stat("/proc/driver/nvidia"); err == nil {
		return true
	}
	_, err := exec.LookPath("nvidia-smi")
	return err == nil
}

// evidence is the short proof behind a verdict.
func evidence(r *runtime.Report) string {
	var parts []string
	if r.Mismatched > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d differ, max diff %g", r.Mismatched, r.Compared(), r.MaxDiff))
	}
	if r.CanaryChanged > 0 {
		parts = append(parts, fmt.Sprintf("%d canary words overwritten", r.CanaryChanged))
	}
	if s := r.Suspects(); len(s) > 0 {
		names := make([]string, len(s))
		for i, b := range s {
			names[i] = b.Name
		}
		parts = append(parts, "suspects "+strings.Join(names, ","))
	}
	if r.Error != "" {
		parts = append(parts, r.Phase+": "+r.Error)
	}
	if len(parts) == 0 && r.Verdict == runtime.Clean {
		parts = append(parts, fmt.Sprintf("%d elements equal, canaries intact", r.Compared()))
	}
	return strings.Join(parts, "; ")
}
