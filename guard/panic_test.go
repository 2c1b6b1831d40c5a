package guard

import (
	"strings"
	"testing"
)

// panicIn makes CG101 panic (a nil map write: a runtime panic, as a bug
// would raise) in the passes when picks; the returned function restores it.
func panicIn(when func(*Pass) bool) (restore func()) {
	rule := registry["CG101"]
	orig := rule.Run
	rule.Run = func(p *Pass) {
		if when(p) {
			var m map[string]int
			m["x"] = 1
		}
		orig(p)
	}
	return func() { rule.Run = orig }
}

// runBoomFine checks src as two files, boom.py and fine.py.
func runBoomFine(t *testing.T, src []byte) *Result {
	t.Helper()
	res, err := Run(Options{Paths: []string{"boom.py", "fine.py"},
		Overlay: map[string][]byte{"boom.py": src, "fine.py": src}, Config: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPanicIsFileError: a panic while checking one file is that file's
// error (naming where it was raised); the other files' findings are still
// reported and the run ends normally.
func TestPanicIsFileError(t *testing.T) {
	defer panicIn(func(p *Pass) bool { return p.File.Path == "boom.py" })()
	res := runBoomFine(t, stressSource("x"))
	if len(res.Errors) != 1 || res.Errors[0].Path != "boom.py" ||
		!strings.Contains(res.Errors[0].Message, "internal error") || !strings.Contains(res.Errors[0].Message, "panic_test.go:") {
		t.Fatalf("errors %v, want one internal error for boom.py naming where it was raised", res.Errors)
	}
	var paths []string
	for _, d := range res.Diagnostics {
		paths = append(paths, d.Path)
	}
	if len(paths) == 0 || strings.Contains(strings.Join(paths, " "), "boom.py") {
		t.Errorf("findings in %v, want fine.py's only", paths)
	}
}

// TestRegionPanicIsFileError: a panic while checking a capture region
// (the regions are checked on every core) is one error of the region's
// file, naming where it was raised; the other file's region findings are
// reported.
func TestRegionPanicIsFileError(t *testing.T) {
	defer panicIn(func(p *Pass) bool { return p.Region != nil && p.File.Path == "boom.py" })()
	res := runBoomFine(t, []byte("import torch\n\n\ndef step(x, g):\n    with torch.cuda.graph(g):\n        y = x.item()\n    with torch.cuda.graph(g):\n        z = x.item()\n    return y + z\n"))
	if len(res.Errors) != 1 || res.Errors[0].Path != "boom.py" ||
		!strings.Contains(res.Errors[0].Message, "checking a region of") || !strings.Contains(res.Errors[0].Message, "panic_test.go:") {
		t.Fatalf("errors %v, want one region error for boom.py naming where it was raised", res.Errors)
	}
	fine := 0
	for _, d := range res.Diagnostics {
		if d.Path == "boom.py" && d.Rule.ID == "CG101" {
			t.Errorf("boom.py's CG101 finding was kept: %s", d.Message)
		}
		if d.Path == "fine.py" && d.Rule.ID == "CG101" {
			fine++
		}
	}
	if fine != 2 {
		t.Errorf("fine.py has %d CG101 findings, want 2 (one a region)", fine)
	}
}
