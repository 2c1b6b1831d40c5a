package report

import (
	"strings"
	"testing"

	"github.com/capguard/capguard/guard"
)

func TestTextPath(t *testing.T) {
	for in, want := range map[string]string{
		"pkg/step.py":         "pkg/step.py",
		"sp ace/ünï code.py":  "sp ace/ünï code.py",
		"new\nline.py":        `"new\nline.py"`,
		"bad\xffname.py":      `"bad\xffname.py"`,
		"tab\there.py:Runner": `"tab\there.py:Runner"`,
	} {
		if got := TextPath(in); got != want {
			t.Errorf("TextPath(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestTextSummary(t *testing.T) {
	for _, c := range []struct {
		res  *guard.Result
		want string
	}{
		{&guard.Result{Files: 1}, "No capture hazards in 1 file.\n"},
		{&guard.Result{Files: 2, Errors: []guard.FileError{{Path: "p.py", Message: "binary file"}}}, "No capture hazards in 2 files; 1 file error, on stderr.\n"},
		{&guard.Result{Files: 3, Diagnostics: []*guard.Diagnostic{{Rule: &guard.Rule{ID: "CG101"}, Path: "a.py"}},
			Errors: []guard.FileError{{}, {}}}, "Found 1 finding in 3 files; 2 file errors, on stderr.\n"},
	} {
		var b strings.Builder
		if err := Text(&b, c.res); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); !strings.HasSuffix(got, c.want) {
			t.Errorf("summary %q, want %q", got, c.want)
		}
	}
}
