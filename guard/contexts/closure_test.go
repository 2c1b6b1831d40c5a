package contexts

import (
	"maps"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// funcIn indexes src as module m and returns its function name.
func funcIn(t *testing.T, src []byte, name string) *index.Function {
	t.Helper()
	tree, err := syntax.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range index.NewFile("m.py", "/m.py", "m", src, tree).Funcs {
		if fn.Name == name {
			return fn
		}
	}
	t.Fatalf("no function %s in the index", name)
	return nil
}

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
	outer := funcIn(t, src, "outer")
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

// deadIn keeps one answer per function and constants: the same function
// under a flag bound True, False, True again and None gets each context's dead
// statements, not the first context's again, and matches deadUnder.
func TestDeadInPerConstants(t *testing.T) {
	src := []byte(`def f(flag):
    if flag:
        x = 1
    else:
        x = 2
    return x
`)
	fn := funcIn(t, src, "f")
	a := &analyser{}
	texts := func(ns []*Node) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Text(src))
		}
		return out
	}
	for _, v := range []string{"true:True", "false:False", "true:True", "none:None"} {
		env := map[string]string{"flag": v}
		want, _ := deadUnder(fn, env)
		got := a.deadIn(fn, &callCtx{consts: env})
		if len(want) == 0 {
			t.Fatalf("flag=%s: deadUnder finds no dead statement: the test no longer tells contexts apart", v)
		}
		if g, w := texts(got), texts(want); len(g) != len(w) || g[0] != w[0] {
			t.Errorf("flag=%s: deadIn = %q, deadUnder = %q", v, g, w)
		}
	}
	if len(a.deadMemo) != 3 {
		t.Errorf("deadIn kept %d answers for three contexts (True twice, False, None)", len(a.deadMemo))
	}
}

// conditionalAt keeps Conditional's answer per function and site: a site
// under a prefill test and one that runs whenever its function does each
// get their own answer, asked twice in either order.
func TestConditionalAtPerSite(t *testing.T) {
	src := []byte(`def f(x, is_prefill):
    if is_prefill:
        g(x)
    m(x)
`)
	fn := funcIn(t, src, "f")
	calls := callsOf(fn)
	if len(calls) != 2 || Conditional(fn, calls[0]) == "" || Conditional(fn, calls[1]) != "" {
		t.Fatalf("the fixture no longer has one conditional call and one plain one")
	}
	for _, order := range [][]int{{0, 1, 0, 1}, {1, 0, 1, 0}} {
		a := &analyser{}
		for _, i := range order {
			if got, want := a.conditionalAt(fn, calls[i]), Conditional(fn, calls[i]); got != want {
				t.Errorf("order %v: conditionalAt(%s) = %q, Conditional says %q", order, calls[i].Text(src), got, want)
			}
		}
	}
}

// TestSiteCalleesPerSite: siteCallees keeps its counts by function and
// call site, so that an answer made for one site (or for another function
// whose edges share the site) is never another's; a callee reached twice
// at one site counts once.
func TestSiteCalleesPerSite(t *testing.T) {
	src := []byte(`def f(x):
    g(x)
    h(x)
`)
	f := funcIn(t, src, "f")
	calls := callsOf(f)
	if len(calls) != 2 {
		t.Fatalf("the fixture no longer has two calls")
	}
	a1, a2, a3 := &index.Function{Name: "a1"}, &index.Function{Name: "a2"}, &index.Function{Name: "a3"}
	other := &index.Function{Name: "other"}
	g := &flow.Graph{Out: map[*index.Function][]flow.Edge{
		f: {
			{Site: calls[0], Caller: f, Callee: a1}, {Site: calls[0], Caller: f, Callee: a2},
			{Site: calls[0], Caller: f, Callee: a1}, // the same callee again
			{Site: calls[1], Caller: f, Callee: a3},
		},
		other: {{Site: calls[0], Caller: other, Callee: a3}},
	}}
	type q struct {
		fn   *index.Function
		site *Node
		want int
	}
	qs := []q{{f, calls[0], 2}, {f, calls[1], 1}, {other, calls[0], 1}, {other, calls[1], 0}, {f, f.Body, 0}}
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 3, 1, 4, 0, 2}} {
		a := &analyser{g: g}
		for _, i := range order {
			if got := a.siteCallees(qs[i].fn, qs[i].site); got != qs[i].want {
				t.Errorf("order %v: siteCallees(%s, %q) = %d, want %d", order, qs[i].fn.Name, qs[i].site.Text(src), got, qs[i].want)
			}
		}
	}
}

// TestAddContextKeys: addContext merges a context into the kept one with
// the same constants (equal maps, not the same map) and keeps the others
// apart, nil constants apart from empty ones; the key it keeps for each
// is its constants' (a key the new context came with is not trusted).
func TestAddContextKeys(t *testing.T) {
	f1, f2 := &index.Function{Name: "f1"}, &index.Function{Name: "f2"}
	var cs []callCtx
	cs = addContext(cs, callCtx{consts: map[string]string{"a": "1", "b": "x"}, funcs: map[string]map[*index.Function]bool{"fn": {f1: true}}})
	cs = addContext(cs, callCtx{consts: map[string]string{"b": "x", "a": "1"}, funcs: map[string]map[*index.Function]bool{"fn": {f2: true}}, key: "stale"})
	cs = addContext(cs, callCtx{consts: map[string]string{"a": "2"}, funcs: map[string]map[*index.Function]bool{}, key: constsKey(map[string]string{"a": "1", "b": "x"})})
	cs = addContext(cs, callCtx{consts: map[string]string{}, funcs: map[string]map[*index.Function]bool{}})
	cs = addContext(cs, callCtx{funcs: map[string]map[*index.Function]bool{}})
	if len(cs) != 4 {
		t.Fatalf("%d contexts kept, want 4 (a=1 b=x merged; a=2; empty; nil)", len(cs))
	}
	if fs := cs[0].funcs["fn"]; !fs[f1] || !fs[f2] {
		t.Errorf("the merged context's functions: %v", fs)
	}
	for i := range cs {
		if got, want := cs[i].key, constsKey(cs[i].consts); got != want {
			t.Errorf("context %d keeps key %q, its constants' is %q", i, got, want)
		}
	}
}

// callsOf are the call nodes of fn's body, in source order.
func callsOf(fn *index.Function) []*Node {
	var calls []*Node
	syntax.Walk(fn.Body, func(n *Node) bool {
		if n.Kind() == "call" {
			calls = append(calls, n)
		}
		return true
	})
	return calls
}

// TestAddContextMerges: merging a parameter's functions into the kept
// context with the same constants gives their union, whether one set holds
// the other (kept as it is) or neither does (a new set; the two given are
// left as they were); an unknown set (nil) on either side makes it unknown.
func TestAddContextMerges(t *testing.T) {
	f1, f2, f3 := &index.Function{Name: "f1"}, &index.Function{Name: "f2"}, &index.Function{Name: "f3"}
	set := func(fs ...*index.Function) map[*index.Function]bool {
		out := map[*index.Function]bool{}
		for _, f := range fs {
			out[f] = true
		}
		return out
	}
	consts := func() map[string]string { return map[string]string{"k": "1"} }
	for _, c := range []struct {
		name      string
		old, next map[*index.Function]bool
		want      map[*index.Function]bool
	}{
		{"subset", set(f1, f2), set(f2), set(f1, f2)},
		{"superset", set(f1), set(f1, f2), set(f1, f2)},
		{"equal", set(f1, f2), set(f2, f1), set(f1, f2)},
		{"neither", set(f1, f2), set(f2, f3), set(f1, f2, f3)},
		{"unknown kept", nil, set(f1), nil},
		{"unknown added", set(f1), nil, nil},
	} {
		oldCopy, nextCopy := maps.Clone(c.old), maps.Clone(c.next)
		cs := addContext(nil, callCtx{consts: consts(), funcs: map[string]map[*index.Function]bool{"fn": c.old}})
		cs = addContext(cs, callCtx{consts: consts(), funcs: map[string]map[*index.Function]bool{"fn": c.next}})
		if len(cs) != 1 {
			t.Fatalf("%s: %d contexts, want 1", c.name, len(cs))
		}
		got := cs[0].funcs["fn"]
		if (got == nil) != (c.want == nil) || !maps.Equal(got, c.want) {
			t.Errorf("%s: merged %v, want %v", c.name, got, c.want)
		}
		if !maps.Equal(c.old, oldCopy) || !maps.Equal(c.next, nextCopy) {
			t.Errorf("%s: a given set was written", c.name)
		}
	}
}
