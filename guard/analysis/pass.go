package analysis

import (
	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/flow"
)

// Pass is one rule looking at one function body (or region) in one context.
type Pass struct {
	Rule  *Rule
	Proj  *Project
	File  *File
	Fn    *Function
	Ctx   Context
	Stmts []*Node
	Chain []string
	// Resolution is the weakest edge kind of Chain.
	Resolution EdgeKind
	// Reach is how the pass's function came to run in Ctx (nil for a
	// region's own code): the severity policy names its weak edges.
	Reach  *contexts.Reach
	Region *Region // set when the pass covers a capture or pre-replay region
	// Cond is the optional-input guard every chain to Fn passes
	// (contexts.Reach.Cond), or "".
	Cond string
	// Skip are statements the pass's context never runs (the negation of
	// a capture guard in a captured function).
	Skip map[*Node]bool
	// Facts are shared by the passes of one file (guard/tensors), nil for
	// one of its own.
	Facts any // *fileFacts
	A     *Analysis
	Out   *[]*Diagnostic
}

// Src is the file's source.
func (p *Pass) Src() []byte { return p.File.Src }

// WarmedSetUp are the statements of the pass's function that one-time
// set-up a proved warm-up ran (contexts.Result.Warmed): captured code skips
// them, and reads what the warm-up left.
func (p *Pass) WarmedSetUp() []*Node {
	if p.Proj == nil || p.Proj.Ctx == nil || p.Fn == nil {
		return nil
	}
	return p.Proj.Ctx.Warmed[p.Fn]
}

// WarmedBy are the capture regions whose warm-up ran the pass's function's
// WarmedSetUp.
func (p *Pass) WarmedBy() []*contexts.Region {
	if p.Proj == nil || p.Proj.Ctx == nil || p.Fn == nil {
		return nil
	}
	return p.Proj.Ctx.WarmedBy[p.Fn]
}

// HasContext reports whether the pass's function also runs in context c
// (through any chain).
func (p *Pass) HasContext(c Context) bool {
	return p.A.Has(p.Fn, c) || (p.Region != nil && p.Region.Ctx == c)
}

// Walk visits every node of the pass's statements, not entering nested
// defs, classes or lambdas.
func (p *Pass) Walk(visit func(*Node) bool) {
	WalkCode(p.Stmts, func(n *Node) bool {
		if p.Skip[n] {
			return false
		}
		return visit(n)
	})
}

// Calls returns the call nodes of the pass's statements.
func (p *Pass) Calls() []*Node {
	var out []*Node
	p.Walk(func(n *Node) bool {
		if n.Kind == "call" {
			out = append(out, n)
		}
		return true
	})
	return out
}

// Values are the points-to values expression n can have (empty when the
// analysis knows nothing of it): whether it is a tensor, a Triton kernel,
// a project object or an external one.
func (p *Pass) Values(n *Node) []flow.ValueInfo { return p.Proj.G.Values(n) }
