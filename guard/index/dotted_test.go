package index

import (
	"regexp"
	"testing"
)

// dottedSpec is what IsDottedName accepts, as a regular expression.
var dottedSpec = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$`)

func TestIsDottedName(t *testing.T) {
	for s, want := range map[string]bool{
		"pkg.models.llama.LlamaForCausalLM": true,
		"a.b":                               true,
		"_x.y_2":                            true,
		"torch":                             false,
		"":                                  false,
		".rel.mod":                          false,
		"pkg.":                              false,
		"pkg..mod":                          false,
		"pkg.2nd":                           false,
		"see pkg.mod":                       false,
		"pkg.mod.":                          false,
		"config.json":                       true, // a file name reads as one: it resolves to no module
	} {
		if got := IsDottedName(s); got != want {
			t.Errorf("IsDottedName(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzIsDottedName(f *testing.F) {
	for _, s := range []string{"a.b", "pkg.models.X", "a..b", ".a", "a.", "1a.b", "a.b c", "ä.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsDottedName(s), dottedSpec.MatchString(s); got != want {
			t.Errorf("IsDottedName(%q) = %v, the spec says %v", s, got, want)
		}
	})
}
