package guard

import (
	"github.com/capguard/capguard/guard/contexts"
	"github.com/capguard/capguard/guard/flow"
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
	Region     *Region // set when the pass covers a capture or pre-replay region
	// Cond is the optional-input guard every chain to Fn passes
	// (contexts.Reach.Cond), or "".
	Cond string
	// skip are statements the pass's context never runs (the negation of
	// a capture guard in a captured function).
	skip map[*Node]bool
	// facts are shared by the passes of one file (values.go), nil for
	// one of its own.
	facts *fileFacts
	a     *analysis
	out   *[]*Diagnostic
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

// ReportSeverity records a finding with an explicit severity. A fix is
// safe only where the code is known to run in the context that makes it
// right: in the launcher context (callers that may or may not capture) and
// on a chain with a name-resolved edge (a guessed call), a rule's safe fix
// is downgraded to unsafe.
func (p *Pass) ReportSeverity(n *Node, sev Severity, msg string, fix *Fix) *Diagnostic {
	cond := ""
	if (p.Ctx == Captured || p.Ctx == ReplayPrep) && p.Region == nil {
		cond = p.Cond
		if cond == "" && p.Fn != nil {
			if g := contexts.Conditional(p.Fn, n); g != "" {
				cond = g + ", in " + p.Fn.FullName()
			}
		}
	}
	if cond != "" {
		// Captured only in some captures: not proved for this one.
		if sev == SeverityError {
			sev = SeverityWarning
		}
		msg += " (" + p.onlyIf() + " " + cond + ")"
	}
	fix = p.fixSafety(fix, cond)
	d := &Diagnostic{
		Rule: p.Rule, Path: p.File.Path, Start: posOf(p.File, n.Start), End: posOf(p.File, n.End),
		Message: msg, Severity: sev, Context: p.Ctx, Chain: p.Chain, Resolution: p.Resolution, Fix: fix,
		Condition: cond,
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

// fixSafety downgrades a safe fix where the pass's context is not proved:
// launcher (a library function nothing in the project captures) or a chain
// with a name-resolved edge.
func (p *Pass) fixSafety(fix *Fix, cond string) *Fix {
	if fix == nil || fix.Applicability != Safe {
		return fix
	}
	why := ""
	switch {
	case cond != "":
		why = "the code " + p.onlyIf() + " " + cond
	case p.Ctx == Launcher:
		why = "nothing in the project captures this function, so whether the change is needed depends on its callers"
	case p.Resolution == ByName && p.Region == nil:
		why = "the call chain that makes this code captured has an edge resolved by method name only"
	default:
		return fix
	}
	f := *fix
	f.Applicability = Unsafe
	f.Message += "; unsafe: " + why
	return &f
}

// onlyIf says how a condition limits the pass's context: captured code
// is "captured only if", replay-prep code "runs before a replay only if".
func (p *Pass) onlyIf() string {
	if p.Ctx == ReplayPrep {
		return "runs before a replay only if"
	}
	return "captured only if"
}
