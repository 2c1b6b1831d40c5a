package pyparse

import (
	"strings"
	"testing"
	"time"
)

// The table is in preorder: the root first with no parent, every node after
// its parent and inside its parent's bytes; every symbol and field has a name.
func TestTableShape(t *testing.T) {
	for _, src := range []string{"", "x = 1\n", "def f(:\n  return (1,\n", "import torch\n" + strings.Repeat("[", 500) + strings.Repeat("]", 500) + "\n"} {
		var n int
		var bad bool
		err := Parse([]byte(src), func(nodes []Rec, hasError bool) {
			n = len(nodes)
			bad = hasError
			for i, r := range nodes {
				if SymbolName(r.Sym) == "" {
					t.Errorf("%q: node %d: symbol %d has no name", src, i, r.Sym)
				}
				if r.Field != 0 && FieldName(r.Field) == "" {
					t.Errorf("%q: node %d: field %d has no name", src, i, r.Field)
				}
				if i == 0 {
					if r.Parent != NoParent || r.Start != 0 {
						t.Errorf("%q: root %+v", src, r)
					}
					continue
				}
				if r.Parent >= uint32(i) {
					t.Fatalf("%q: node %d has parent %d: not preorder", src, i, r.Parent)
				}
				if p := nodes[r.Parent]; r.Start < p.Start || r.End > p.End {
					t.Errorf("%q: node %d [%d,%d) outside its parent [%d,%d)", src, i, r.Start, r.End, p.Start, p.End)
				}
			}
		})
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if n == 0 {
			t.Errorf("%q: no nodes", src)
		}
		if want := strings.Contains(src, "(:"); bad != want {
			t.Errorf("%q: hasError %v, want %v", src, bad, want)
		}
	}
	if SymbolName(errorSym) != "ERROR" {
		t.Errorf("error symbol named %q", SymbolName(errorSym))
	}
}

// A parse that runs past its time limit is an error, not a hang.
func TestTimeout(t *testing.T) {
	defer func(old func(int) time.Duration) { timeout = old }(timeout)
	timeout = func(int) time.Duration { return time.Microsecond }
	src := []byte(strings.Repeat("def f(x):\n    return [x for x in range(10) if x]\n", 50000))
	err := Parse(src, func([]Rec, bool) { t.Error("a tree came back") })
	if err == nil || !strings.Contains(err.Error(), "tree-sitter gave up after 1µs") {
		t.Fatalf("err %v", err)
	}
}
