package index

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// TestFullNameMadeOnce: NewFile names each function once (Function.full),
// and the name it keeps is the one FullName builds; a Function made
// elsewhere, with none kept, is named as before.
func TestFullNameMadeOnce(t *testing.T) {
	src := []byte(`class C:
    def m(self):
        def inner():
            return lambda: 1
        return inner
def f():
    pass
`)
	tree, err := syntax.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFile("pkg/mod.py", "/pkg/mod.py", "pkg.mod", src, tree)
	want := map[string]bool{"pkg.mod.C.m": true, "pkg.mod.C.m.inner": true, "pkg.mod.f": true}
	for _, fn := range f.Funcs {
		if fn.full == "" {
			t.Errorf("%s: NewFile kept no name", fn.Qual)
		}
		if got := fn.FullName(); got != fn.fullName() {
			t.Errorf("FullName() = %q, built %q", got, fn.fullName())
		}
		delete(want, fn.FullName())
	}
	if len(want) > 0 {
		t.Errorf("names missing: %v", want)
	}
	if got := f.Top.FullName(); got != "pkg.mod" {
		t.Errorf("top-level code: %q", got)
	}
	loose := &Function{File: f, Qual: "X.y", Name: "y"}
	if got := loose.FullName(); got != "pkg.mod.X.y" {
		t.Errorf("a Function made outside NewFile: %q", got)
	}
}
