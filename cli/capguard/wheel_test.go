package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The wheel: scripts/build-wheel.sh builds it, pip installs it into a fresh
// virtual environment (offline: the wheel has no dependencies), and the
// installed `capguard` and `python -m capguard` both run. Skipped where
// python3 cannot make a virtual environment, unless
// CAPGUARD_REQUIRE_VENV=1 (then it fails).
func TestWheelInstallsAndRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the static binary")
	}
	probe := filepath.Join(t.TempDir(), "probe")
	if out, err := exec.Command("python3", "-m", "venv", probe).CombinedOutput(); err != nil {
		if os.Getenv("CAPGUARD_REQUIRE_VENV") == "1" {
			t.Fatalf("python3 -m venv fails and CAPGUARD_REQUIRE_VENV=1: %v\n%s", err, out)
		}
		t.Skipf("python3 -m venv is not available: %v", err)
	}
	dist := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "build-wheel.sh"), dist)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build-wheel.sh: %v\n%s", err, out)
	}
	wheels, _ := filepath.Glob(filepath.Join(dist, "capguard-*-py3-none-manylinux_2_17_x86_64.whl"))
	if len(wheels) != 1 {
		t.Fatalf("wheels in dist: %v", wheels)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	run := func(name string, args ...string) (string, int) {
		t.Helper()
		c := exec.Command(name, args...)
		c.Env = append(os.Environ(), "PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "NO_COLOR=1")
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(out), code
	}
	if out, code := run("python3", "-m", "venv", venv); code != 0 {
		t.Fatalf("venv: %s", out)
	}
	if out, code := run(filepath.Join(venv, "bin", "pip"), "install", "--no-index", wheels[0]); code != 0 {
		t.Fatalf("pip install: %s", out)
	}
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "step.py"), []byte(syncStep), 0o644)
	out, code := run(filepath.Join(venv, "bin", "capguard"), "check", "--no-cache", "--output-format", "concise", filepath.Join(proj, "step.py"))
	if code != 1 || !strings.Contains(out, "step.py:5:13: CG101") {
		t.Errorf("installed capguard check: exit %d\n%s", code, out)
	}
	out, code = run(filepath.Join(venv, "bin", "python"), "-m", "capguard", "--version")
	if code != 0 || !strings.HasPrefix(out, "capguard ") {
		t.Errorf("python -m capguard --version: exit %d %s", code, out)
	}
}
