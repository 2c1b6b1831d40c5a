package contexts

import (
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Captures of the callers' callables. A project may ship a capture API
// that captures what its callers give it — `make_graphed_callables(modules,
// sample_args)` of a library that also ships the modules, a helper
// `capture(fn, *args)` — and never call it itself. Its capture region then
// calls a parameter that holds nothing in the project (an open call), so no
// function of the project is reached from it, and the code the callers
// pass, which is often the project's own public modules and functions, is
// checked as eager code.
//
// callersCallables makes the project's public callables captured roots
// beside such a capture: the top-level public functions and the `forward`
// or `__call__` of public classes that reach a kernel launch
// (launcherCandidates, as in library mode) and that the open call could
// run (its positional arguments fit their parameters; a splat fits any).
// That a caller passes them is an assumption each root names, so their
// findings are warnings. It returns how many roots it added.
func (a *analyser) callersCallables() int {
	var opens []openCall
	api := func(fn *index.Function) bool {
		return !TestFile(fn.File) && !benchmarkFunc(fn) && !a.programFuncs()[fn] && a.apiReaches(fn)
	}
	for _, r := range a.res.Regions {
		if r.Ctx != Captured || r.What == guardRegion || !api(r.Fn) {
			continue
		}
		derived := paramDerived(r.Fn)
		src := r.Fn.File.Src
		backward, asked := "", false // capturesBackward, asked at the region's first open call
		for _, call := range callsIn(r.Stmts) {
			callee := syntax.Unparen(call.Get("function"))
			if callee == nil || len(a.g.CapturedCallees(call)) > 0 || holdsCallable(a.g.Values(callee)) {
				continue
			}
			base := callee
			if callee.Kind() == "attribute" {
				if at := callee.Get("attribute").Text(src); at != "forward" && at != "__call__" {
					continue
				}
				base = syntax.Unparen(callee.Get("object"))
			}
			if base == nil || base.Kind() != "identifier" || !derived[base.Text(src)] || base != callee && holdsCallable(a.g.Values(base)) {
				continue
			}
			if !asked {
				backward, asked = a.capturesBackward(r.Fn), true
			}
			o := openCall{fn: r.Fn, call: call, region: r, backward: backward}
			if args := call.Get("arguments"); args != nil {
				for _, x := range args.NamedChildren() {
					switch x.Kind() {
					case "list_splat":
						o.star = true
					case "keyword_argument", "dictionary_splat", "comment":
					default:
						o.pos++
					}
				}
			}
			opens = append(opens, o)
		}
	}
	for _, g := range a.graphedOpen {
		// make_graphed_callables(callables, sample_args): the callables
		// take the sample arguments, whatever their number. Only where
		// they come from the function's parameters (`tuple(modules)`):
		// `wrap_in_hpu_graph(self.model.vision_tower)` graphs a model the
		// object holds, not one its callers pass.
		if !holdsCallable(a.g.Values(g.arg)) && fromParams(g.fn, g.arg) && api(g.fn) {
			// It graphs the callables' backward passes too.
			opens = append(opens, openCall{fn: g.fn, call: g.call, star: true,
				backward: fmt.Sprintf("make_graphed_callables in %s, line %d", g.fn.FullName(), g.fn.File.Line(g.call))})
		}
	}
	if len(opens) == 0 {
		return 0
	}
	added := 0
	for _, fn := range a.launcherCandidates(false) {
		if !callable(a, fn) || a.res.Reached[fn][Captured] != nil {
			continue
		}
		for _, o := range opens {
			if !o.star && !fits(fn, o.pos) {
				continue
			}
			f := o.fn.File
			callee := short(syntax.Unparen(o.call.Get("function")).Text(f.Src))
			a.roots = append(a.roots, root{fn: fn, ctx: Captured, kind: flow.Resolved,
				why: fmt.Sprintf("%s captures the callables its callers pass (`%s` at %s:%d)", o.fn.FullName(), callee, f.Path, f.Line(o.call)),
				assumed: fmt.Sprintf("assumes a caller passes %s to %s, whose capture runs what its callers give it (`%s`, line %d): nothing in the project passes it one",
					fn.FullName(), o.fn.FullName(), callee, f.Line(o.call))})
			added++
			if o.backward != "" {
				if a.callersBackward == nil {
					a.callersBackward = map[*index.Function]string{}
				}
				a.callersBackward[fn] = o.backward
			}
			if o.region != nil {
				if a.openRoots == nil {
					a.openRoots = map[*Region]int{}
				}
				a.openRoots[o.region]++
			}
			break
		}
	}
	return added
}

// capturesBackward says where a capture region of fn runs a backward pass
// (`torch.autograd.backward` in the backward graph's region of a
// make_graphed_callables of its own), or "".
func (a *analyser) capturesBackward(fn *index.Function) string {
	for _, r := range a.res.Regions {
		if r.Fn == fn && r.Ctx == Captured {
			if site := a.backwardCall(fn, r.Stmts); site != "" {
				return site
			}
		}
	}
	return ""
}

// openCall is a call in a capture region (or of make_graphed_callables)
// of a callable that the project never gives it: its callers' callables.
type openCall struct {
	fn     *index.Function
	call   *Node
	region *Region // nil for make_graphed_callables
	pos    int     // positional arguments
	// backward says where the capture runs the callables' backward pass
	// ("": it does not): a region of the same function that runs one,
	// or make_graphed_callables, which graphs it (backward.go).
	backward string
	star     bool // a *splat among them, or make_graphed_callables: any number
}

// graphedCall is a make_graphed_callables call in fn whose callables
// argument arg the analysis finds no project function in.
type graphedCall struct {
	fn   *index.Function
	call *Node
	arg  *Node
}

// holdsCallable: among vs is something a call can run: a project
// function, class, instance, bound method or partial, or an outside name
// or object (a torch module); not only containers, tensors or outside
// objects of torch's graph and stream types, which a local reused for
// several things in a long capture routine holds besides the callable.
func holdsCallable(vs []flow.ValueInfo) bool {
	for _, v := range vs {
		switch v.Kind {
		case flow.VCont, flow.VTensor:
		case flow.VExtInst:
			if !strings.HasPrefix(v.Ext, "torch.cuda.") {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// apiReaches: fn is, or is called from, a public function that no code of
// the project calls (outside tests, benchmarks and examples): an API its
// callers use.
func (a *analyser) apiReaches(fn *index.Function) bool {
	seen := map[*index.Function]bool{fn: true}
	queue := []*index.Function{fn}
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		if public(g) && !a.calledInProject(g) {
			return true
		}
		for _, e := range a.g.In[g] {
			if !seen[e.Caller] && !TestFile(e.Caller.File) && e.Caller.Kind != index.TopLevel {
				seen[e.Caller] = true
				queue = append(queue, e.Caller)
			}
		}
	}
	return false
}

// callable: fn is what a caller can hand over as a callable — a top-level
// function, or the `forward` of a torch.nn.Module or the `__call__` of a
// class, which calling an instance runs.
func callable(a *analyser, fn *index.Function) bool {
	if fn.Class == nil {
		return fn.Outer != nil && fn.Outer.Kind == index.TopLevel
	}
	switch fn.Name {
	case "__call__":
		return true
	case "forward":
		return a.g.H != nil && a.g.H.Derives(fn.Class, "nn.Module", "torch.nn.modules.module.Module")
	}
	return false
}

// fits: a call with n positional arguments (and any keywords) can bind
// fn's parameters: at least its required positional ones, at most all of
// them unless it takes *args. A method's receiver is the instance.
func fits(fn *index.Function, n int) bool {
	min, max, varargs := 0, 0, false
	for i, p := range fn.Params {
		if i == 0 && fn.Class != nil && !fn.Static {
			continue
		}
		switch p.Kind {
		case index.VarArgs:
			varargs = true
		case index.Positional, index.PosOnly:
			max++
			if p.Default == nil {
				min++
			}
		}
	}
	return n >= min && (varargs || n <= max)
}

// fromParams: expression n names one of fn's parameters (or a local bound
// from one) and not its receiver.
func fromParams(fn *index.Function, n *Node) bool {
	derived := paramDerived(fn)
	src := fn.File.Src
	self := fn.Self()
	return readsName(n, src, func(t string) bool { return derived[t] && t != self }) &&
		!(self != "" && readsName(n, src, func(t string) bool { return t == self }))
}

// readsName: expression n reads a bare name that want accepts (not an
// attribute's name, nor a keyword argument's), outside the lambdas and
// defs in it. (analysis.Mentions, above this package, reads into lambdas.)
func readsName(n *Node, src []byte, want func(string) bool) bool {
	hit := false
	syntax.Walk(n, func(x *Node) bool {
		if hit || x.Is("lambda", "function_definition") {
			return false
		}
		if x.Kind() == "identifier" && want(x.Text(src)) {
			if p := x.Parent(); p == nil || !(p.Kind() == "attribute" && x.Field() == "attribute" || p.Kind() == "keyword_argument" && x.Field() == "name") {
				hit = true
			}
		}
		return !hit
	})
	return hit
}

// paramDerived are fn's parameters (not its receiver) and the locals bound
// from them in its body: `func = callables[i]`, `for m, args in
// zip(modules, sample_args):`.
func paramDerived(fn *index.Function) map[string]bool {
	out := map[string]bool{}
	for _, p := range fn.Params {
		if p.Name != fn.Self() {
			out[p.Name] = true
		}
	}
	src := fn.File.Src
	mentions := func(n *Node) bool { return readsName(n, src, func(t string) bool { return out[t] }) }
	bind := func(target *Node) bool {
		grew := false
		syntax.Walk(target, func(x *Node) bool {
			if x.Is("attribute", "subscript") {
				return false
			}
			if x.Kind() == "identifier" && !out[x.Text(src)] {
				out[x.Text(src)] = true
				grew = true
			}
			return true
		})
		return grew
	}
	for round := 0; round < 4; round++ {
		grew := false
		for _, s := range fn.BodyStmts() {
			syntax.Walk(s, func(x *Node) bool {
				if x.Is("function_definition", "class_definition", "lambda") {
					return false
				}
				switch x.Kind() {
				case "assignment", "for_statement":
					l, r := x.Get("left"), x.Get("right")
					if l != nil && r != nil && mentions(r) && bind(l) {
						grew = true
					}
				}
				return true
			})
		}
		if !grew {
			break
		}
	}
	return out
}
