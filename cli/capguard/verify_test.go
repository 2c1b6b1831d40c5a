package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
