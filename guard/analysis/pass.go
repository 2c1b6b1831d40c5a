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

// WarmUps are the warm-up calls the pass's capture region's function makes
// before it (contexts.Result.WarmUps).
func (p *Pass) WarmUps() []contexts.WarmUp {
	if p.Proj == nil || p.Proj.Ctx == nil || p.Region == nil {
		return nil
	}
	return p.Proj.Ctx.WarmUps[p.Region]
}

// For is a pass over another function fn, with this pass's rule, project
// and context, for a rule that reads code the pass's own code runs (what a
// warm-up call ran): it reports nothing of its own.
func (p *Pass) For(fn *Function) *Pass {
	q := &Pass{Rule: p.Rule, Proj: p.Proj, File: fn.File, Fn: fn, Ctx: p.Ctx, A: p.A}
	var none []*Diagnostic
	q.Out = &none
	return q
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

// Skipped reports whether n is in code the pass's context never runs (Skip):
// n or a node around it, within n's statement (the right operand of an
// `and` whose left is false under capture is skipped, not its statement).
func (p *Pass) Skipped(n *Node) bool {
	if len(p.Skip) == 0 {
		return false
	}
	for x := n; x != nil; x = x.Parent() {
		if p.Skip[x] {
			return true
		}
		if x.Is("function_definition", "class_definition", "lambda") {
			return false
		}
	}
	return false
}

// Calls returns the call nodes of the pass's statements.
func (p *Pass) Calls() []*Node {
	var out []*Node
	p.Walk(func(n *Node) bool {
		if n.Kind() == "call" {
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

// PrepByCall: the pass's code is replay-prep only by a region before a call
// that replays a graph (contexts' replaycall.go), which assumes the call
// comes after the capture. A rule that would add an assumption of its own
// there (that a graph reads what it names) reports nothing: a guess on a
// guess.
func (p *Pass) PrepByCall() bool { return p.ByCallRegion() != nil }

// ByCallRegion is the replay-prep region before a call that replays that
// the pass's code rests on (PrepByCall), or nil.
func (p *Pass) ByCallRegion() *Region {
	if p.Ctx != ReplayPrep {
		return nil
	}
	if p.Region != nil && p.Region.ByCall != nil {
		return p.Region
	}
	if p.Reach != nil {
		return p.Reach.ByCall
	}
	return nil
}
