package index

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// manyFuncs is a module of n small functions, each with a call through an
// attribute chain (the shape of a generated file of helpers).
func manyFuncs(n int) []byte {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "def f%d(x):\n    y = x.a.b(x, %d)\n    return y + %d\n", i, i, i)
	}
	return []byte(b.String())
}

// TestFuncAtLinear: finding each def's function costs the same whatever
// the file's size: a file of 2n functions takes at most 2.2x the lookup work
// of n (a scan of the function list per lookup made it 4x, and a 7 MB
// file of small functions 32 s).
func TestFuncAtLinear(t *testing.T) {
	work := func(n int) int64 {
		src := manyFuncs(n)
		tree, err := syntax.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		f := NewFile("m.py", "/m.py", "m", src, tree)
		if len(f.Funcs) != n {
			t.Fatalf("%d functions indexed, want %d", len(f.Funcs), n)
		}
		before := lookupSteps.Load()
		for _, fn := range f.Funcs {
			if got := f.FuncAt(fn.Def); got != fn {
				t.Fatalf("FuncAt(%s's def) = %v", fn.Qual, got)
			}
		}
		return lookupSteps.Load() - before
	}
	a, b := work(1000), work(2000)
	if g := float64(b) / float64(a); g > 2.2 {
		t.Errorf("lookup work %d for 1,000 functions, %d for 2,000: %.1fx for twice the size", a, b, g)
	}
}

// TestModuleNamesLinear: resolving every module-level name of a file, and
// the literal each is bound to, costs the file's statements about once:
// a module of 2n constants takes at most 2.2x the statement steps of n (a
// walk of the file's statements per name made it 4x, and a file of 20,000
// module constants named in f-strings took 16 s).
func TestModuleNamesLinear(t *testing.T) {
	work := func(n int) int64 {
		var b strings.Builder
		b.WriteString("from os import *\nPKG = \"pkg\"\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "C%d = \"pkg.m%d\"\n", i, i)
		}
		src := []byte(b.String())
		tree, err := syntax.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		f := NewFile("m.py", "/m.py", "m", src, tree)
		p := NewProject([]*File{f})
		before := stmtSteps.Load()
		p.Seal()
		for i := 0; i < n; i++ {
			if lf, lit := p.LiteralOf(f, fmt.Sprintf("C%d", i)); lit == nil || lf != f {
				t.Fatalf("C%d: no literal", i)
			}
		}
		return stmtSteps.Load() - before
	}
	a, b := work(1000), work(2000)
	if g := float64(b) / float64(a); g > 2.2 {
		t.Errorf("statement steps %d for 1,000 constants, %d for 2,000: %.1fx for twice the size", a, b, g)
	}
}
