package contexts

import (
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// backwardRoots: a capture that runs a backward pass (its captured code
// calls `loss.backward()`, `torch.autograd.backward` or
// `torch.autograd.grad`: a training step captured whole, a graphed
// callable's backward graph) runs the `backward` of every
// torch.autograd.Function whose `apply` its forward ran. Nothing calls a
// Function's backward by name: autograd does, so it was never reached.
// Each such backward becomes a captured root, reached from the function
// that applied it; whether the backward pass goes through that apply's
// output is not proved (a detached output, a no-grad region), so the
// root names it as an assumption and its findings are warnings. It
// returns how many roots it added.
func (a *analyser) backwardRoots() int {
	h := a.g.H
	if h == nil {
		return 0
	}
	// The captures that run a backward pass, and where: by the first two
	// functions of their chains (a region's function and the callee the
	// region calls: a decode region and a training region of one
	// capturing function are told apart), or the region's own statements.
	type key struct{ via, fn *index.Function }
	keyOf := func(r *Reach) (key, bool) {
		if len(r.Chain) < 2 {
			return key{}, false
		}
		return key{r.Chain[0], r.Chain[1]}, true
	}
	// The captured functions in source order (files, then definitions):
	// the first site found and the first applying function are the same on
	// every run.
	var captured []*index.Function
	for _, f := range a.p.Files {
		for _, fn := range allFuncs(f) {
			if a.res.Reached[fn][Captured] != nil {
				captured = append(captured, fn)
			}
		}
	}
	found := map[key]string{}
	for _, fn := range captured {
		r := a.res.Reached[fn][Captured]
		if k, ok := keyOf(r); ok && found[k] == "" {
			if site := a.backwardCall(fn, fn.BodyStmts()); site != "" {
				found[k] = site
			}
		}
	}
	runs := map[key]string{}
	byRegion := map[*Region][]key{}
	regionRuns := map[*Region]string{}
	for _, r := range a.roots {
		if r.ctx != Captured || r.via == nil {
			continue
		}
		k := key{r.via, r.fn}
		if strings.HasPrefix(r.why, "make_graphed_callables ") {
			// make_graphed_callables captures the callable's backward
			// pass too (its inputs or parameters require grad).
			runs[k] = r.why
		}
		if r.region == nil {
			continue
		}
		byRegion[r.region] = append(byRegion[r.region], k)
		if regionRuns[r.region] == "" {
			regionRuns[r.region] = found[k]
		}
		if regionRuns[r.region] == "" {
			regionRuns[r.region] = a.backwardCall(r.region.Fn, r.region.Stmts)
		}
	}
	for _, reg := range a.res.Regions {
		if site := regionRuns[reg]; site != "" {
			for _, k := range byRegion[reg] {
				if runs[k] == "" {
					runs[k] = site
				}
			}
		}
	}
	if len(runs) == 0 && len(a.callersBackward) == 0 {
		return 0
	}
	added := 0
	seen := map[*index.Function]bool{}
	for _, fn := range captured {
		r := a.res.Reached[fn][Captured]
		run := ""
		if k, ok := keyOf(r); ok {
			run = runs[k]
		}
		if run == "" && len(r.Chain) > 0 {
			// A root a capture of its callers' callables was assumed to
			// run, where that capture runs a backward pass too
			// (callers.go).
			run = a.callersBackward[r.Chain[0]]
		}
		if run == "" {
			continue
		}
		for _, e := range a.g.Out[fn] {
			fwd := e.Callee
			if fwd.Name != "forward" || fwd.Class == nil || e.Kind.Strength() < flow.Annotated.Strength() ||
				!h.Derives(fwd.Class, "autograd.Function", "torch.autograd.function.Function") {
				continue
			}
			bw := h.Lookup(fwd.Class, "backward")
			if bw == nil || seen[bw] || a.res.Reached[bw][Captured] != nil {
				continue
			}
			seen[bw] = true
			line := 0
			if e.Site != nil {
				line = fn.File.Line(e.Site)
			}
			cls := fwd.Class.Name
			a.roots = append(a.roots, root{fn: bw, ctx: Captured, via: fn, kind: e.Kind,
				why:     fmt.Sprintf("the backward pass of %s.apply (%s:%d), run under capture by %s", cls, fn.File.Path, line, run),
				assumed: fmt.Sprintf("assumes the backward pass run under capture (%s) goes through the output of %s.apply in %s", run, cls, fn.FullName())})
			added++
		}
	}
	return added
}

// backwardCall says where stmts run a backward pass (`.backward()` of a
// value no project class defines it for, `torch.autograd.backward`,
// `torch.autograd.grad`), or "".
func (a *analyser) backwardCall(fn *index.Function, stmts []*Node) string {
	f := fn.File
	for _, c := range callsIn(stmts) {
		callee := syntax.Unparen(c.Get("function"))
		if callee == nil {
			continue
		}
		at := fmt.Sprintf("`%s` in %s, line %d", short(callee.Text(f.Src)), fn.FullName(), f.Line(c))
		for _, d := range a.externalsOf(f, callee) {
			if d == "torch.autograd.backward" || d == "torch.autograd.grad" {
				return at
			}
		}
		if callee.Kind() != "attribute" || callee.Get("attribute").Text(f.Src) != "backward" || len(a.g.CallTargets(callee)) > 0 {
			continue
		}
		project := false
		for _, v := range a.g.Values(callee.Get("object")) {
			if v.Kind == flow.VInst || v.Kind == flow.VClass || v.Kind == flow.VModule {
				project = true
			}
		}
		if obj := syntax.Unparen(callee.Get("object")); !project && !(obj.Kind() == "identifier" && obj.Text(f.Src) == fn.Self()) {
			return at // `loss.backward()`, `self.loss.backward()`; not the receiver's own `self.backward()`
		}
	}
	return ""
}
