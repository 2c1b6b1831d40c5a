package fold

import "testing"

// Contains finds a lower-case ASCII word in any case, and nowhere else
// (the suppressions' "noqa", the claims' "afe"; moved here from
// suppress' and contexts' copies).
func TestContains(t *testing.T) {
	for _, c := range []struct {
		s, needle string
		want      bool
	}{
		{"# noqa", "noqa", true},
		{"# NOQA: X1", "noqa", true},
		{"# nOqA", "noqa", true},
		{"# no qa", "noqa", false},
		{"", "noqa", false},
		{"noq", "noqa", false},
		{"é noqa é", "noqa", true},
		{"Capture-Safe", "afe", true},
		{"nothing here", "friendly", false},
	} {
		if got := Contains(c.s, c.needle); got != c.want {
			t.Errorf("Contains(%q, %q) = %v, want %v", c.s, c.needle, got, c.want)
		}
	}
}
