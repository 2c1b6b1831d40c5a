package contexts

import (
	"regexp"
	"sync"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Closure instances (regionContexts, capturedThrough, propagate). A def
// nested in another reads the enclosing def's parameters as closure
// variables, and each call of the enclosing def makes a closure whose
// variables hold what that call passed:
//
//	def timed(iters=10, use_graph=False):      # a decorator factory
//	    def decorator(func):
//	        def wrapper(*args, **kwargs):
//	            if use_graph:
//	                with torch.cuda.graph(g):
//	                    out = run(func, args)  # or func(*args)
//	            ...
//	        return wrapper
//	    return decorator
//
//	@timed()                 # a wrapper whose use_graph is False
//	def reference(x): ...
//	@timed(use_graph=True)   # the one the capture runs
//	def fused(x): ...
//
// A points-to value is one per variable, so `func` holds every function
// `timed` decorated, and the region's guard reads a variable that no
// calling context of `wrapper` binds: without instances every decorated
// function was captured, each chain proved. An instance is one call of the
// enclosing def: of the factory (`timed(...)` as a decorator, or applied
// on the spot, `timed(use_graph=True)(fn)`), with the constants it passes
// and the function its decorator is applied to; or, for a def nested in a
// module-level function, one calling context of that function (callctx.go).
// A region dead under an instance's constants captures nothing in that
// instance; a closure variable called in the region, or passed from it to
// a parameter the callee calls (`run(func, args)`), captures only what the
// live instances bind. Where an instance cannot be told (the factory's
// result bound to a name and applied later, a decorator under another,
// the enclosing def used as a decorator itself, a call the analysis cannot
// match), nothing is known and every value stays, as before.

// closureOwner is the enclosing def whose parameter fn reads as the free
// variable name, nil when name is not such a parameter: bound by fn itself
// or by a def between, global, rebound in its owner, or named by a
// `nonlocal` statement anywhere in the owner (which may rebind it).
func closureOwner(fn *index.Function, name string) *index.Function {
	if fn == nil || fn.Locals[name] || fn.Globals[name] || fn.Nonlocals[name] {
		return nil
	}
	for g := fn.Outer; g != nil && g.Kind == index.Def; g = g.Outer {
		if g.Globals[name] || g.Nonlocals[name] {
			return nil
		}
		if !g.Locals[name] {
			continue
		}
		if !g.HasParam(name) || Reassigned(g, name) || namesNonlocal(g, name) {
			return nil
		}
		return g
	}
	return nil
}

var nonlocalStmt = regexp.MustCompile(`\bnonlocal\b[^\n;]*`)

// namesNonlocal: a `nonlocal` statement in g's text names name.
func namesNonlocal(g *index.Function, name string) bool {
	ms := nonlocalStmts(g)
	if len(ms) == 0 {
		return false
	}
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	for _, m := range ms {
		if word.Match(m) {
			return true
		}
	}
	return false
}

// nonlocalCache holds nonlocalStmts per function, as boundCache holds its
// bindings (and is emptied with it): namesNonlocal is asked once per
// closure parameter a context carries, and scanning the enclosing def's
// text each time was 1.8 of Megatron-LM's 3.6 s of contexts (a few large
// defs, asked again in every calling context).
var nonlocalCache sync.Map

// nonlocalStmts are the `nonlocal` statements in g's text (nil for none,
// and for a function with no def: a lambda, a module's top).
func nonlocalStmts(g *index.Function) [][]byte {
	if g.Def == nil {
		return nil
	}
	if v, ok := nonlocalCache.Load(g); ok {
		return v.([][]byte)
	}
	ms := nonlocalStmt.FindAll(g.File.Src[g.Def.Start:g.Def.End], -1)
	nonlocalCache.Store(g, ms)
	return ms
}

// instanceContexts are the instances of closure fn: per instance, the
// constants and functions its closure parameters hold (callCtx, keyed by
// the parameters' names). ok is false where they cannot be told.
func (a *analyser) instanceContexts(fn *index.Function) (out []callCtx, ok bool) {
	if a.instMemo == nil {
		a.instMemo = map[*index.Function]instAnswer{}
	}
	if v, done := a.instMemo[fn]; done {
		return v.ctxs, v.ok
	}
	out, ok = a.makeInstances(fn)
	a.instMemo[fn] = instAnswer{out, ok}
	return out, ok
}

type instAnswer struct {
	ctxs []callCtx
	ok   bool
}

func (a *analyser) makeInstances(fn *index.Function) ([]callCtx, bool) {
	if fn.Kind != index.Def || fn.Outer == nil || fn.Outer.Kind != index.Def {
		return nil, false
	}
	e1 := fn.Outer
	if e1.Outer == nil || e1.Outer.Kind != index.Def {
		// A def nested in a module-level function (or a method): its
		// instances are that function's calling contexts.
		if a.decoratorUse()[e1] {
			return nil, false
		}
		var out []callCtx
		for _, cc := range a.callContexts(e1, callDepth) {
			if cc.consts == nil && cc.funcs == nil {
				return nil, false
			}
			out = append(out, cc)
		}
		return out, len(out) > 0
	}
	// A factory's decorator: e1 is returned by e2 and applied once where
	// each call of e2 is applied.
	e2 := e1.Outer
	if e2.Outer != nil && e2.Outer.Kind == index.Def || a.decoratorUse()[e2] || !returnedOnly(e2, e1) || len(e1.Params) == 0 {
		return nil, false
	}
	first := e1.Params[0]
	if first.Kind != index.Positional && first.Kind != index.PosOnly {
		return nil, false
	}
	in := a.g.In[e2]
	if len(in) == 0 {
		return nil, false
	}
	var out []callCtx
	for _, e := range in {
		site := e.Site
		if site == nil || e.Caller == nil || site.Kind() != "call" {
			return nil, false
		}
		applied, onSpot := appliedTo(site, e.Caller)
		for _, cc := range a.callContexts(e.Caller, callDepth-1) {
			if cc.consts != nil {
				if dead := a.deadIn(e.Caller, &cc); within(dead, site) {
					continue
				}
			}
			consts, _ := bindArgs(a, e.Caller, cc.consts, site, e2)
			if consts == nil {
				return nil, false
			}
			c := callCtx{consts: map[string]string{}, funcs: map[string]map[*index.Function]bool{}}
			for k, v := range consts {
				c.consts[k] = v
			}
			c.consts[first.Name] = top
			switch {
			case !onSpot:
				// Kept and applied later, to what reaches the decorator's
				// parameter at its other calls.
				c.funcs[first.Name] = a.laterApplied(e1)
			case applied.def != nil:
				c.funcs[first.Name] = map[*index.Function]bool{applied.def: true}
			case applied.arg != nil:
				c.funcs[first.Name] = a.argFuncs(e.Caller, cc, argBinding{node: applied.arg})
			default:
				c.funcs[first.Name] = nil
			}
			out = addContext(out, c)
		}
		if len(out) > maxCallContexts {
			return nil, false
		}
	}
	return out, true
}

// laterApplied are the functions decorator closure e1 may be applied to
// where a call of its factory keeps the closure (`graphed =
// factory(...)`, then `graphed(fn)`): the first argument of every call of
// e1 that is not a decoration, nil where one cannot be told or e1 is also
// applied as a decorator by name (`@graphed`: a call the analysis may
// summarize without an edge).
func (a *analyser) laterApplied(e1 *index.Function) map[*index.Function]bool {
	if a.decoratorUse()[e1] {
		return nil
	}
	out := map[*index.Function]bool{}
	for _, e := range a.g.In[e1] {
		if e.Site != nil && e.Site.Kind() == "decorator" {
			if a.factoryCall(decoratorExpr(e.Site), e1.Outer) {
				continue // `@factory(...)`: that instance's own application
			}
			return nil
		}
		if e.Site == nil || e.Caller == nil || e.Site.Kind() != "call" {
			return nil
		}
		args := e.Site.Get("arguments")
		if args == nil || args.Kind() != "argument_list" {
			return nil
		}
		var first *Node
		for _, x := range args.NamedChildren() {
			if x.Kind() != "comment" {
				first = x
				break
			}
		}
		if first == nil || first.Is("keyword_argument", "list_splat", "dictionary_splat") {
			return nil
		}
		fs := a.argFuncs(e.Caller, callCtx{}, argBinding{node: first})
		if fs == nil {
			return nil
		}
		for f := range fs {
			out[f] = true
		}
	}
	return out
}

// factoryCall: n is a call whose only callee is factory.
func (a *analyser) factoryCall(n *Node, factory *index.Function) bool {
	if n == nil || n.Kind() != "call" {
		return false
	}
	es := a.g.Callees(n)
	for _, e := range es {
		if e.Callee != factory {
			return false
		}
	}
	return len(es) > 0
}

// decoratorExpr is the expression of decorator node d.
func decoratorExpr(d *Node) *Node {
	for _, c := range d.NamedChildren() {
		if c.Kind() != "comment" {
			return syntax.Unparen(c)
		}
	}
	return nil
}

// application is what the closure a factory call returns is applied to:
// the def it decorates (innermost), an argument, or unknown (a decorator
// under another: what it gets is what those return).
type application struct {
	def *index.Function
	arg *Node
}

// appliedTo says what the result of call site (a call of a factory) is
// applied to, false where it is not applied on the spot (bound to a name,
// returned, stored: it may be applied to anything, any number of times).
func appliedTo(site *Node, caller *index.Function) (application, bool) {
	c := site
	for c.Parent() != nil && c.Parent().Kind() == "parenthesized_expression" {
		c = c.Parent()
	}
	p := c.Parent()
	if p == nil {
		return application{}, false
	}
	switch p.Kind() {
	case "decorator":
		dd := p.Parent()
		if dd == nil || dd.Kind() != "decorated_definition" {
			return application{}, false
		}
		var last *Node
		for _, x := range dd.Children() {
			if x.Kind() == "decorator" {
				last = x
			}
		}
		def := dd.Get("definition")
		if last != p || def == nil || def.Kind() != "function_definition" {
			return application{}, true
		}
		f := caller.File.FuncAt(def)
		if f == nil {
			return application{}, true
		}
		return application{def: f}, true
	case "call":
		if p.Get("function") != c {
			return application{}, false
		}
		args := p.Get("arguments")
		if args == nil || args.Kind() != "argument_list" {
			return application{}, false
		}
		for _, x := range args.NamedChildren() {
			switch x.Kind() {
			case "comment":
				continue
			case "keyword_argument", "list_splat", "dictionary_splat":
				return application{}, true
			}
			return application{arg: x}, true
		}
		return application{}, false
	}
	return application{}, false
}

// returnedOnly: every mention of inner's name in outer's own code, past
// inner's def, is the whole value of a return statement (the closure
// leaves outer only as its result).
func returnedOnly(outer, inner *index.Function) bool {
	if outer.Body == nil || inner.Def == nil {
		return false
	}
	src := outer.File.Src
	ok, seen := true, false
	syntax.Walk(outer.Body, func(n *Node) bool {
		if !ok {
			return false
		}
		if n.Is("function_definition", "class_definition", "lambda") && n != inner.Def {
			if n.Start <= inner.Def.Start && inner.Def.End <= n.End {
				return true
			}
			// A nested scope that mentions the name may store it.
			syntax.Walk(n, func(x *Node) bool {
				if x.Kind() == "identifier" && x.Text(src) == inner.Name {
					ok = false
				}
				return ok
			})
			return false
		}
		if n == inner.Def {
			return false
		}
		if n.Kind() == "identifier" && n.Text(src) == inner.Name {
			p := n.Parent()
			for p != nil && p.Kind() == "parenthesized_expression" {
				p = p.Parent()
			}
			if p == nil || p.Kind() != "return_statement" {
				ok = false
			}
			seen = true
		}
		return true
	})
	return ok && seen
}

// decoratorUse are the project functions some decorator names without
// calling them (`@deco`): each is applied to the def below it, a call the
// analysis may summarize instead of making an edge (guard/flow's
// wrapdeco.go), so their call sites are not all their calls.
func (a *analyser) decoratorUse() map[*index.Function]bool {
	if a.decoUse != nil {
		return a.decoUse
	}
	a.decoUse = map[*index.Function]bool{}
	for _, f := range a.g.Proj.Files {
		if f.Tree == nil || f.Tree.Root == nil {
			continue
		}
		syntax.Walk(f.Tree.Root, func(n *Node) bool {
			if n.Kind() != "decorator" {
				return true
			}
			e := decoratorExpr(n)
			if e == nil || e.Kind() == "call" {
				return false
			}
			if sym := a.g.Proj.ResolveExpr(f, e); sym.Func != nil {
				a.decoUse[sym.Func] = true
			}
			for _, v := range a.g.Values(e) {
				if v.Fn != nil {
					a.decoUse[v.Fn] = true
				}
			}
			return false
		})
	}
	return a.decoUse
}

// closureFuncs are the functions closure parameter name of fn holds in the
// live contexts, nil where not known (some live context does not say).
func closureFuncs(live []callCtx, name string) map[*index.Function]bool {
	out := map[*index.Function]bool{}
	for _, cc := range live {
		fs, ok := cc.funcs[name]
		if !ok || fs == nil {
			return nil
		}
		for f := range fs {
			out[f] = true
		}
	}
	return out
}
