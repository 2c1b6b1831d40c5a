package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/runtime"
)

// runSelftestArgs runs capguard with args and returns stdout, the exit code
// and, when it is not 0, the error main would print.
func runSelftestArgs(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	stdout, _, code, msg := runApp(t, args...)
	if code != 0 {
		return stdout, code, errors.New(msg)
	}
	return stdout, 0, nil
}

func TestSelftestSimJSON(t *testing.T) {
	out, code, err := runSelftestArgs(t, "selftest", "--backend", "sim", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	var res struct {
		Backend string
		Device  string
		Cases   []struct{ Name, Verdict, Expected string }
		Passed  bool
		Seconds float64
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if res.Backend != "sim" || !res.Passed || len(res.Cases) != 5 || res.Seconds <= 0 {
		t.Errorf("result %+v", res)
	}
	for _, c := range res.Cases {
		if c.Verdict != c.Expected {
			t.Errorf("%s: %s, expected %s", c.Name, c.Verdict, c.Expected)
		}
	}
}

func TestSelftestText(t *testing.T) {
	out, code, _ := runSelftestArgs(t, "selftest", "--backend", "sim", "--placement", "realloc")
	if code != 0 || !strings.Contains(out, "self-test passed") || !strings.Contains(out, "write-after-free") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestSelftestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"selftest", "--format", "xml"}, 2, "--format"},
		{[]string{"selftest", "--backend", "rocm"}, 2, "unknown backend"},
		{[]string{"selftest", "--backend", "sim", "--device", "x"}, 2, "--device"},
		{[]string{"selftest", "--backend", "sim", "--device", "3"}, 2, "one device"},
		{[]string{"selftest", "--backend", "sim", "--placement", "lucky"}, 2, "--placement"},
		{[]string{"selftest", "--backend", "sim", "--ptx", "/nonexistent.ptx"}, 2, "nonexistent"},
	} {
		_, code, err := runSelftestArgs(t, tc.args...)
		if code != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: exit %d, %v; want exit %d mentioning %q", tc.args, code, err, tc.code, tc.msg)
		}
	}
}

func TestSelftestAllSimDevices(t *testing.T) {
	out, code, err := runSelftestArgs(t, "selftest", "--backend", "sim", "--device", "all", "--format", "json")
	if code != 0 || !strings.Contains(out, `"devices"`) {
		t.Errorf("exit %d, %v:\n%s", code, err, out)
	}
}

// A run on the simulator says so on its verdict line and in JSON; with an
// NVIDIA driver present and no cuda backend built, it warns that no GPU
// was tested.
func TestSelftestSaysSimulated(t *testing.T) {
	if cudaBuild() {
		t.Skip("a cuda build runs the GPU")
	}
	t.Setenv("CAPGUARD_NVIDIA_DRIVER", "0")
	out, stderr, code, _ := runApp(t, "selftest")
	if code != 0 || !strings.Contains(out, "self-test passed on the simulator (no GPU was tested) in ") || strings.Contains(stderr, "warning") {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
	t.Setenv("CAPGUARD_NVIDIA_DRIVER", "1")
	out, stderr, code, _ = runApp(t, "selftest", "--format", "json")
	var res struct {
		Simulated bool   `json:"simulated"`
		GPUTested bool   `json:"gpu_tested"`
		Warning   string `json:"warning"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("exit %d %v\n%s", code, err, out)
	}
	if !res.Simulated || res.GPUTested || !strings.Contains(res.Warning, "no GPU was tested") ||
		!strings.Contains(stderr, "warning: this machine has an NVIDIA driver but this capguard was built without the cuda backend") {
		t.Errorf("%+v\n%s", res, stderr)
	}
	// Asked for the simulator: no warning.
	if _, stderr, _, _ = runApp(t, "selftest", "--backend", "sim"); strings.Contains(stderr, "warning") {
		t.Errorf("--backend sim warned: %s", stderr)
	}
}

func cudaBuild() bool {
	name, _ := runtime.ResolveBackend("auto")
	return name == "cuda"
}
