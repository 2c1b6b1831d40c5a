package contexts

import (
	"fmt"
	"slices"
	"sort"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// An attribute rebound before the capture. The points-to solve is
// flow-insensitive: an object's attribute holds every value any statement
// ever binds to it, so a function that binds `layer.dispatcher = other`
// and then captures `layer(x)` reaches, through `self.dispatcher.run()` in
// the layer's code, the dispatcher the constructor made as well as the one
// bound. The capture never runs the replaced one unless something binds it
// again between the binding and the capture, which the solve cannot order.
// So where the function holding the capture binds, before its first
// capture region and on every path to it (not in a branch the region is
// outside), the attribute a chain's call reads its callee through, on an
// object of the same class, and the callee is none the bound value can
// run, the edge is a condition on the chain: the finding says it, and is
// a warning. Where the bound value's classes or functions are unknown,
// nothing is said: no edge is taken for a guess.

// reboundCond says, for edge e of fn on a chain from the capture regions
// of capturer, that its callee comes through an attribute capturer binds
// to another value before its capture (above), or "".
func (a *analyser) reboundCond(capturer, fn *index.Function, e flow.Edge) string {
	if capturer == nil || e.Site == nil || e.Site.Kind() != "call" || e.Kind == flow.Traced {
		return ""
	}
	binds := a.rebindsBeforeCapture(capturer)
	if len(binds) == 0 {
		return ""
	}
	callee := syntax.Unparen(e.Site.Get("function"))
	if callee == nil || callee.Kind() != "attribute" {
		return ""
	}
	// `X.attr(...)` calls the attribute's value; `X.attr.m(...)` a method
	// of it.
	for _, c := range []struct {
		load   *Node
		method bool
	}{{callee, false}, {syntax.Unparen(callee.Get("object")), true}} {
		if c.load == nil || c.load.Kind() != "attribute" {
			continue
		}
		attr := c.load.Get("attribute").Text(fn.File.Src)
		objs := a.g.InstanceClasses(c.load.Get("object"))
		if len(objs) == 0 {
			continue
		}
		for _, b := range binds {
			if b.attr != attr || !sharesClass(b.objs, objs) || a.boundRuns(b.value, e.Callee, c.method) {
				continue
			}
			// Each line number follows the qualified name of the function
			// holding it ("pkg.mod.fn (line 12)"): the results cache finds
			// the file a text quotes a line of that way.
			return fmt.Sprintf("`%s` still holds, at the capture, a value the call of `%s` in %s (line %d) runs as %s: %s (line %d) binds it to `%s` first, and the analysis keeps every value an attribute ever held",
				syntax.Snippet(b.target.Text(capturer.File.Src), 40), syntax.Snippet(callee.Text(fn.File.Src), 40), fn.FullName(), fn.File.Line(e.Site),
				e.Callee.FullName(), capturer.FullName(), capturer.File.Line(b.target), syntax.Snippet(b.value.Text(capturer.File.Src), 40))
		}
	}
	return ""
}

// rebind is `obj.attr = value` in a function that captures, before its
// capture.
type rebind struct {
	target *Node // obj.attr
	attr   string
	objs   []*index.Class // obj's classes
	value  *Node
}

// rebindsBeforeCapture are the bindings of an attribute of an object of
// known class that fn makes before its first capture region, in a block
// that holds that region's statement or one around it (so every path to
// the capture runs them).
func (a *analyser) rebindsBeforeCapture(fn *index.Function) []rebind {
	if b, ok := a.rebinds[fn]; ok {
		return b
	}
	if a.rebinds == nil {
		a.rebinds = map[*index.Function][]rebind{}
	}
	var first *Region
	for _, r := range a.res.Regions {
		if r.Fn == fn && r.Ctx == Captured && r.Node != nil && (first == nil || r.Node.Start < first.Node.Start) {
			first = r
		}
	}
	var out []rebind
	if first != nil {
		blocks := map[*Node]bool{}
		for p := first.Node.Parent(); p != nil && p != fn.Def; p = p.Parent() {
			if p.Kind() == "block" || p.Kind() == "module" {
				blocks[p] = true
			}
		}
		if fn.Body != nil {
			blocks[fn.Body] = true
		}
		src := fn.File.Src
		for blk := range blocks {
			for _, st := range blk.NamedChildren() {
				if st.Start >= first.Node.Start || st.Kind() != "expression_statement" {
					continue
				}
				kids := st.NamedChildren()
				if len(kids) != 1 || kids[0].Kind() != "assignment" {
					continue
				}
				left, right := kids[0].Get("left"), kids[0].Get("right")
				if left == nil || right == nil || left.Kind() != "attribute" {
					continue
				}
				objs := a.g.InstanceClasses(left.Get("object"))
				if len(objs) == 0 {
					continue
				}
				out = append(out, rebind{target: left, attr: left.Get("attribute").Text(src), objs: objs, value: right})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].target.Start < out[j].target.Start })
	a.rebinds[fn] = out
	return out
}

// sharesClass: some class of x is one of y's.
func sharesClass(x, y []*index.Class) bool {
	return slices.ContainsFunc(x, func(c *index.Class) bool { return slices.Contains(y, c) })
}

// boundRuns says whether the value bound may run callee where a call reads
// it (method: a method of it is called): true where value has no values or
// one the analysis cannot look into.
func (a *analyser) boundRuns(value *Node, callee *index.Function, method bool) bool {
	vals := a.g.Values(value)
	if len(vals) == 0 {
		return true
	}
	for _, v := range vals {
		switch v.Kind {
		case flow.VInst, flow.VClass:
			if v.Cls == nil {
				return true
			}
			if callee.Class == nil {
				break
			}
			if method {
				// The method of that name the instance resolves to (an
				// override earlier in its MRO hides the callee).
				if a.g.H.Lookup(v.Cls, callee.Name) == callee {
					return true
				}
			} else if slices.Contains(a.g.H.MRO(v.Cls), callee.Class) {
				return true
			}
		case flow.VFunc, flow.VBound:
			if !method && v.Fn == callee {
				return true
			}
			if method {
				return true // a method of a function object: not looked into
			}
		default:
			return true
		}
	}
	return false
}
