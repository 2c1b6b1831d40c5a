package flow

import (
	"maps"
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
		if n.Kind() == "assignment" && n.Parent() != nil && n.Parent().Kind() == "expression_statement" {
			if l := n.Get("left"); l != nil && l.Kind() == "identifier" {
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

// ValuesUnordered gives what Values gives, as a multiset, for every
// expression of a project whose sets hold several kinds of value, and
// stops when its loop does.
func TestValuesUnorderedMatchesValues(t *testing.T) {
	src := `import os

class B: pass
class A: pass

def f(): pass

def mixed(c):
    if c == 1:
        return A()
    if c == 2:
        return os
    if c == 3:
        return f
    return [B()]

x = mixed(1)
y = x
`
	p := projectOf(t, map[string]string{"m.py": src})
	g := Analyze(p, Options{})
	checked, several := 0, 0
	syntax.Walk(p.Files[0].Tree.Root, func(n *syntax.Node) bool {
		want := g.Values(n)
		var got []ValueInfo
		for v := range g.ValuesUnordered(n) {
			got = append(got, v)
		}
		count := func(vs []ValueInfo) map[ValueInfo]int {
			m := map[ValueInfo]int{}
			for _, v := range vs {
				m[v]++
			}
			return m
		}
		if !maps.Equal(count(got), count(want)) {
			t.Errorf("%q: ValuesUnordered %v, Values %v", n.Text([]byte(src)), got, want)
		}
		if len(want) > 1 {
			several++
			stopped := 0
			for range g.ValuesUnordered(n) {
				stopped++
				break
			}
			if stopped != 1 {
				t.Errorf("%q: the loop went on %d times after a break", n.Text([]byte(src)), stopped)
			}
		}
		checked++
		return true
	})
	if several == 0 {
		t.Fatalf("no expression of the %d holds several values: the test no longer compares orders", checked)
	}
}
