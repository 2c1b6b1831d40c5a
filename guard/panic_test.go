package guard

import (
	"strings"
	"testing"
)

// TestPanicIsFileError: a panic while checking one file is that file's
// error (naming where it was raised); the other files' findings are still
// reported and the run ends normally.
func TestPanicIsFileError(t *testing.T) {
	rule := registry["CG101"]
	orig := rule.Run
	rule.Run = func(p *Pass) {
		if p.File.Path == "boom.py" {
			var m map[string]int
			m["x"] = 1 // a nil map write: a runtime panic, as a bug would raise
		}
		orig(p)
	}
	defer func() { rule.Run = orig }()
	src := stressSource("x")
	res, err := Run(Options{Paths: []string{"boom.py", "fine.py"},
		Overlay: map[string][]byte{"boom.py": src, "fine.py": src}, Config: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
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
