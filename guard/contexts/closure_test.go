package contexts

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// namesNonlocal answers per name from the statements it keeps per
// function: asked about two names of one def (one declared nonlocal by a
// nested def, one not, one only in a comment), each answer is its own,
// in either order, and forgetBindings empties what it kept.
func TestNamesNonlocalPerName(t *testing.T) {
	src := []byte(`def outer(a, b, c):
    def inner():
        nonlocal a
        a = 1
    # nonlocal c is only in this comment's text, which the scan reads too
    return inner
`)
	tree, err := syntax.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	f := index.NewFile("m.py", "/m.py", "m", src, tree)
	var outer *index.Function
	for _, fn := range f.Funcs {
		if fn.Name == "outer" {
			outer = fn
		}
	}
	if outer == nil {
		t.Fatal("no function outer in the index")
	}
	want := map[string]bool{"a": true, "b": false, "c": true, "nonlocal": true, "inner": false}
	for _, order := range [][]string{{"b", "a", "c", "nonlocal", "inner"}, {"a", "b", "inner", "c", "nonlocal"}} {
		forgetBindings()
		for _, name := range order {
			if got := namesNonlocal(outer, name); got != want[name] {
				t.Errorf("order %v: namesNonlocal(outer, %q) = %v, want %v", order, name, got, want[name])
			}
		}
		if n := CachedBindings(); n == 0 {
			t.Errorf("order %v: nothing kept: the statements are scanned on every question", order)
		}
	}
	forgetBindings()
	if n := CachedBindings(); n != 0 {
		t.Errorf("forgetBindings left %d entries", n)
	}
}
