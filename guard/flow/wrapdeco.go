package flow

import (
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Decorators are context-sensitive where it matters: a project decorator
// of the two common shapes
//
//	def deco(fn):                     def register(fn):
//	    @functools.wraps(fn)              REGISTRY[fn.__name__] = fn
//	    def wrapper(*a, **k):             return fn
//	        ...
//	        return fn(*a, **k)
//	    return wrapper
//
// is summarized at each decoration site instead of called: the decorated
// name holds the function itself and, for a wrapper, the wrapper (calling
// the name runs both; the wrapper's own code is analysed once, with its
// call of `fn` left to the sites). Called as a function, the decorator's
// parameter would take every function it decorates, so its wrapper would
// call all of them and one call through one decorated API would reach
// every other (a shared wrapper reached 25 attention backends in one
// engine, each edge `resolved`).

// decoSummary is what applying a project decorator does to its argument.
type decoSummary struct {
	ok bool
	// identity: it may return its argument.
	identity bool
	// wrappers are the nested defs it may return, each calling its
	// argument.
	wrappers []*index.Function
	// param is the index of the parameter that takes what is decorated:
	// 0, or 1 for a method (`__call__(self, fn)` of a decorator object,
	// `registry.register(fn)`).
	param int
}

// decoratorSummary summarizes f as a decorator, memoized.
func (s *solver) decoratorSummary(f *index.Function) decoSummary {
	if sum, ok := s.decoSums[f]; ok {
		return sum
	}
	sum := summarizeDecorator(f)
	if s.decoSums == nil {
		s.decoSums = map[*index.Function]decoSummary{}
	}
	s.decoSums[f] = sum
	return sum
}

// summarizeDecorator: f takes one required positional argument p, never
// rebinds it, and every return of its own body returns p, a nested def
// that calls p, or a local bound only to those (directly or through
// conditional expressions: `w = inner if enabled else dummy`).
func summarizeDecorator(f *index.Function) decoSummary {
	var none decoSummary
	if f.Kind != index.Def || f.Body == nil || f.Generator || f.Async {
		return none
	}
	// A method's first parameter is its receiver: what it decorates is
	// the next one. Such decorators are common (a profiling context
	// manager's `__call__(self, func)` returning a wrapper that runs func
	// inside `with self`, a registry's `register(self, fn)`), and called
	// as a method their parameter would take every function decorated
	// through any instance of the class.
	off := 0
	if f.Class != nil {
		if f.Static || f.ClassMethod {
			return none
		}
		off = 1
	}
	if len(f.Params) <= off {
		return none
	}
	p := f.Params[off]
	if p.Kind != index.Positional && p.Kind != index.PosOnly {
		return none
	}
	for _, q := range f.Params[off+1:] {
		if q.Default == nil && (q.Kind == index.Positional || q.Kind == index.PosOnly || q.Kind == index.KwOnly) {
			return none // more than one required argument: not applied as a decorator
		}
	}
	src := f.File.Src
	// The nested defs of f's own body, by name.
	nested := map[string]*index.Function{}
	for _, g := range f.File.Funcs {
		if g.Outer == f && g.Kind == index.Def && g.Class == nil {
			nested[g.Name] = g
		}
	}
	// Local assignments of plain names, and the returned expressions.
	assigned := map[string][]*Node{}
	var returns []*Node
	ok := true
	syntax.Walk(f.Body, func(n *Node) bool {
		if !ok {
			return false
		}
		switch n.Kind() {
		case "function_definition", "class_definition", "lambda":
			return false
		case "return_statement":
			vals := n.NamedChildren()
			if len(vals) != 1 {
				ok = false
				return false
			}
			returns = append(returns, vals[0])
		case "assignment", "augmented_assignment":
			l := n.Get("left")
			if l != nil && l.Kind() == "identifier" {
				name := l.Text(src)
				if name == p.Name {
					// Only a re-decoration, `fn = other(...)(fn)`, keeps fn
					// the decorated function (its wrappers are not added
					// to the name: a gap, docs/design.md).
					if !redecorates(n.Get("right"), p.Name, src) {
						ok = false
						return false
					}
					return true
				}
				if n.Kind() == "assignment" {
					if r := n.Get("right"); r != nil {
						assigned[name] = append(assigned[name], r)
					}
				}
			}
		}
		return true
	})
	if !ok || len(returns) == 0 {
		return none
	}
	sum := decoSummary{ok: true, param: off}
	seen := map[string]bool{}
	var resolve func(e *Node, depth int) bool
	resolve = func(e *Node, depth int) bool {
		e = syntax.Unparen(e)
		if e == nil || depth > 8 {
			return false
		}
		switch e.Kind() {
		case "conditional_expression":
			for _, c := range e.NamedChildren() {
				if c != e.NamedChildren()[1] && !resolve(c, depth+1) {
					return false
				}
			}
			return true
		case "identifier":
		default:
			return false
		}
		name := e.Text(src)
		if seen[name] {
			return true
		}
		seen[name] = true
		switch {
		case name == p.Name:
			sum.identity = true
			return true
		case nested[name] != nil:
			w := nested[name]
			if len(assigned[name]) > 0 || !callsName(w, p.Name) {
				return false
			}
			sum.wrappers = append(sum.wrappers, w)
			return true
		case len(assigned[name]) > 0:
			for _, r := range assigned[name] {
				if !resolve(r, depth+1) {
					return false
				}
			}
			return true
		}
		return false
	}
	for _, r := range returns {
		if !resolve(r, 0) {
			return none
		}
	}
	return sum
}

// redecorates: e is a call whose one argument is the name p.
func redecorates(e *Node, p string, src []byte) bool {
	e = syntax.Unparen(e)
	if e == nil || e.Kind() != "call" {
		return false
	}
	args := e.Get("arguments")
	if args == nil {
		return false
	}
	as := args.NamedChildren()
	return len(as) == 1 && as[0].Kind() == "identifier" && as[0].Text(src) == p
}

// callsName reports whether w's body calls the free name `name` (its
// enclosing decorator's parameter), and does not bind it itself.
func callsName(w *index.Function, name string) bool {
	if w.Locals[name] {
		return false
	}
	src := w.File.Src
	found := false
	syntax.Walk(w.Body, func(n *Node) bool {
		if found {
			return false
		}
		if n.Kind() == "call" {
			if c := syntax.Unparen(n.Get("function")); c != nil && c.Kind() == "identifier" && c.Text(src) == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// applies reports whether call constraint c applies a decorator to one
// value: a decoration site, or a call with one positional argument and
// no other (`tqbridge(mode)(func)` in a registering decorator's body).
func (c *constraint) applies() bool {
	if c.deco {
		return true
	}
	a := c.args
	return a != nil && len(c.prepended()) == 0 && len(a.pos) == 1 && !a.splat(0) && len(a.kw) == 0 && len(a.kwSplat) == 0
}

// applyDecorator applies a summarized project decorator d at call
// constraint ci (one argument: what is decorated): d runs, its parameter
// takes the argument (a registry it fills sees it), but the site's result
// is the argument itself and, for a wrapper, the wrapper: not d's return,
// which holds every wrapper d ever made.
//
// For a method d (sum.param 1), recv is its receiver.
func (s *solver) applyDecorator(ci int32, d *index.Function, sum decoSummary, recv VID, st uint8) {
	c := s.cons.at(ci)
	s.recordCall(c.site, c.owner, d, st)
	s.setterGeneric(d)
	ps := s.paramNodes(d)
	if sum.param > 0 {
		if recv == noVID {
			s.bindArgs(c, d, ps, 0, st)
		} else {
			s.add(ps[0], recv, st)
			s.bindArgs(c, d, ps, 1, st)
		}
	} else {
		s.bindArgs(c, d, ps, 0, st)
	}
	s.passOn(c, c.args.pos[0], c.dst, st)
	for _, w := range sum.wrappers {
		s.add(c.dst, s.fnValue(w), st)
	}
}

// wrapperCall reports whether call constraint c is a summarized wrapper's
// call of the function it wraps (`fn(*a, **k)` in `wrapper`): the sites
// that call the decorated name reach that function themselves
// (applyDecorator), so this call adds no edge.
func (s *solver) wrapperCall(c *constraint) bool {
	w := c.owner
	if w == nil || w.Kind != index.Def || w.Outer == nil || c.site == nil || c.site.Kind() != "call" {
		return false
	}
	if v, ok := s.wrapCalls[c.site]; ok {
		return v
	}
	res := false
	if callee := syntax.Unparen(c.site.Get("function")); callee != nil && callee.Kind() == "identifier" {
		d := w.Outer
		if sum := s.decoratorSummary(d); sum.ok && len(d.Params) > sum.param && callee.Text(w.File.Src) == d.Params[sum.param].Name && !w.Locals[d.Params[sum.param].Name] {
			for _, x := range sum.wrappers {
				if x == w {
					res = true
				}
			}
		}
	}
	if s.wrapCalls == nil {
		s.wrapCalls = map[*Node]bool{}
	}
	s.wrapCalls[c.site] = res
	return res
}
