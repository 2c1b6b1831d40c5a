package flow

import (
	"slices"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// InstanceClasses answers from the expression's values: the classes of
// an expression that holds only instances (in Values' order, whatever
// order the instances came in), nil where one value is something else
// (a function, a module, an outside name) or there is none.
func TestInstanceClasses(t *testing.T) {
	src := `import os

class B: pass
class A: pass

def pick(c):
    if c:
        return B()
    return A()

def mixed(c):
    if c:
        return A()
    return os

only = pick(1)
both = mixed(1)
fn = pick
none = undefined_name
`
	p := projectOf(t, map[string]string{"m.py": src})
	g := Analyze(p, Options{})
	lhs := map[string]*syntax.Node{}
	syntax.Walk(p.Files[0].Tree.Root, func(n *syntax.Node) bool {
		if n.Kind == "assignment" && n.Parent != nil && n.Parent.Kind == "expression_statement" {
			if l := n.Get("left"); l != nil && l.Kind == "identifier" {
				lhs[l.Text([]byte(src))] = n.Get("right")
			}
		}
		return true
	})
	names := func(n *syntax.Node) []string {
		var out []string
		for _, c := range g.InstanceClasses(n) {
			out = append(out, c.Qual)
		}
		return out
	}
	if got := names(lhs["only"]); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("pick(1): classes %v, want [A B] (Values' order)", got)
	}
	if got := len(g.Values(lhs["both"])); got != 2 {
		t.Fatalf("mixed(1) holds %d values, want 2: the test no longer mixes an instance with a module", got)
	}
	for _, name := range []string{"both", "fn", "none"} {
		if got := names(lhs[name]); got != nil {
			t.Errorf("%s: classes %v, want nil", name, got)
		}
	}
}
