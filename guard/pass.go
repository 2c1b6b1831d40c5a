package guard

// Pass is one rule looking at one function body (or region) in one context.
type Pass struct {
	Rule   *Rule
	Proj   *Project
	File   *File
	Fn     *Function
	Ctx    Context
	Stmts  []*Node
	Chain  []string
	Region *Region // set when the pass covers a capture or pre-replay region
	a      *analysis
	out    *[]*Diagnostic
}

// Src is the file's source.
func (p *Pass) Src() []byte { return p.File.Src }

// Text is a node's source text.
// HasContext reports whether the pass's function also runs in context c
// (through any chain).
func (p *Pass) HasContext(c Context) bool {
	return p.a.has(p.Fn, c) || (p.Region != nil && p.Region.Ctx == c)
}

// Walk visits every node of the pass's statements, not entering nested
// defs, classes or lambdas.
func (p *Pass) Walk(visit func(*Node) bool) { walkCode(p.Stmts, visit) }

// Calls returns the call nodes of the pass's statements.
func (p *Pass) Calls() []*Node { return callsIn(p.Stmts) }

// Report records a finding on node n with the rule's severity.
func (p *Pass) Report(n *Node, msg string, fix *Fix) *Diagnostic {
	return p.ReportSeverity(n, p.Rule.Severity, msg, fix)
}

// ReportSeverity records a finding with an explicit severity.
func (p *Pass) ReportSeverity(n *Node, sev Severity, msg string, fix *Fix) *Diagnostic {
	d := &Diagnostic{
		Rule: p.Rule, Path: p.File.Path, Start: p.File.Pos(n.Start), End: p.File.Pos(n.End),
		Message: msg, Severity: sev, Context: p.Ctx, Chain: p.Chain, Fix: fix,
	}
	if p.Fn != nil && p.Fn.Qual != "<module>" {
		d.Function = p.Fn.Qual
	}
	*p.out = append(*p.out, d)
	return d
}
