package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// verifyCLI runs `capguard verify args...` and returns stdout, the error
// message and the exit code.
func verifyCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	stdout, _, code, msg := runApp(t, append([]string{"verify"}, args...)...)
	return stdout, msg, code
}

// fakeInterpreter writes a shell script that prints one canned harness
// result for every case, whatever it is asked to run.
func fakeInterpreter(t *testing.T, result string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python")
	script := "#!/bin/sh\necho '@@capguard-verify phase capture'\necho 'user output'\necho '@@capguard-verify result " + result + "'\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	cleanResult = `{"protocol": 1, "status": "ok", "torch": "2.11.0", "device": "H200", "replays": [{"index": 0, "equal": true, "elements": 8}]}`
	staleResult = `{"protocol": 1, "status": "ok", "replays": [{"index": 0, "equal": false, "elements": 8, "mismatched": 3, "max_diff": 1.5}]}`
)

func TestVerifyCLI(t *testing.T) {
	target := "../../testdata/verify/inside_capture.py:bf16_index_logits"
	spec := "../../testdata/verify/inside_capture.toml"
	clean, stale := fakeInterpreter(t, cleanResult), fakeInterpreter(t, staleResult)
	for _, c := range []struct {
		args    []string
		code    int
		message string // in the error, for exit 2
	}{
		{[]string{target, "--inputs", spec, "--python", clean, "-q"}, 0, ""},
		{[]string{"--python", clean, target, "-i", spec, "--batch-sizes", "2,8", "-q"}, 0, ""},
		{[]string{target, "--inputs", spec, "--python", stale, "-q"}, 1, ""},
		{[]string{target, "--inputs", spec, "--python", stale, "--fixed", "-q"}, 1, ""},
		{[]string{target}, 2, "--inputs SPEC is required"},
		{[]string{}, 2, "want one TARGET"},
		{[]string{target, target, "--inputs", spec}, 2, "want one TARGET"},
		{[]string{"inside_capture.py", "--inputs", spec}, 2, "path/to/file.py:function"},
		{[]string{"../../testdata/verify/inside_capture.py:nope", "--inputs", spec}, 2, "no top-level `def nope`"},
		{[]string{target, "--inputs", "no/such/spec.toml"}, 2, "no/such/spec.toml: cannot read"},
		{[]string{target, "--inputs", spec, "--python", "/no/python3"}, 2, "python interpreter not found"},
		{[]string{target, "--inputs", spec, "--format", "yaml"}, 2, "--format"},
		{[]string{target, "--inputs", spec, "--batch-sizes", "1,x"}, 2, "batch size"},
		{[]string{target, "--inputs", spec, "--unsafe-fixes"}, 2, "only makes sense with --fixed"},
		{[]string{target, "--inputs", spec, "--bogus"}, 2, "bogus"},
	} {
		_, msg, code := verifyCLI(t, c.args...)
		if code != c.code || (c.message != "" && !strings.Contains(msg, c.message)) {
			t.Errorf("verify %s: exit %d %q, want %d with %q", strings.Join(c.args, " "), code, msg, c.code, c.message)
		}
	}
}

func TestVerifyCLIJSON(t *testing.T) {
	out, _, code := verifyCLI(t, "../../testdata/verify/prep_rebind.py:bf16_index_logits", "--inputs", "../../testdata/verify/prep_rebind.toml",
		"--python", fakeInterpreter(t, staleResult), "--format", "json", "--batch-sizes", "1,4", "-q")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Variant string
		Cases   []struct {
			BatchSize          int    `json:"batch_size"`
			Verdict            string `json:"verdict"`
			MismatchedElements int    `json:"mismatched_elements"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Variant != "original" || len(rep.Cases) != 2 || rep.Cases[1].BatchSize != 4 || rep.Cases[1].Verdict != "stale-read" || rep.Cases[1].MismatchedElements != 3 {
		t.Errorf("%+v", rep)
	}
}

func TestVerifyCLIFixedSideBySide(t *testing.T) {
	out, _, code := verifyCLI(t, "../../testdata/verify/inside_capture.py:bf16_index_logits", "--inputs", "../../testdata/verify/inside_capture.toml",
		"--python", fakeInterpreter(t, cleanResult), "--fixed", "--batch-sizes", "4", "-q")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"original vs fixed", "+++ b/", "persistent_buffer("} {
		if !strings.Contains(out, want) {
			t.Errorf("side-by-side report lacks %q:\n%s", want, out)
		}
	}
}

// torchInterpreter is a Python with torch (a CPU build is enough) for the
// dry runs, or "" (CI sets CAPGUARD_REQUIRE_TORCH=1: then a missing one fails).
func torchInterpreter(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CAPGUARD_TEST_TORCH_PYTHON"), "python3", "/usr/bin/python3"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil && exec.Command(p, "-c", "import torch").Run() == nil {
			return p
		}
	}
	if os.Getenv("CAPGUARD_REQUIRE_TORCH") == "1" {
		t.Fatal("no Python with torch, and CAPGUARD_REQUIRE_TORCH=1 (.ci/run installs python3-torch)")
	}
	t.Skip("no Python with torch (set CAPGUARD_TEST_TORCH_PYTHON)")
	return ""
}

var hazardWords = regexp.MustCompile(`\b(clean|stale-read|fault|capture-error|write-after-free)\b`)

// Every shipped case's dry run works on a CPU with torch and without
// triton: exit 0, each case says it ran or which kernel it did not run,
// and no hazard verdict is printed.
func TestVerifyDryRunShippedCases(t *testing.T) {
	py := torchInterpreter(t)
	if exec.Command(py, "-c", "import triton").Run() == nil {
		t.Log("this interpreter has triton; the dry run stubs it all the same")
	}
	specs, _ := filepath.Glob("../../testdata/verify/*.toml")
	if len(specs) < 5 {
		t.Fatalf("%d shipped cases", len(specs))
	}
	for _, spec := range specs {
		data, _ := os.ReadFile(spec)
		m := regexp.MustCompile(`(?m)^# target: (\S+)`).FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s names no target", spec)
		}
		target := strings.TrimSuffix(spec, ".toml") + ".py:" + string(m[1])
		runs := [][]string{nil}
		if strings.Contains(spec, "prep_rebind") { // and what capguard fix writes (one case: each run is a few processes)
			runs = append(runs, []string{"--fixed", "--unsafe-fixes"})
		}
		for _, extra := range runs {
			args := append([]string{target, "--inputs", spec, "--python", py, "--dry-run", "--batch-sizes", "1,4", "--replays", "2", "-q"}, extra...)
			out, msg, code := verifyCLI(t, args...)
			if code != 0 {
				t.Errorf("%s %v: exit %d %s\n%s", filepath.Base(spec), extra, code, msg, out)
				continue
			}
			lines := 0
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "batch") || regexp.MustCompile(`^  (1|4) `).MatchString(l) {
					lines++
					if hazardWords.MatchString(l) {
						t.Errorf("%s %v: a hazard verdict in a dry run: %s", filepath.Base(spec), extra, l)
					}
					if !strings.Contains(l, "not run: ") && !strings.Contains(l, "dry run ok: ") && !strings.HasPrefix(strings.TrimSpace(l), "batch  ") {
						t.Errorf("%s %v: case line says neither: %s", filepath.Base(spec), extra, l)
					}
				}
			}
			if lines < 2 {
				t.Errorf("%s %v: no case lines:\n%s", filepath.Base(spec), extra, out)
			}
		}
		out, _, _ := verifyCLI(t, target, "--inputs", spec, "--python", py, "--dry-run", "--batch-sizes", "1", "--replays", "1", "--format", "json", "-q")
		var rep struct {
			Cases []struct{ Verdict, Rule string }
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Cases) != 1 {
			t.Fatalf("%s: %v\n%s", spec, err, out)
		}
		if v := rep.Cases[0].Verdict; v != "not-run" && v != "dry-run-ok" || rep.Cases[0].Rule != "" {
			t.Errorf("%s: JSON verdict %q rule %q", filepath.Base(spec), v, rep.Cases[0].Rule)
		}
	}
}

// A target without kernels runs whole in a dry run ("dry run ok"); a spec
// that does not fit the target is an error (exit 2).
func TestVerifyDryRunOKAndBadSpec(t *testing.T) {
	py := torchInterpreter(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r.py"), []byte("import torch\nimport triton\n\ndef reader(q):\n    return q.float() * 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "r.toml"), []byte("[[arg]]\nname = \"q\"\nshape = [\"B\", 4]\ndtype = \"bfloat16\"\ninit = \"randn\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.toml"), []byte("[[arg]]\nname = \"q\"\nshape = [\"B\", 4]\ndtype = \"bfloat16\"\n\n[[arg]]\nname = \"extra\"\nshape = [2]\ndtype = \"float32\"\n"), 0o644)
	out, msg, code := verifyCLI(t, filepath.Join(dir, "r.py:reader"), "--inputs", filepath.Join(dir, "r.toml"), "--python", py, "--dry-run", "--batch-sizes", "2", "--replays", "2", "-q")
	if code != 0 || !strings.Contains(out, "dry run ok: ") || hazardWords.MatchString(out) {
		t.Errorf("exit %d %s:\n%s", code, msg, out)
	}
	if _, _, code = verifyCLI(t, filepath.Join(dir, "r.py:reader"), "--inputs", filepath.Join(dir, "bad.toml"), "--python", py, "--dry-run", "--batch-sizes", "2", "-q"); code != 2 {
		t.Errorf("a spec with an argument too many: exit %d, want 2", code)
	}
}

// Whatever the CPU reruns of a dry run compare to, the verdict is no hazard:
// a harness that reports diverging replays in a dry run gives "dry run ok"
// and exit 0 (without torch: a canned harness result).
func TestVerifyDryRunNeverAHazard(t *testing.T) {
	stale := fakeInterpreter(t, `{"protocol": 1, "status": "ok", "dry_run": true, "device": "cpu (dry run: nothing is captured)", "replays": [{"index": 0, "equal": false, "elements": 8, "mismatched": 3, "max_diff": 1.5}]}`)
	out, msg, code := verifyCLI(t, "../../testdata/verify/host_baked.py:bf16_index_logits", "--inputs", "../../testdata/verify/host_baked.toml",
		"--python", stale, "--dry-run", "--batch-sizes", "1,4", "-q")
	if code != 0 || hazardWords.MatchString(out) || strings.Count(out, "dry run ok: ") != 2 {
		t.Errorf("exit %d %s:\n%s", code, msg, out)
	}
}
