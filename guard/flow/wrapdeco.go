package flow

import (
	"github.com/capguard/capguard/guard/index"
	"github.com/capguard/capguard/guard/syntax"
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
	// wrapper is the nested def the decorator returns (nil: it returns
	// its argument).
	wrapper *index.Function
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

func summarizeDecorator(f *index.Function) decoSummary {
	var none decoSummary
	if f.Kind != index.Def || f.Class != nil || f.Body == nil || f.Generator || f.Async || len(f.Params) == 0 {
		return none
	}
	p := f.Params[0]
	if p.Kind != index.Positional && p.Kind != index.PosOnly {
		return none
	}
	for _, q := range f.Params[1:] {
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
	// Every return of f's own body returns p or one nested def, the same
	// each time; p is never rebound.
	var returned string
	ok := true
	rebound := false
	syntax.Walk(f.Body, func(n *Node) bool {
		if !ok {
			return false
		}
		switch n.Kind {
		case "function_definition", "class_definition", "lambda":
			return false
		case "return_statement":
			vals := n.NamedChildren()
			if len(vals) != 1 || syntax.Unparen(vals[0]).Kind != "identifier" {
				ok = false
				return false
			}
			name := syntax.Unparen(vals[0]).Text(src)
			if returned != "" && returned != name {
				ok = false
			}
			returned = name
		case "assignment", "augmented_assignment":
			if l := n.Get("left"); l != nil && l.Kind == "identifier" && l.Text(src) == p.Name {
				rebound = true
			}
		}
		return true
	})
	if !ok || rebound || returned == "" {
		return none
	}
	if returned == p.Name {
		return decoSummary{ok: true}
	}
	w := nested[returned]
	if w == nil || !callsName(w, p.Name) {
		return none
	}
	return decoSummary{ok: true, wrapper: w}
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
		if n.Kind == "call" {
			if c := syntax.Unparen(n.Get("function")); c != nil && c.Kind == "identifier" && c.Text(src) == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// applyDecorator applies a summarized project decorator d at a decoration
// site (constraint ci, whose one argument is what is decorated): the
// decorator runs (its edge is recorded) but its parameter takes nothing;
// the site's result is the decorated value and, for a wrapper, the
// wrapper.
func (s *solver) applyDecorator(ci int32, d *index.Function, sum decoSummary, st uint8) {
	c := &s.cons[ci]
	s.recordCall(c.site, c.owner, d, st)
	if c.args != nil && len(c.args.pos) == 1 {
		s.copyTo(c.args.pos[0], c.dst, st)
	}
	if sum.wrapper != nil {
		s.add(c.dst, s.fnValue(sum.wrapper), st)
	}
}
