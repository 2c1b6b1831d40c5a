package contexts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

func filepath_ToSlash(p string) string { return strings.ReplaceAll(p, "\\", "/") }

// rootsOfRegions: every project function a region's calls reach is a root
// of the region's context, with the region's function first in its chain.
func (a *analyser) rootsOfRegions() {
	for _, r := range a.res.Regions {
		// What each call of r's function passes decides what r captures
		// (callctx.go).
		var live []callCtx
		open := true
		if r.What != guardRegion {
			live, open = a.regionContexts(r)
			if !open && len(live) == 0 {
				continue // no call makes this capture
			}
		}
		for _, call := range RegionSites(a.g, r) {
			if a.res.IsExcluded(r.Fn, call) {
				continue
			}
			if a.siteLive == nil {
				a.siteLive = map[*Node]*siteContexts{}
			}
			sl := a.siteLive[call]
			if sl == nil {
				sl = &siteContexts{}
				a.siteLive[call] = sl
			}
			sl.open = sl.open || open
			sl.live = append(sl.live, live...)
			for _, e := range a.g.CapturedCallees(call) {
				if !open && !capturedThrough(r, live, call, e.Callee) || e.Callee.Kernel {
					continue
				}
				recv, ok := a.calleeRecv(&item{fn: r.Fn}, e)
				if !ok {
					continue // the call runs it only for receivers the region's self is not (receiver.go)
				}
				var warmCall *Node
				if r.Ctx == Captured && r.What != guardRegion {
					warmCall = a.warmRoot(r.Fn, r.Node, e.Callee, call)
				}
				a.roots = append(a.roots, root{fn: e.Callee, ctx: r.Ctx, via: r.Fn, kind: e.Kind,
					why: fmt.Sprintf("%s at %s:%d", r.What, r.Fn.File.Path, r.Fn.File.Line(r.Node)), site: call, warm: warmCall != nil, region: r, warmCall: warmCall,
					assumed: r.Assumed, cond: a.valueCond(r.Fn, r.Fn, e), recv: recv})
			}
		}
		// `with torch.cuda.graph(g): fn` where the region's own statements
		// hold decorators or nested defs run here: their calls too.
	}
}

type item struct {
	fn   *index.Function
	ctx  Context
	prev *item
	// capturer is the function that holds the capture (or pre-replay)
	// region the chain starts at (nil for other roots): no function that
	// calls it can run in that region (outerWrapper).
	capturer *index.Function
	// assumed is the root's assumption (Reach.Assumed), carried along.
	assumed string
	// byCall: the root's replay-prep region before a call that replays
	// (Reach.ByCall), nil for other roots.
	byCall *Region
	kind   flow.EdgeKind // of the edge into fn (the root's kind for a root)
	why    string
	pre    []*index.Function
	cond   string // the first condition on the chain (Conditional)
	// origin is the call site the chain last entered a function through,
	// not counting calls of closure variables (forward.go), and originFn
	// the function holding it.
	origin   *Node
	originFn *index.Function
	// recv are the classes fn's self may be of on this chain, the zero
	// set where the chain narrows nothing (receiver.go).
	recv recvSet
}

// propagate computes every function's contexts: for each strength, from
// the strongest down, the functions reachable from the roots through
// edges at least that strong get that strength (the widest path), and
// the shortest such chain.
func (a *analyser) propagate() {
	levels := []flow.EdgeKind{flow.Traced, flow.Resolved, flow.Annotated, flow.Hierarchy, flow.ByName}
	done := map[*index.Function]map[Context]bool{}
	mark := func(fn *index.Function, c Context) bool {
		if done[fn] == nil {
			done[fn] = map[Context]bool{}
		}
		if done[fn][c] {
			return false
		}
		done[fn][c] = true
		return true
	}
	// Proved roots first, then those guessed by name (Reach.Assumed); for
	// each, first through calls under no optional-input guard, then
	// through them: a function reached only so is captured conditionally.
	for _, assumedRoots := range []bool{false, true} {
		for _, conditional := range []bool{false, true} {
			for _, lvl := range levels {
				if a.stop() {
					return // Compute returns no result (Config.Canceled)
				}
				var queue []*item
				for _, r := range a.roots {
					if r.kind.Strength() < lvl.Strength() || (r.assumed != "") != assumedRoots || (r.cond != "" && !conditional) {
						continue
					}
					it := &item{fn: r.fn, ctx: r.ctx, kind: r.kind, why: r.why, pre: r.pre, assumed: r.assumed, origin: r.site, originFn: r.via,
						byCall: byCallRegion(r.region), cond: r.cond, recv: r.recv}
					if r.via != nil && (r.ctx == Captured || r.ctx == ReplayPrep) {
						if a.outerWrapper(r.via, r.fn) {
							continue
						}
						it.capturer = r.via
					}
					if r.via != nil && r.via != r.fn {
						it.prev = &item{fn: r.via, ctx: r.ctx, kind: flow.Resolved, why: r.why}
						it.why = ""
					}
					queue = append(queue, it)
				}
				// Functions reached at a stronger level are expanded again (their
				// weaker edges lead further) but keep their stronger reach.
				type fc struct {
					fn     *index.Function
					ctx    Context
					origin *Node  // for a forwarding closure: it is expanded per origin
					recv   string // the receivers it is expanded for (receiver.go)
				}
				recvs := map[fc]map[string]bool{}
				key := func(fn *index.Function, c Context, origin *Node, recv recvSet) fc {
					if _, known := a.siteLive[origin]; !known && !a.forwards(fn) {
						origin = nil
					}
					if recv.key != "" {
						// At most maxRecvKeys receiver sets a function and
						// context; past them the chain goes on unnarrowed.
						k, base := recv.key, fc{fn, c, origin, ""}
						if recvs[base][k] || len(recvs[base]) < maxRecvKeys {
							return fc{fn, c, origin, k}
						}
					}
					return fc{fn, c, origin, ""}
				}
				seen := map[fc]bool{}
				for len(queue) > 0 {
					it := queue[0]
					queue = queue[1:]
					k := key(it.fn, it.ctx, it.origin, it.recv)
					if seen[k] {
						continue
					}
					seen[k] = true
					if k.recv == "" {
						it.recv = recvSet{} // unnarrowed, or past maxRecvKeys
					} else {
						base := fc{k.fn, k.ctx, k.origin, ""}
						if recvs[base] == nil {
							recvs[base] = map[string]bool{}
						}
						recvs[base][k.recv] = true
					}
					if it.ctx == Captured && a.unselected[it.fn.Class] != "" {
						continue
					}
					if mark(it.fn, it.ctx) {
						a.record(it, lvl)
					} else {
						// Continue from the recorded (stronger) chain.
						c, o, of, rv := it.capturer, it.origin, it.originFn, it.recv
						it = a.itemOf(it.fn, it.ctx)
						it.capturer, it.origin, it.originFn, it.recv = c, o, of, rv
						it.assumed = a.res.Reached[it.fn][it.ctx].Assumed
						it.byCall = a.res.Reached[it.fn][it.ctx].ByCall
					}
					for _, e := range a.g.Out[it.fn] {
						if e.Kind.Strength() < lvl.Strength() || e.Callee.Kernel {
							continue // a kernel DSL body is the compiler's, not Python run here
						}
						if e.Callee == it.fn {
							// A recursive call adds nothing, unless it runs
							// on other receivers than this chain's (a
							// checker's `for c in self.required: c.handle()`
							// on a chain narrowed to one checker class).
							if r, ok := a.calleeRecv(it, e); !ok || r.key == it.recv.key {
								continue
							}
						}
						if e.Site != nil && within(a.res.ExcludedIn(it.fn, it.ctx), e.Site) {
							continue
						}
						if it.ctx == Launcher && (a.driverBarrier(e.Callee) || a.moduleSetup(e.Callee)) {
							continue // a host driver, a module's construction: no caller captures it (roots.go)
						}
						fwd := a.closureCall(it.fn, e.Site)
						if fwd && !a.forwardAllowed(it.origin, it.originFn, e.Callee) {
							continue // the wrapper forwards only to what its caller named
						}
						if !fwd && !a.passedThrough(it.fn, e.Site, it.origin, it.originFn, e.Callee) {
							continue // a parameter's call: only what the region's live contexts pass
						}
						kind := e.Kind
						if fwd && a.siteCallees(it.fn, e.Site) > 1 && a.forwardGuess(it.origin, it.originFn, e.Callee) {
							// A shared wrapper's call of the function it
							// wraps, where the chain's origin names none of
							// them: which one runs is a guess.
							kind = kind.Weaker(flow.ByName)
							if kind.Strength() < lvl.Strength() {
								continue
							}
						}
						origin, originFn := e.Site, it.fn
						if fwd && (it.origin == nil || it.originFn == nil || a.originNames(it.origin, it.originFn) != nil) {
							// The chain keeps naming what its origin named;
							// an origin that names nothing (a closure called
							// by its own name) hands over to this call.
							origin, originFn = it.origin, it.originFn
						}
						recv, ok := a.calleeRecv(it, e)
						if !ok {
							continue // the edge runs only for receivers this chain's self is not (receiver.go)
						}
						if seen[key(e.Callee, it.ctx, origin, recv)] {
							continue
						}
						if it.capturer != nil && a.outerWrapper(it.capturer, e.Callee) {
							continue
						}
						cond := it.cond
						if cond == "" && (it.ctx == Captured || it.ctx == ReplayPrep || it.ctx == Claimed) {
							g := a.edgeCond(it.capturer, it.fn, it.ctx, e)
							if g != "" && !conditional {
								continue
							}
							cond = g
						}
						queue = append(queue, &item{fn: e.Callee, ctx: it.ctx, prev: it, kind: kind, cond: cond, capturer: it.capturer, assumed: it.assumed, byCall: it.byCall,
							origin: origin, originFn: originFn, recv: recv})
					}
				}
			}
		}
	}
}

// outerWrapper reports whether fn calls (directly or through any chain of
// edges stronger than `name`) the function capturer that holds a capture
// region: then fn is a caller of that capture (a wrapper around the graph
// runner, or the runner's own entry point), not code the capture runs. A
// capture cannot start itself again: a call chain from captured code back
// into its capturer would be a nested capture of the stream. The
// points-to analysis can still make one up where a field or name is
// rebound to a wrapper of its own value (`self.model =
// GraphRunner(self.model)`: the runner's model then holds the runner).
// The same holds for the code before a replay: it does not run the
// function that replays.
func (a *analyser) outerWrapper(capturer, fn *index.Function) bool {
	if a.callers == nil {
		a.callers = map[*index.Function]map[*index.Function]bool{}
	}
	set, ok := a.callers[capturer]
	if !ok {
		set = map[*index.Function]bool{capturer: true}
		queue := []*index.Function{capturer}
		for len(queue) > 0 {
			f := queue[0]
			queue = queue[1:]
			for _, e := range a.g.In[f] {
				if e.Kind == flow.ByName || set[e.Caller] {
					continue
				}
				set[e.Caller] = true
				queue = append(queue, e.Caller)
			}
		}
		a.callers[capturer] = set
	}
	return set[fn]
}

// itemOf rebuilds the item of a recorded reach, so that a chain continued
// at a weaker level starts from the stronger one.
func (a *analyser) itemOf(fn *index.Function, c Context) *item {
	r := a.res.Reached[fn][c]
	var it *item
	for i, f := range r.Chain {
		k := r.Weakest
		if i > 0 && i-1 < len(r.Kinds) {
			k = r.Kinds[i-1]
		}
		it = &item{fn: f, ctx: c, prev: it, kind: k, cond: r.Cond}
		if i == 0 {
			it.why = r.Root
		}
	}
	if len(r.Chain) == 1 {
		it.kind = r.Weakest
	}
	return it
}

// record stores the reach of a dequeued item.
func (a *analyser) record(it *item, lvl flow.EdgeKind) {
	var chain []*index.Function
	var kinds []flow.EdgeKind
	why := ""
	var pre []*index.Function
	for x := it; x != nil; x = x.prev {
		chain = append(chain, x.fn)
		if x.prev != nil {
			kinds = append(kinds, x.kind)
		}
		if x.why != "" {
			why = x.why
		}
		if x.prev == nil {
			pre = x.pre
		}
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	for i, j := 0, len(kinds)-1; i < j; i, j = i+1, j-1 {
		kinds[i], kinds[j] = kinds[j], kinds[i]
	}
	if len(pre) > 0 {
		// A traced root: its recorded stack leads to it.
		full := append(append([]*index.Function{}, pre...), chain...)
		k := make([]flow.EdgeKind, len(pre))
		for i := range k {
			k[i] = flow.Traced
		}
		chain, kinds = full, append(k, kinds...)
	}
	weakest := lvl
	if len(kinds) == 0 {
		weakest = it.rootKind()
	}
	if a.res.Reached[it.fn] == nil {
		a.res.Reached[it.fn] = map[Context]*Reach{}
	}
	a.res.Reached[it.fn][it.ctx] = &Reach{Chain: chain, Kinds: kinds, Weakest: weakest, Root: why, Cond: it.cond, Assumed: it.assumed, ByCall: it.byCall}
}

func (it *item) rootKind() flow.EdgeKind {
	for x := it; x != nil; x = x.prev {
		if x.prev == nil {
			return x.kind
		}
	}
	return flow.Resolved
}

// warn records what a user should know: patterns that match nothing, and
// capture regions that reach no project code.
func (a *analyser) warn() {
	for _, set := range [][]string{a.cfg.Captured, a.cfg.ReplayPrep, a.cfg.PostCapture} {
		for _, p := range set {
			if !a.matched[p] && !a.builtin[p] {
				a.res.Warnings = append(a.res.Warnings, fmt.Sprintf("entry point %q matches no function", p))
			}
		}
	}
	for _, r := range a.res.Regions {
		if r.Ctx != Captured || r.What == guardRegion {
			continue
		}
		calls := callsIn(r.Stmts)
		// An implicit site is one only where an edge runs project code.
		reached := len(implicitSites(a.g, r.Fn, r.Stmts)) > 0
		var names []string
		for _, c := range calls {
			if len(a.g.CapturedCallees(c)) > 0 || a.launchesKernel(c) {
				reached = true // a project kernel launched here is checked where it is launched
			}
			if fn := syntax.Unparen(c.Get("function")); fn != nil && len(names) < 3 {
				names = append(names, "`"+short(fn.Text(r.Fn.File.Src))+"`")
			}
		}
		if n := a.openRoots[r]; n > 0 {
			what := fmt.Sprintf("%d public callables of the project that launch kernels are", n)
			if n == 1 {
				what = "1 public callable of the project that launches kernels is"
			}
			a.res.Warnings = append(a.res.Warnings, fmt.Sprintf("%s:%d: the capture region runs what its callers pass (it calls %s): %s checked as captured, by assumption; name the callee with --entry-point, or run capguard trace, to prove it",
				r.Fn.File.Path, r.Fn.File.Line(r.Node), strings.Join(names, ", "), what))
		} else if !reached && len(calls) > 0 && !a.onlyExternal(r.Fn.File, calls) {
			a.res.Warnings = append(a.res.Warnings, fmt.Sprintf("%s:%d: the capture region reaches no project function (it calls %s): nothing it runs is checked; name the callee with --entry-point, or run capguard trace",
				r.Fn.File.Path, r.Fn.File.Line(r.Node), strings.Join(names, ", ")))
		}
	}
	for _, r := range a.res.Stale {
		n := r.Name
		if n == "" {
			n = r.Path + ":" + r.Qual
		}
		a.res.Warnings = append(a.res.Warnings, fmt.Sprintf("capture map: %s no longer resolves (stale)", n))
	}
	sort.Strings(a.res.Warnings)
}

// onlyExternal: every call is a known outside function (torch.*), a
// method of a tensor or another outside object, or a common method name
// (`x.item()`), so a region that reaches no project code is as it should
// be; a call of a name or method the analysis could not resolve is not.
// launchesKernel: call c is `kernel[grid](...)` of a project Triton kernel.
func (a *analyser) launchesKernel(c *Node) bool {
	fn := syntax.Unparen(c.Get("function"))
	if fn == nil || fn.Kind() != "subscript" {
		return false
	}
	for _, v := range a.g.Values(fn.Get("value")) {
		if v.Kind == flow.VKernel {
			return true
		}
	}
	return false
}

func (a *analyser) onlyExternal(f *index.File, calls []*Node) bool {
	for _, c := range calls {
		fn := syntax.Unparen(c.Get("function"))
		ext := false
		for _, v := range a.g.Values(fn) {
			if v.Kind == flow.VExt || v.Kind == flow.VTensor || v.Kind == flow.VExtInst {
				ext = true
			}
		}
		if fn != nil && fn.Kind() == "attribute" && flow.IsCommonMethod(fn.Get("attribute").Text(f.Src)) {
			ext = true
		}
		if !ext {
			return false
		}
	}
	return true
}

func short(s string) string { return syntax.Snippet(s, 40) }

// edgeCond says why call edge e of fn runs in context c (captured, claimed or
// replay-prep) only in some captures, or "": a condition on its call site
// (Conditional), a decode-test argument that rules its branch out
// (prefillSite), or a callee class only an opt-in gate selects or only
// a prefill branch builds. The class conditions need no site (a class
// used as a decorator or a context manager is entered without one).
func (a *analyser) edgeCond(capturer, fn *index.Function, c Context, e flow.Edge) string {
	if e.Site != nil {
		if g := a.conditionalAt(fn, e.Site); g != "" {
			return g + ", in " + fn.FullName()
		}
		if c == Captured {
			if g := a.prefillSite(fn, e.Site); g != "" {
				return g
			}
		}
		if g := a.branchCond(fn, c, e.Site); g != "" {
			return g + ", in " + fn.FullName()
		}
		if g := a.valueCond(capturer, fn, e); g != "" {
			return g
		}
	}
	if k := e.Callee.Class; k != nil && k != fn.Class {
		if g := a.gated[k]; g != "" {
			return g + ", which selects " + k.Name
		}
		if g := a.prefillOnly[k]; g != "" && c == Captured {
			return g
		}
	}
	return ""
}

type siteKey struct {
	fn   *index.Function
	site *Node
}

// conditionalAt is Conditional(fn, site), worked out once: propagate asks
// it of an edge in every context and for every capture that reaches the
// edge (on TransformerEngine two fifths of the contexts stage walked the
// same sites' enclosing branches again).
func (a *analyser) conditionalAt(fn *index.Function, site *Node) string {
	k := siteKey{fn, site}
	if g, ok := a.siteCond[k]; ok {
		return g
	}
	if a.siteCond == nil {
		a.siteCond = map[siteKey]string{}
	}
	g := Conditional(fn, site)
	a.siteCond[k] = g
	return g
}

// valueCond says that edge e of fn, on a chain from capturer's capture,
// takes its callee from values the solve could not tell apart or order:
// merged values (merged.go) or an attribute capturer rebinds before its
// capture (rebound.go). "" where neither.
func (a *analyser) valueCond(capturer, fn *index.Function, e flow.Edge) string {
	if g := a.mergedCond(fn, e); g != "" {
		return g
	}
	return a.reboundCond(capturer, fn, e)
}

// byCallRegion is r where it is a replay-prep region before a call that
// replays (replaycall.go), else nil.
func byCallRegion(r *Region) *Region {
	if r != nil && r.ByCall != nil {
		return r
	}
	return nil
}
