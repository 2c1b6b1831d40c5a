package contexts

import (
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// A capture whose failure is caught: the capture tried inside a `try`
// whose handler takes the error and goes on without the graph (a
// benchmark that times the graph when it can, an engine that falls back
// to eager steps where a step cannot be captured):
//
//	try:
//	    with torch.cuda.graph(g):
//	        out = step()
//	except Exception:
//	    return step          # run it eagerly from now on
//
// A hazard whose only outcome on the GPU is a capture that fails (a host
// sync, a copy from pageable host memory, a data-dependent shape) then
// costs the graph, not the result: `torch.cuda.graph`'s exit ends the
// capture on the way out, the handler runs, and no replay ever runs the
// code (probe cg101_caught_fallback_policy replays clean, and a graph
// captured after the failure replays right). Such findings are warnings
// that name the handler (analysis.Proof). A hazard that does not fail the
// capture (a host value baked in, a rebound tensor) is untouched: the
// handler never runs and the graph replays stale (probe
// cg102_caught_baked_pos).
//
// Only a `with` capture counts: a raw `capture_begin()` whose
// `capture_end()` the error skips leaves the stream capturing, and the
// fallback's own work on it is refused (probe cg101_caught_unended_pos).
// The `with` is torch's graph context or a project context manager that
// yields inside one (captureCM); another backend's graph context is not
// known to end its capture on an error.
//
// The try is the capture's own, in its function, or around every call of
// that function in the project (through at most maxCaughtDepth callers):
// a function nothing in the project calls is called from code the
// analysis does not see, and is not caught. The handler that takes the
// error is the first whose type covers a RuntimeError (bare, Exception,
// BaseException, RuntimeError, torch.AcceleratorError); it must hold no
// `raise` at all (a handler that re-raises, even on a condition, hands
// the failure on), nor a call that ends the process (`sys.exit(1)`).

// maxCaughtDepth bounds how many callers up a catching try is looked for.
const maxCaughtDepth = 3

// catchingTypes are the exception types whose handler takes the error a
// failed capture raises (torch raises torch.AcceleratorError, a
// RuntimeError, or RuntimeError itself).
var catchingTypes = map[string]bool{
	"Exception": true, "BaseException": true, "RuntimeError": true,
	"torch.AcceleratorError": true, "AcceleratorError": true,
}

// markCaught sets Region.Caught on every capture region whose failure is
// caught.
func (a *analyser) markCaught() {
	memo := map[caughtKey]string{}
	for _, r := range a.res.Regions {
		if r.Ctx != Captured || r.What != "with torch.cuda.graph" {
			continue
		}
		if site := catchingTry(r.Fn, r.Node); site != "" {
			r.Caught = site
			continue
		}
		r.Caught = a.callersCatch(r.Fn, maxCaughtDepth, memo, map[*index.Function]bool{})
	}
}

type caughtKey struct {
	fn    *index.Function
	depth int
}

// callersCatch: every call of fn in the project lies in a catching try of
// its caller, or in a caller whose every call does (depth more callers
// up). It returns the first such handler's words, or "".
func (a *analyser) callersCatch(fn *index.Function, depth int, memo map[caughtKey]string, path map[*index.Function]bool) string {
	if s, ok := memo[caughtKey{fn, depth}]; ok {
		return s
	}
	if path[fn] {
		return ""
	}
	path[fn] = true
	defer delete(path, fn)
	site := ""
	ins := a.g.In[fn]
	for _, e := range ins {
		s := ""
		if e.Site != nil {
			s = catchingTry(e.Caller, e.Site)
		}
		if s == "" && depth > 1 && e.Caller != fn {
			s = a.callersCatch(e.Caller, depth-1, memo, path)
		}
		if s == "" {
			site = ""
			break
		}
		if site == "" {
			site = s
		}
	}
	memo[caughtKey{fn, depth}] = site
	return site
}

// catchingTry: node n of fn lies in the body of a `try` of fn whose
// handler takes a failed capture's error and does not raise. It returns
// the handler in words ("`except Exception` in pkg.mod.f (line 12)"), or "".
func catchingTry(fn *index.Function, n *Node) string {
	src := fn.File.Src
	for x := n; x != nil && x.Parent() != nil; x = x.Parent() {
		p := x.Parent()
		if p.Is("function_definition", "class_definition", "lambda") {
			return ""
		}
		if p.Kind() != "try_statement" || p.Get("body") != x {
			continue
		}
		for _, c := range p.NamedChildren() {
			if c.Kind() != "except_clause" {
				continue
			}
			typ, catches := handlerCatches(c, src)
			if !catches {
				continue
			}
			if raises(c, src) {
				break // the first handler that takes the error hands it on
			}
			what := "`except:`"
			if typ != "" {
				what = "`except " + typ + "`"
			}
			// Named by function and line, not path: a message must not
			// depend on the working directory.
			return fmt.Sprintf("%s in %s (line %d)", what, fn.FullName(), fn.File.Line(c))
		}
	}
	return ""
}

// handlerCatches: except clause c takes a RuntimeError; typ is its type's
// text ("" for a bare except).
func handlerCatches(c *Node, src []byte) (typ string, ok bool) {
	var t *Node
	for _, x := range c.NamedChildren() {
		if x.Kind() == "block" {
			break
		}
		if x.Kind() == "as_pattern" {
			x = x.NamedChildren()[0]
		}
		t = syntax.Unparen(x)
		break
	}
	if t == nil {
		return "", true
	}
	typ = t.Text(src)
	if t.Kind() == "tuple" {
		for _, e := range t.NamedChildren() {
			if catchingTypes[strings.TrimSpace(syntax.Unparen(e).Text(src))] {
				return typ, true
			}
		}
		return typ, false
	}
	return typ, catchingTypes[typ]
}

// processEnders are the calls that end the process: a handler that makes one
// does not go on without the graph.
var processEnders = map[string]bool{"sys.exit": true, "exit": true, "quit": true, "os._exit": true, "os.abort": true}

// raises: the handler holds a raise statement or a call that ends the
// process (processEnders), outside nested scopes.
func raises(c *Node, src []byte) bool {
	return anyInScope(c, func(x *Node) bool {
		if x.Kind() == "call" {
			f := syntax.Unparen(x.Get("function"))
			return f != nil && processEnders[f.Text(src)]
		}
		return x.Kind() == "raise_statement"
	})
}

// caughtReach sets Reach.Caught on the captured functions that only
// caught captures reach with a chain that can prove a finding: the
// contexts are computed again without the caught captures' roots, and a
// function that chain still reaches, through edges at least as strong as
// `annotated`, from a proved root and on no condition (a capture whose
// failure is not caught, a graphed callable, an entry point, a trace),
// keeps its findings' severity. Nothing is computed again where no
// capture is caught.
func (a *analyser) caughtReach() {
	handler := map[string]string{} // a caught region root's why -> its handler
	for _, r := range a.roots {
		if r.ctx == Captured && r.region != nil && r.region.Caught != "" {
			handler[r.why] = r.region.Caught
		}
	}
	if len(handler) == 0 {
		return
	}
	full, roots := a.res.Reached, a.roots
	a.roots = nil
	for _, r := range roots {
		if r.region == nil || r.region.Caught == "" {
			a.roots = append(a.roots, r)
		}
	}
	a.res.Reached = map[*index.Function]map[Context]*Reach{}
	a.propagate()
	without := a.res.Reached
	a.res.Reached, a.roots = full, roots
	for fn, byCtx := range full {
		r := byCtx[Captured]
		if r == nil {
			continue
		}
		h, ok := handler[r.Root]
		if !ok {
			continue
		}
		if w := without[fn][Captured]; w != nil && w.Weakest.Strength() >= flow.Annotated.Strength() && w.Assumed == "" && w.Cond == "" {
			continue // an uncaught capture proves it too
		}
		r.Caught = h
	}
}
