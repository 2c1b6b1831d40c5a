package contexts

import (
	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Forwarding closures (propagate). A decorator's wrapper calls the function
// it wraps through a closure variable:
//
//	def api(f):
//	    def wrapper(*args, **kwargs):
//	        log(f.__name__)
//	        return f(*args, **kwargs)
//	    return attach(wrapper, f)
//
// The points-to values are not context-sensitive, so `f` holds every
// function `api` ever decorated, and `wrapper` calls all of them: one call
// of one decorated API would reach every other (229 in one kernel library),
// each edge resolved. guard/flow summarizes the decorators whose shape it
// knows (wrapdeco.go); this is the general rule for the rest, and for any
// closure that calls a variable of an enclosing function.
//
// A chain remembers its origin: the last call site it passed that is not
// such a closure call (`wrapper.run(q)`, `selective_state_update(x)`). At a
// closure call, the chain goes on only to what the origin named: the
// method the origin's receiver classes resolve its name to, or the
// module-level function its name resolves to — the function the decorated
// name was bound to by its def — and to closures that forward in turn (the
// next layer of wrappers). Where the origin names nothing the analysis resolves (a local
// holding a callable, a splat), every value stays. A forwarding closure is
// expanded once per origin, so each decorated API reaches its own function.

// closureCall: site calls a variable that fn does not bind and an
// enclosing function does (a parameter or a local of a decorator).
func (a *analyser) closureCall(fn *index.Function, site *Node) bool {
	if site == nil || fn.Kind != index.Def || fn.Outer == nil || fn.Outer.Kind == index.TopLevel {
		return false
	}
	if a.fwdSites == nil {
		a.fwdSites = map[*Node]bool{}
	}
	if v, ok := a.fwdSites[site]; ok {
		return v
	}
	res := false
	if site.Kind() == "call" {
		if c := syntax.Unparen(site.Get("function")); c != nil && c.Kind() == "identifier" {
			name := c.Text(fn.File.Src)
			if !fn.Locals[name] && !fn.Globals[name] {
				for g := fn.Outer; g != nil && g.Kind != index.TopLevel; g = g.Outer {
					if g.Locals[name] {
						res = true
						break
					}
				}
			}
		}
	}
	a.fwdSites[site] = res
	return res
}

// forwards: fn has a closure call (its expansion depends on the origin).
func (a *analyser) forwards(fn *index.Function) bool {
	if a.fwdFns == nil {
		a.fwdFns = map[*index.Function]bool{}
	}
	if v, ok := a.fwdFns[fn]; ok {
		return v
	}
	res := false
	for _, e := range a.g.Out[fn] {
		if a.closureCall(fn, e.Site) {
			res = true
			break
		}
	}
	a.fwdFns[fn] = res
	return res
}

// forwardAllowed: a closure call may reach cand on a chain whose origin is
// the call site origin in originFn.
func (a *analyser) forwardAllowed(origin *Node, originFn *index.Function, cand *index.Function) bool {
	if origin == nil || originFn == nil {
		return true
	}
	if a.forwards(cand) {
		return true // the next layer of wrappers
	}
	named := a.originNames(origin, originFn)
	if named == nil {
		// The origin's callee is not resolved: a decorated function keeps
		// its name (functools.wraps), and the call names it.
		name := calleeName(origin, originFn)
		return name == "" || cand.Name == name || !a.anyNamed(origin, originFn, name)
	}
	return named[cand]
}

// forwardGuess: forwardAllowed lets a closure call reach cand only because
// the chain's origin names nothing the analysis resolves, and cand does
// not carry the name the origin calls: every function the wrapper was
// given stays, and which of them runs is a guess (a name edge).
func (a *analyser) forwardGuess(origin *Node, originFn *index.Function, cand *index.Function) bool {
	if origin == nil || originFn == nil || a.forwards(cand) {
		return false
	}
	if a.originNames(origin, originFn) != nil {
		return false
	}
	name := calleeName(origin, originFn)
	return name == "" || cand.Name != name
}

// siteCallees is how many functions the call at site in fn can reach (a
// closure variable holding one function is no guess). The counts of all
// of fn's sites are made at its first question: asked at every edge of
// every context, with a scan of fn's edges and a set each time, it was
// 257 of the 835 MB the contexts allocated on flashinfer (a holdout).
func (a *analyser) siteCallees(fn *index.Function, site *Node) int {
	counts, ok := a.siteCounts[fn]
	if !ok {
		type pair struct {
			site   *Node
			callee *index.Function
		}
		counts = map[*Node]int{}
		seen := map[pair]bool{}
		for _, e := range a.g.Out[fn] {
			if p := (pair{e.Site, e.Callee}); !seen[p] {
				seen[p] = true
				counts[e.Site]++
			}
		}
		if a.siteCounts == nil {
			a.siteCounts = map[*index.Function]map[*Node]int{}
		}
		a.siteCounts[fn] = counts
	}
	return counts[site]
}

// calleeName is the name a call's callee is written with: `f` in `f(x)`,
// `m` in `obj.m(x)`; "" for anything else.
func calleeName(call *Node, fn *index.Function) string {
	if call == nil || call.Kind() != "call" {
		return ""
	}
	switch c := syntax.Unparen(call.Get("function")); {
	case c == nil:
	case c.Kind() == "identifier":
		return c.Text(fn.File.Src)
	case c.Kind() == "attribute":
		return c.Get("attribute").Text(fn.File.Src)
	}
	return ""
}

// anyNamed: some function the chain from origin can forward to has the
// name the origin calls (else nothing narrows the forward).
func (a *analyser) anyNamed(origin *Node, originFn *index.Function, name string) bool {
	if a.namedMemo == nil {
		a.namedMemo = map[*Node]bool{}
	}
	if v, ok := a.namedMemo[origin]; ok {
		return v
	}
	found := false
	seen := map[*index.Function]bool{}
	var walk func(fn *index.Function, depth int)
	walk = func(fn *index.Function, depth int) {
		if found || seen[fn] || depth > 4 {
			return
		}
		seen[fn] = true
		for _, e := range a.g.Out[fn] {
			if !a.closureCall(fn, e.Site) {
				continue
			}
			if e.Callee.Name == name {
				found = true
				return
			}
			if a.forwards(e.Callee) {
				walk(e.Callee, depth+1)
			}
		}
	}
	for _, e := range a.g.Callees(origin) {
		if a.forwards(e.Callee) {
			walk(e.Callee, 0)
		}
	}
	a.namedMemo[origin] = found
	return found
}

// originNames are the functions the call at origin names by its callee's
// name: for `obj.m(...)`, the method m of obj's classes; for `f(...)`, the
// module-level def f resolves to. nil where it names nothing resolved.
func (a *analyser) originNames(origin *Node, fn *index.Function) map[*index.Function]bool {
	if a.originMemo == nil {
		a.originMemo = map[*Node]map[*index.Function]bool{}
	}
	if v, ok := a.originMemo[origin]; ok {
		return v
	}
	var out map[*index.Function]bool
	add := func(f *index.Function) {
		if f == nil {
			return
		}
		if out == nil {
			out = map[*index.Function]bool{}
		}
		out[f] = true
	}
	if origin.Kind() == "call" {
		src := fn.File.Src
		switch c := syntax.Unparen(origin.Get("function")); {
		case c == nil:
		case c.Kind() == "attribute":
			name := c.Get("attribute").Text(src)
			for _, v := range a.g.Values(c.Get("object")) {
				switch v.Kind {
				case flow.VInst, flow.VClass:
					if v.Cls != nil {
						add(a.g.H.Lookup(v.Cls, name))
					}
				case flow.VModule:
					if v.Mod != nil && v.Mod.File != nil {
						if s := a.p.ResolveName(v.Mod.File, name); s.Func != nil {
							add(s.Func)
						}
					}
				}
			}
		case c.Kind() == "identifier":
			name := c.Text(src)
			if !fn.Locals[name] {
				if s := a.p.ResolveName(fn.File, name); s.Func != nil {
					add(s.Func)
				}
			}
		}
		if out == nil {
			// A local or an assigned name holding the callable
			// (`fwd = pick(...)`; `fwd(q)`): the functions its values
			// are, the wrappers around them left out.
			if c := syntax.Unparen(origin.Get("function")); c != nil {
				for _, v := range a.g.Values(c) {
					switch v.Kind {
					case flow.VFunc, flow.VBound:
						if v.Fn != nil && !a.forwards(v.Fn) {
							add(v.Fn)
						}
					}
				}
			}
		}
	}
	a.originMemo[origin] = out
	return out
}
