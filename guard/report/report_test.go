package report

import "testing"

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
