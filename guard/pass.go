package guard

import "github.com/capguard/capguard/guard/flow"

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
	Region     *Region // set when the pass covers a capture or pre-replay region
	// skip are statements the pass's context never runs (the negation of
	// a capture guard in a captured function).
	skip map[*Node]bool
	a    *analysis
	out  *[]*Diagnostic
}

// Src is the file's source.
func (p *Pass) Src() []byte { return p.File.Src }

// HasContext reports whether the pass's function also runs in context c
// (through any chain).
func (p *Pass) HasContext(c Context) bool {
	return p.a.has(p.Fn, c) || (p.Region != nil && p.Region.Ctx == c)
}

// Walk visits every node of the pass's statements, not entering nested
// defs, classes or lambdas.
func (p *Pass) Walk(visit func(*Node) bool) {
	walkCode(p.Stmts, func(n *Node) bool {
		if p.skip[n] {
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

// Report records a finding on node n with the rule's severity.
func (p *Pass) Report(n *Node, msg string, fix *Fix) *Diagnostic {
	return p.ReportSeverity(n, p.Rule.Severity, msg, fix)
}

// ReportSeverity records a finding with an explicit severity.
func (p *Pass) ReportSeverity(n *Node, sev Severity, msg string, fix *Fix) *Diagnostic {
	d := &Diagnostic{
		Rule: p.Rule, Path: p.File.Path, Start: posOf(p.File, n.Start), End: posOf(p.File, n.End),
		Message: msg, Severity: sev, Context: p.Ctx, Chain: p.Chain, Resolution: p.Resolution, Fix: fix,
	}
	if p.Resolution == "" {
		d.Resolution = Resolved
	}
	if p.Fn != nil && p.Fn.Qual != "" {
		d.Function = p.Fn.Qual
	}
	*p.out = append(*p.out, d)
	return d
}

// Values are the points-to values expression n can have (empty when the
// analysis knows nothing of it): whether it is a tensor, a Triton kernel,
// a project object or an external one.
func (p *Pass) Values(n *Node) []flow.ValueInfo { return p.Proj.g.Values(n) }
