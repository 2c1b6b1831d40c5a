package suppress

import (
	"slices"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Comments that hold neither `capguard:` nor `noqa` (in any case) are
// passed over before either regexp runs; the ones that do are read as
// before: a noqa in upper or mixed case, with and without codes, a
// capguard comment with and without a reason, one after another tool's.
func TestSuppressionsOfComments(t *testing.T) {
	src := []byte(`x = 1  # plain words
y = 2  # NOQA: CG101
z = 3  # NoQa
w = 4  # capguard: ignore[CG102] warm-up only
v = 5  # capguard: ignore[CG103]
u = 6  # type: ignore  # noqa: F401
s = 7  # Capguard: ignore[CG101] the regexp is case-sensitive here
r = 8  # noqa is not a word in "snoqa" or "noqaz"
`)
	tree, err := syntax.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	f := index.NewFile("t.py", "/t.py", "t", src, tree)
	type got struct {
		line    int
		codes   []string
		capg    bool
		invalid bool
	}
	var out []got
	for _, s := range suppressionsOf(f) {
		out = append(out, got{s.lines[0], s.codes, s.capg, s.invalid != ""})
	}
	want := []got{
		{2, []string{"CG101"}, false, false},
		{3, nil, false, false},
		{4, []string{"CG102"}, true, false},
		{5, []string{"CG103"}, true, true},
		{8, nil, false, false},
	}
	if !slices.EqualFunc(out, want, func(a, b got) bool {
		return a.line == b.line && slices.Equal(a.codes, b.codes) && a.capg == b.capg && a.invalid == b.invalid
	}) {
		t.Errorf("suppressions:\n got %+v\nwant %+v", out, want)
	}
}
