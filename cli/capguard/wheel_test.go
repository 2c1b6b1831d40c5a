package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	wheels := []string{buildWheel(t)}
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

var (
	wheelOnce sync.Once
	wheelPath string
	wheelErr  error
)

// buildWheel runs scripts/build-wheel.sh once per test binary and returns
// the wheel.
func buildWheel(t *testing.T) string {
	t.Helper()
	wheelOnce.Do(func() {
		// In the tests' cache folder, which TestMain removes at the end.
		dist, err := os.MkdirTemp(os.Getenv("CAPGUARD_CACHE_DIR"), "capguard-wheel")
		if err != nil {
			wheelErr = err
			return
		}
		cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "build-wheel.sh"), dist)
		if out, err := cmd.CombinedOutput(); err != nil {
			wheelErr = fmt.Errorf("build-wheel.sh: %v\n%s", err, out)
			return
		}
		wheels, _ := filepath.Glob(filepath.Join(dist, "cudagraph_capguard-*-py3-none-manylinux_2_17_x86_64.whl"))
		if len(wheels) != 1 {
			wheelErr = fmt.Errorf("wheels in dist: %v", wheels)
			return
		}
		wheelPath = wheels[0]
	})
	if wheelErr != nil {
		t.Fatal(wheelErr)
	}
	return wheelPath
}

// The pre-commit variant that installs the wheel (language: python)
// instead of compiling Go: a local hook whose additional_dependencies is
// the wheel. pip runs offline here (no index, no build isolation: the
// placeholder package pre-commit installs for a local hook builds with the
// environment's own setuptools).
func TestPreCommitPythonHook(t *testing.T) {
	pc, err := exec.LookPath("pre-commit")
	if err != nil {
		if os.Getenv("CAPGUARD_REQUIRE_PRECOMMIT") == "1" {
			t.Fatal("pre-commit is not installed and CAPGUARD_REQUIRE_PRECOMMIT=1 (.ci/run installs it)")
		}
		t.Skip("pre-commit is not installed (apt-get install pre-commit)")
	}
	if testing.Short() {
		t.Skip("builds the wheel")
	}
	wheel := buildWheel(t)
	proj := t.TempDir()
	git(t, proj, "init", "-q")
	os.WriteFile(filepath.Join(proj, "step.py"), []byte(syncStep), 0o644)
	os.WriteFile(filepath.Join(proj, ".pre-commit-config.yaml"), []byte(`repos:
- repo: local
  hooks:
  - id: capguard-check
    name: capguard check
    entry: capguard check --no-progress
    language: python
    additional_dependencies: ["`+wheel+`"]
    types_or: [python, pyi, toml]
    pass_filenames: false
    require_serial: true
`), 0o644)
	git(t, proj, "add", "-A")
	cmd := exec.Command(pc, "run", "--all-files")
	cmd.Dir = proj
	cmd.Env = append(os.Environ(), "PRE_COMMIT_HOME="+t.TempDir(), "PIP_NO_INDEX=1", "PIP_NO_BUILD_ISOLATION=0",
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "CAPGUARD_CACHE_DIR=", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(string(out), "step.py:5:13: CG101") {
		t.Fatalf("pre-commit with the wheel hook: exit %d\n%s", code, out)
	}
}
