package guard

import (
	"github.com/cudagraph-capguard/capguard/guard/contexts"
)

// analysis is what the rules see of the call graph and the contexts.
type analysis struct {
	proj    *Project
	regions []*Region
	reached map[*Function]map[Context]*contexts.Reach
	claims  map[*Function]*Node
	// attrsRead and buffers are computed on first use by CG201.
	attrsRead map[string]bool
	buffers   map[string]bool
	registry  map[string]bool // attributes registered as parameters or buffers (CG201)
	// afterReplay: attributes read after a `.replay()`, with the reader (CG201).
	afterReplay map[string]*Function
}

func newAnalysis(p *Project) *analysis {
	return &analysis{proj: p, regions: p.ctx.Regions, reached: p.ctx.Reached, claims: p.ctx.Claims}
}

func (a *analysis) has(fn *Function, c Context) bool {
	return a.reached[fn] != nil && a.reached[fn][c] != nil
}

// regionCallees are the project functions the region's statements call, in
// order (each callee of each call once).
func (a *analysis) regionCallees(r *Region) []*Function {
	var out []*Function
	for _, call := range callsIn(r.Stmts) {
		for _, e := range a.proj.g.Callees(call) {
			out = append(out, e.Callee)
		}
	}
	return out
}

// calleesOf are the project functions a call reaches.
func (a *analysis) calleesOf(call *Node) []*Function {
	var out []*Function
	for _, e := range a.proj.g.Callees(call) {
		out = append(out, e.Callee)
	}
	return out
}
