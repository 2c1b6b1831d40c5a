package contexts

import (
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Calling contexts of a capturing function (rootsOfRegions). A function
// that holds a capture region and takes what it captures as a parameter —
// a timing helper `bench(fn, backend="event")` that captures `fn()` only
// `if backend == "graph":`, a runner whose captured step is passed in —
// captures, at each of its call sites, only what that call passes, and only
// where that call's arguments leave the region live. Without contexts the
// callable parameter holds every function any caller passes, and each of
// them would be taken as captured by a capture most calls never make.
//
// A calling context is one chain of call sites into the function, up to
// callDepth calls deep: the constants its parameters get there (bindArgs,
// joined with the caller's own context so that a parameter passed on,
// `measure(func, backend=backend)`, keeps its caller's constant) and, per
// parameter, the project functions the argument can be. A call site dead in
// its caller's context (deadUnder) adds none. A function with no call site
// in the project, a call site the analysis cannot match to the parameters
// (a splat, an alias, a decorated callee), a site without syntax (a
// framework's call), recursion or more than maxCallContexts (1024) contexts give
// one context that knows nothing: the region is live and every value of the
// parameter is captured, as without contexts. A region is dead only where
// it is dead in every context; a parameter's captured functions are those
// the live contexts pass.

const (
	callDepth       = 5
	maxCallContexts = 1024
)

// callCtx is one calling context: nil consts (or a nil entry in funcs)
// where nothing is known.
type callCtx struct {
	consts map[string]string
	// funcs are, per parameter, the project functions the argument can be
	// (nil: not known).
	funcs map[string]map[*index.Function]bool
	// key is constsKey(consts), made when addContext adds the context
	// ("" before: keyOf makes it then). A context's constants are not
	// changed once it is added; addContext compared each new context's
	// key with every kept one's, built again each time: a quarter of
	// Megatron-LM's contexts stage (a holdout).
	key string
}

// keyOf is c's constsKey.
func (c *callCtx) keyOf() string {
	if c.key == "" && len(c.consts) > 0 {
		c.key = constsKey(c.consts)
	}
	return c.key
}

type ctxKey struct {
	fn    *index.Function
	depth int
}

// callContexts are fn's calling contexts, depth calls deep.
func (a *analyser) callContexts(fn *index.Function, depth int) []callCtx {
	if a.ctxMemo == nil {
		a.ctxMemo = map[ctxKey][]callCtx{}
		a.ctxBusy = map[*index.Function]bool{}
	}
	k := ctxKey{fn, depth}
	if c, ok := a.ctxMemo[k]; ok {
		return c
	}
	unknown := []callCtx{{}}
	in := a.g.In[fn]
	if depth == 0 || len(in) == 0 || a.ctxBusy[fn] || fn.Kind != index.Def {
		return unknown
	}
	a.ctxBusy[fn] = true
	defer delete(a.ctxBusy, fn)
	var out []callCtx
	for _, e := range in {
		if e.Site == nil || e.Caller == nil {
			out = unknown
			break
		}
		args, ok := matchArgs(a.g, e.Caller, e.Site, fn)
		if !ok {
			out = unknown
			break
		}
		for _, cc := range a.callContexts(e.Caller, depth-1) {
			if cc.consts != nil {
				if dead := a.deadIn(e.Caller, &cc); within(dead, e.Site) {
					continue
				}
			}
			consts, _ := bindArgs(a, e.Caller, cc.consts, e.Site, fn)
			funcs := map[string]map[*index.Function]bool{}
			for name, b := range args {
				funcs[name] = a.argFuncs(e.Caller, cc, b)
			}
			if e.Caller == fn.Outer {
				// A closure called in the call of its maker that made it:
				// its closure parameters hold what that call's context
				// gives them (closure.go).
				carryClosure(fn, e.Caller, cc, consts, funcs)
			}
			out = addContext(out, callCtx{consts: consts, funcs: funcs})
		}
		if len(out) > maxCallContexts {
			out = unknown
			break
		}
	}
	a.ctxMemo[k] = out
	return out
}

// carryClosure copies into a context of closure fn, made at a call in
// its maker, the maker's context for the closure parameters fn reads
// from it.
func carryClosure(fn, maker *index.Function, cc callCtx, consts map[string]string, funcs map[string]map[*index.Function]bool) {
	for name, v := range cc.consts {
		if _, own := consts[name]; !own && closureOwner(fn, name) == maker {
			consts[name] = v
		}
	}
	for name, fs := range cc.funcs {
		if _, own := funcs[name]; !own && closureOwner(fn, name) == maker {
			funcs[name] = fs
		}
	}
}

// argFuncs are the project functions an argument can be, nil where not
// known: a default, a class, a kernel.
func (a *analyser) argFuncs(caller *index.Function, cc callCtx, b argBinding) map[*index.Function]bool {
	n := syntax.Unparen(b.node)
	if n == nil {
		return nil
	}
	if n.Kind() == "identifier" && cc.funcs != nil {
		name := n.Text(caller.File.Src)
		if fs, ok := cc.funcs[name]; ok && caller.HasParam(name) && (!Reassigned(caller, name) || fs != nil && ReboundOnlyIfNone(caller, name)) {
			// A parameter bound again only under `if name is None:`
			// keeps what a context passes when that is a function.
			return fs
		}
	}
	// What follows reads the argument's values only, the same in every
	// context: a site reached in many contexts asks once.
	if out, ok := a.argMemo[n]; ok {
		return out
	}
	if a.argMemo == nil {
		a.argMemo = map[*Node]map[*index.Function]bool{}
	}
	out := a.argValueFuncs(n)
	a.argMemo[n] = out
	return out
}

// argValueFuncs are the project functions the values of argument n can
// be, nil where not known (argFuncs).
func (a *analyser) argValueFuncs(n *Node) map[*index.Function]bool {
	for v := range a.g.ValuesUnordered(n) {
		switch v.Kind {
		case flow.VFunc, flow.VBound:
			if v.Fn == nil {
				return nil
			}
		case flow.VInst, flow.VPartial, flow.VCont, flow.VExt, flow.VExtInst, flow.VTensor:
			// Calling it runs its call targets: an instance's __call__
			// (a module's forward), a partial's function, the modules of
			// a sequence; an outside callable runs no project function.
		default:
			return nil // a class (its __new__ and __init__), a kernel, a module: not followed
		}
	}
	// The functions this argument can be are its call targets, none where
	// the analysis gives it no project value (an outside library's
	// object): the call graph's edges from the parameter's call come only
	// from values, so what this site does not pass, it does not capture.
	out := map[*index.Function]bool{}
	for _, t := range a.g.CallTargets(n) {
		out[t.Fn] = true
	}
	return out
}

// regionContexts are the calling contexts of r's function in which r is
// live, and whether nothing is known of them (then every value is live).
// A closure's contexts are joined with its instances' (closure.go): a
// region is live in a pair where neither its calling context's constants
// nor its instance's make it dead.
func (a *analyser) regionContexts(r *Region) (live []callCtx, open bool) {
	own := a.callContexts(r.Fn, callDepth)
	ownOpen := false
	for _, cc := range own {
		if cc.consts == nil && cc.funcs == nil {
			ownOpen = true
		}
	}
	inst, known := a.instanceContexts(r.Fn)
	if !ownOpen && a.calledInMaker(r.Fn) {
		// Each context carries its instance's closure parameters.
		inst, known = nil, false
	}
	if !known {
		if ownOpen {
			return nil, true
		}
		inst = []callCtx{{}}
	}
	if ownOpen {
		own = []callCtx{{}}
	}
	for _, oc := range own {
		for _, ic := range inst {
			cc := joinContexts(oc, ic)
			if cc.consts != nil {
				if dead := a.deadIn(r.Fn, &cc); within(dead, r.Node) {
					continue
				}
			}
			live = append(live, cc)
		}
	}
	return live, false
}

// calledInMaker: every call of closure fn is in its maker (its enclosing
// def), so its calling contexts carry the closure parameters
// (carryClosure).
func (a *analyser) calledInMaker(fn *index.Function) bool {
	in := a.g.In[fn]
	for _, e := range in {
		if e.Caller != fn.Outer {
			return false
		}
	}
	return len(in) > 0 && fn.Outer != nil && fn.Outer.Kind == index.Def
}

// joinContexts is a calling context of a closure with one of its instances
// (their names differ: a closure parameter is no parameter of the closure).
func joinContexts(own, inst callCtx) callCtx {
	if inst.consts == nil && inst.funcs == nil {
		return own
	}
	if own.consts == nil && own.funcs == nil {
		return inst
	}
	out := callCtx{consts: map[string]string{}, funcs: map[string]map[*index.Function]bool{}}
	for k, v := range inst.consts {
		out.consts[k] = v
	}
	for k, v := range own.consts {
		out.consts[k] = v
	}
	for k, v := range inst.funcs {
		out.funcs[k] = v
	}
	for k, v := range own.funcs {
		out.funcs[k] = v
	}
	return out
}

// capturedThrough says whether the call's callee target can run in region
// r given its live contexts: a call of a parameter the function never
// rebinds, or of a closure parameter (closure.go), captures only what the
// live contexts pass.
func capturedThrough(r *Region, live []callCtx, call *Node, target *index.Function) bool {
	callee := syntax.Unparen(call.Get("function"))
	if callee == nil || callee.Kind() != "identifier" {
		return true
	}
	name := callee.Text(r.Fn.File.Src)
	if (!r.Fn.HasParam(name) || Reassigned(r.Fn, name)) && closureOwner(r.Fn, name) == nil {
		return true
	}
	for _, cc := range live {
		fs, ok := cc.funcs[name]
		if !ok || fs == nil || fs[target] {
			return true
		}
	}
	return false
}

// siteContexts are the live contexts of the regions a call lies in; open:
// in one of them nothing is known.
type siteContexts struct {
	live []callCtx
	open bool
}

// passedThrough says whether a call at site in fn of fn's parameter can
// reach target on a chain that entered fn at origin, a call in a region
// whose live contexts are known (siteLive): where origin passes that
// parameter a variable of its own function that the contexts bind (its
// parameter, or a closure parameter), only what they bind.
func (a *analyser) passedThrough(fn *index.Function, site, origin *Node, originFn *index.Function, target *index.Function) bool {
	sl := a.siteLive[origin]
	if sl == nil || sl.open || site == nil || site.Kind() != "call" || originFn == nil {
		return true
	}
	callee := syntax.Unparen(site.Get("function"))
	if callee == nil || callee.Kind() != "identifier" {
		return true
	}
	name := callee.Text(fn.File.Src)
	if !fn.HasParam(name) || Reassigned(fn, name) {
		return true
	}
	args, ok := matchArgs(a.g, originFn, origin, fn)
	if !ok {
		return true
	}
	b, ok := args[name]
	if !ok || b.node == nil {
		return true
	}
	arg := syntax.Unparen(b.node)
	if arg.Kind() != "identifier" {
		return true
	}
	v := arg.Text(originFn.File.Src)
	if (!originFn.HasParam(v) || Reassigned(originFn, v)) && closureOwner(originFn, v) == nil {
		return true
	}
	fs := closureFuncs(sl.live, v)
	return fs == nil || fs[target]
}

// addContext adds c to cs, merged into the context with the same constants
// if there is one (the functions each parameter can be joined): what a
// region captures is the join over its live contexts, and whether it is
// live depends on the constants only, so merging loses nothing and keeps
// the contexts to one per constant environment.
func addContext(cs []callCtx, c callCtx) []callCtx {
	c.key = ""
	key := c.keyOf()
	for i := range cs {
		if (cs[i].consts == nil) != (c.consts == nil) || cs[i].keyOf() != key {
			continue
		}
		for name, fs := range c.funcs {
			old, ok := cs[i].funcs[name]
			switch {
			case !ok:
				cs[i].funcs[name] = fs
			case old == nil || fs == nil:
				cs[i].funcs[name] = nil
			case subsetOf(fs, old):
				// Nothing new: the kept set stands (the sets are never
				// written once made, so it may be shared; a copy at every
				// merge was 82 of the 330 MB NeMo's contexts allocated).
			case subsetOf(old, fs):
				cs[i].funcs[name] = fs
			default:
				merged := map[*index.Function]bool{}
				for f := range old {
					merged[f] = true
				}
				for f := range fs {
					merged[f] = true
				}
				cs[i].funcs[name] = merged
			}
		}
		return cs
	}
	return append(cs, c)
}

// subsetOf reports whether every function of a is in b.
func subsetOf(a, b map[*index.Function]bool) bool {
	if len(a) > len(b) {
		return false
	}
	for f := range a {
		if !b[f] {
			return false
		}
	}
	return true
}

func constsKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(1)
	}
	return b.String()
}

// ReboundOnlyIfNone: every binding of parameter name in fn's own code is in
// the body of an `if name is None:` (an optional callable that falls back
// to a stored one: `if func is None: func = self.func`), which a call
// passing a function never runs.
func ReboundOnlyIfNone(fn *index.Function, name string) bool {
	if fn.Body == nil {
		return false
	}
	src := fn.File.Src
	ok, seen := true, false
	syntax.Walk(fn.Body, func(x *Node) bool {
		if !ok {
			return false
		}
		switch x.Kind() {
		case "function_definition", "class_definition", "lambda":
			return false
		case "assignment", "augmented_assignment", "for_statement", "for_in_clause", "named_expression", "with_item", "delete_statement", "global_statement", "nonlocal_statement":
			var targets []string
			switch x.Kind() {
			case "assignment", "augmented_assignment", "for_statement", "for_in_clause":
				targets = index.TargetNames(x.Get("left"), src)
			case "named_expression":
				targets = index.TargetNames(x.Get("name"), src)
			default:
				if strings.Contains(x.Text(src), name) {
					ok = false // a form not read here: not proved
				}
			}
			for _, t := range targets {
				if t != name {
					continue
				}
				seen = true
				if x.Kind() != "assignment" || !underIsNone(fn, x, name, src) {
					ok = false
				}
			}
		}
		return true
	})
	return ok && seen
}

// underIsNone: x lies in the body of an `if name is None:` of fn.
func underIsNone(fn *index.Function, x *Node, name string, src []byte) bool {
	for c, p := x, x.Parent(); p != nil && c != fn.Body; c, p = p, p.Parent() {
		if p.Kind() == "if_statement" && p.Get("consequence") == c {
			cond := syntax.Unparen(p.Get("condition"))
			if cond != nil && cond.Kind() == "comparison_operator" {
				kids := cond.NamedChildren()
				if len(kids) == 2 && kids[0].Kind() == "identifier" && kids[0].Text(src) == name && kids[1].Kind() == "none" && strings.Contains(cond.Text(src), " is ") && !strings.Contains(cond.Text(src), " not ") {
					return true
				}
			}
		}
	}
	return false
}
