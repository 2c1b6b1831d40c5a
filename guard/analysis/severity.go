package analysis

import (
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/flow"
)

// The severity policy (README "Severity", docs/design.md "Severity
// policy"): an error is a proof. A finding is an error only when
//
//   - the code is proved to run in its context: a capture region's own
//     code, or a chain from a proved root (a capture region, a configured
//     entry point, a trace; not a built-in naming convention or a preset
//     pattern that matches any module's class by name) whose every edge
//     is traced, resolved or annotated (a `hierarchy` or `name` edge is a
//     guess at the callee);
//   - the chain passes no condition the analysis could not evaluate
//     (contexts.Conditional: an optional input, a prefill branch, a cache
//     miss);
//   - the context is not library mode (`launcher`: nothing in the project
//     captures the function; whether it is captured depends on callers
//     the analysis does not see); for the capture-hazard rules (CG1xx), not
//     claimed either (a docstring or comment that says the code is
//     capture-safe is the author's word, often about one branch, not a
//     capture the analysis sees);
//   - and the rule proved the hazard from the value model (a rule that
//     rests on an assumption about a value says so with
//     ReportAssuming).
//
// Anything else is a warning, and its message says what it assumed. Fixes
// follow the same facts: a safe fix on unproved code becomes unsafe
// (fixSafety), with the reason in its message.

// Proof is what a finding's context rests on: the assumptions that keep it
// from being proved ("" when none).
type Proof struct {
	// cond is the condition under which the code runs in its context
	// (contexts.Conditional), or "".
	cond string
	// edges are the weak edges of the chain, each said as an assumption
	// ("the call at a.py:12 resolves by name to pkg.A.f").
	edges []string
	// library is set in the launcher context.
	library bool
	// root is the chain's root when it is a guess by name (a built-in
	// convention, a preset pattern for any module: Reach.Assumed).
	root string
	// value are the rule's own assumptions about values (an unknown
	// device).
	value []string
	// claimed is set in the claimed context: a docstring or comment says
	// the code is capture-safe, which is the author's word that it runs
	// under capture, not a capture the analysis sees (and such words are
	// often about one branch, or about what the code makes safe).
	claimed bool
	// caught is, for a hazard whose only outcome is a capture that fails
	// (ReportCaptureError), the handler that takes that failure and goes
	// on without the graph (contexts' Region.Caught, Reach.Caught): the
	// hazard costs the graph, not the result.
	caught string
}

func (pr Proof) proved() bool {
	return pr.cond == "" && len(pr.edges) == 0 && !pr.library && pr.root == "" && len(pr.value) == 0 && !pr.claimed && pr.caught == ""
}

// assumptions are the proof's assumptions as phrases for a message and
// for Diagnostic.Assumes; the condition is said by the caller (onlyIf).
func (pr Proof) assumptions() []string {
	var out []string
	if pr.library {
		out = append(out, "library mode: nothing in the project captures this code, so whether it is captured depends on its callers")
	}
	if pr.claimed {
		out = append(out, "assumes the claim of capture safety means this code runs under capture, on this path (a claim is the author's word, not a capture the analysis sees)")
	}
	if pr.root != "" {
		out = append(out, pr.root)
	}
	out = append(out, pr.edges...)
	out = append(out, pr.value...)
	if pr.caught != "" {
		out = append(out, "the capture's failure is caught: "+pr.caught+" takes it and goes on without the graph, so no replay runs this code; the graph is lost, not the result")
	}
	return out
}

// proofOf works out what the pass's finding on node n rests on.
func (p *Pass) proofOf(n *Node) Proof {
	var pr Proof
	// Claimed code is checked as captured code, conditions included: an
	// `@lru_cache` body or a cache miss under a claim runs under capture
	// only if nothing warmed it.
	if (p.Ctx == Captured || p.Ctx == ReplayPrep || p.Ctx == Claimed) && p.Region == nil {
		pr.cond = p.Cond
		if pr.cond == "" && p.Fn != nil {
			if g := contexts.Conditional(p.Fn, n); g != "" {
				pr.cond = g + ", in " + p.Fn.FullName()
			} else if g := p.passedNone(n); g != "" {
				pr.cond = g + ", in " + p.Fn.FullName()
			} else if p.Proj != nil && p.Proj.Ctx != nil {
				if g := p.Proj.Ctx.BranchCond(p.Fn, p.Ctx, n); g != "" {
					pr.cond = g + ", in " + p.Fn.FullName()
				}
			}
		}
	}
	pr.library = p.Ctx == Launcher
	if pr.library && p.Fn != nil {
		// A library's callers are not seen: code under a flag they must
		// pass to reach it says so.
		if g := contexts.OptIn(p.Fn, n); g != "" {
			pr.cond = g + ", in " + p.Fn.FullName()
		}
	}
	// The capture-hazard rules (CG1xx) read a claim as a capture; the
	// claim rules (CG3xx: "a function that claims capture safety") are
	// about the claim itself.
	pr.claimed = p.Ctx == Claimed && p.Rule != nil && strings.HasPrefix(p.Rule.ID, "CG1")
	if p.Reach != nil && p.Region == nil {
		pr.root = p.Reach.Assumed
	}
	if p.Region != nil && p.Region.Assumed != "" {
		pr.root = p.Region.Assumed
	}
	if p.Region == nil && p.Resolution.Strength() < Annotated.Strength() {
		pr.edges = p.weakEdges()
	} else if p.Region == nil && p.Resolution == Annotated && p.Proj != nil && p.Proj.G != nil && p.Proj.G.Saturated > 0 {
		pr.edges = p.seededEdges()
	}
	return pr
}

// seededEdges says the chain's `annotated` edges as assumptions when the
// points-to solve passed its fact budget. A declared type (an annotation,
// a method's own class for self) seeds an expression only where the
// propagation left it empty, and past the budget an expression can be
// empty because the budget cut what would have reached it: the seed, and
// the edge through it, may stand for a value the program never has there.
// Within the budget an empty expression is one nothing reaches (an entry
// point's parameter), and its declared type is evidence.
func (p *Pass) seededEdges() []string {
	r := p.Reach
	budget := fmt.Sprintf("the points-to analysis passed its fact budget (%d facts), so an expression it left empty, which a declared type then filled, may have been cut short", p.Proj.G.Facts)
	whole := []string{fmt.Sprintf("assumes the declared types the call chain rests on reach %s: %s", p.fnName(), budget)}
	if r == nil {
		return whole
	}
	for i, k := range r.Kinds {
		if k != Annotated || i+1 >= len(r.Chain) {
			continue
		}
		caller, callee := r.Chain[i], r.Chain[i+1]
		at := p.edgeAt(caller, callee, k)
		return []string{fmt.Sprintf("assumes the call %s runs %s, as a declared type says: %s", at, callee.FullName(), budget)}
	}
	return whole
}

// maxWeakEdges bounds how many weak edges a message names.
const maxWeakEdges = 2

// weakEdges says the chain's `hierarchy` and `name` edges as assumptions,
// with the call site of each.
func (p *Pass) weakEdges() []string {
	var out []string
	r := p.Reach
	if r == nil || p.Proj == nil || p.Proj.G == nil {
		return []string{fmt.Sprintf("assumes the call chain, whose weakest edge is `%s`, reaches %s", p.Resolution, p.fnName())}
	}
	n := 0
	for i, k := range r.Kinds {
		if k.Strength() >= Annotated.Strength() || i+1 >= len(r.Chain) {
			continue
		}
		n++
		if n > maxWeakEdges {
			continue
		}
		caller, callee := r.Chain[i], r.Chain[i+1]
		at := p.edgeAt(caller, callee, k)
		switch k {
		case flow.Hierarchy:
			out = append(out, fmt.Sprintf("assumes the call %s runs the subclass override %s (resolved through the class hierarchy)", at, callee.FullName()))
		default:
			out = append(out, fmt.Sprintf("assumes the call %s resolves by name to %s (by method name, through an attribute stored under a computed name, through a module or member named by a string at run time, or as one of the functions a shared wrapper was given)", at, callee.FullName()))
		}
	}
	if n > maxWeakEdges {
		out = append(out, fmt.Sprintf("and %d more edges resolved so", n-maxWeakEdges))
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("assumes the call chain, whose weakest edge is `%s`, reaches %s", p.Resolution, p.fnName()))
	}
	return out
}

// edgeAt names the call site of the chain's edge of kind k from caller to
// callee: "in pkg.f (line 12)", or "in pkg.f" when no site is known. Named
// by function and line, not by path: a path is as the user named it, and
// a finding's message must not depend on the working directory.
func (p *Pass) edgeAt(caller, callee *Function, k EdgeKind) string {
	for _, e := range p.Proj.G.Out[caller] {
		if e.Callee == callee && e.Kind == k && e.Site != nil {
			return fmt.Sprintf("in %s (line %d)", caller.FullName(), caller.File.Line(e.Site))
		}
	}
	return "in " + caller.FullName()
}

func (p *Pass) fnName() string {
	if p.Fn == nil {
		return "this code"
	}
	return p.Fn.FullName()
}

// Report records a finding on node n with the rule's severity, as the
// severity policy allows it.
func (p *Pass) Report(n *Node, msg string, fix *Fix) *Diagnostic {
	return p.report(n, p.Rule.Severity, msg, fix, nil)
}

// ReportSeverity records a finding with an explicit severity, as the
// severity policy allows it: an error on unproved code is a warning that
// says what it assumed.
func (p *Pass) ReportSeverity(n *Node, sev Severity, msg string, fix *Fix) *Diagnostic {
	return p.report(n, sev, msg, fix, nil)
}

// ReportAssuming records a finding whose hazard rests on an assumption
// about a value the value model could not prove ("assumes `x` is a device
// tensor"): a warning that names it.
func (p *Pass) ReportAssuming(n *Node, msg string, fix *Fix, assumption string, more ...string) *Diagnostic {
	return p.report(n, p.Rule.Severity, msg, fix, append([]string{assumption}, more...))
}

// Conditional says whether code n of the pass's function runs under
// capture only under a condition that a finding on n would say (an
// optional input, a tensor type test, a prefill branch, a cache miss).
func (p *Pass) Conditional(n *Node) bool { return p.proofOf(n).cond != "" }

// ReportFrom records a finding on node n about a value that node from
// binds (a host value read earlier in the function): where from runs only
// under a condition (the arm of `if isinstance(x, torch.Tensor)`) and n
// whenever the function does, the hazard at n is there only when from ran,
// so the finding says from's condition. assumption, when not "", is as for
// ReportAssuming.
func (p *Pass) ReportFrom(n, from *Node, msg string, fix *Fix, assumption string) *Diagnostic {
	return p.reportFrom(n, from, p.Rule.Severity, msg, fix, valueAssumption(assumption))
}

// valueAssumption is a Report*From assumption as a proof's value list.
func valueAssumption(assumption string) []string {
	if assumption == "" {
		return nil
	}
	return []string{assumption}
}

// ReportCaptureError records a finding whose hazard, on the GPU, is a
// capture that fails (a host sync, a copy from pageable host memory, a
// data-dependent shape): where the capture's failure is caught and the
// code goes on without the graph (contexts' caught.go), it is a warning
// that names the handler.
func (p *Pass) ReportCaptureError(n *Node, msg string, fix *Fix) *Diagnostic {
	return p.reportOpt(n, nil, p.Rule.Severity, msg, fix, nil, true)
}

// ReportCaptureErrorFrom is ReportFrom for a hazard whose outcome is a
// capture that fails (ReportCaptureError): a value baked in that only a
// sync in the same captured code can have made.
func (p *Pass) ReportCaptureErrorFrom(n, from *Node, msg string, fix *Fix, assumption string) *Diagnostic {
	return p.reportOpt(n, from, p.Rule.Severity, msg, fix, valueAssumption(assumption), true)
}

func (p *Pass) report(n *Node, sev Severity, msg string, fix *Fix, value []string) *Diagnostic {
	return p.reportFrom(n, nil, sev, msg, fix, value)
}

func (p *Pass) reportFrom(n, from *Node, sev Severity, msg string, fix *Fix, value []string) *Diagnostic {
	return p.reportOpt(n, from, sev, msg, fix, value, false)
}

// caughtFailure is the handler that takes the failure of the capture the
// pass's code runs under, where every capture that can prove a finding
// there is caught (contexts' caught.go), or "".
func (p *Pass) caughtFailure() string {
	if p.Ctx != Captured {
		return ""
	}
	if p.Region != nil {
		return p.Region.Caught
	}
	if p.Reach != nil {
		return p.Reach.Caught
	}
	return ""
}

func (p *Pass) reportOpt(n, from *Node, sev Severity, msg string, fix *Fix, value []string, failsCapture bool) *Diagnostic {
	pr := p.proofOf(n)
	if pr.cond == "" && from != nil {
		pr.cond = p.proofOf(from).cond
	}
	pr.value = value
	if failsCapture {
		pr.caught = p.caughtFailure()
	}
	if pr.library {
		msg = libraryWording(msg)
	}
	if pr.cond != "" {
		msg += " (" + p.onlyIf() + " " + pr.cond + ")"
	}
	as := pr.assumptions()
	if len(as) > 0 {
		msg += " (" + strings.Join(as, "; ") + ")"
	}
	if !pr.proved() && sev == SeverityError {
		sev = SeverityWarning
	}
	fix = p.FixSafety(fix, pr)
	d := &Diagnostic{
		Rule: p.Rule, Path: p.File.Path, Start: PosOf(p.File, int(n.Start)), End: PosOf(p.File, int(n.End)),
		Message: msg, Severity: sev, Context: p.Ctx, Chain: p.Chain, Resolution: p.Resolution, Fix: fix,
		Condition: pr.cond, Assumes: as,
	}
	if p.Resolution == "" {
		d.Resolution = Resolved
	}
	if p.Fn != nil && p.Fn.Qual != "" {
		d.Function = p.Fn.Qual
	}
	*p.Out = append(*p.Out, d)
	return d
}

// libraryWording says a launcher finding as what it is: nothing shows the
// code captured; a caller that captures it would meet the hazard.
func libraryWording(msg string) string {
	for _, w := range []string{" in captured code", " while the stream is capturing"} {
		if strings.Contains(msg, w) {
			return strings.Replace(msg, w, " if a caller captures this function", 1)
		}
	}
	return "a caller that captures this function would meet this: " + msg
}

// FixSafety downgrades a safe fix where the pass's context is not proved:
// launcher (a library function nothing in the project captures), a chain
// with a name-resolved edge, or a condition.
func (p *Pass) FixSafety(fix *Fix, pr Proof) *Fix {
	if fix == nil || fix.Applicability != Safe {
		return fix
	}
	why := ""
	switch {
	case pr.cond != "":
		why = "the code " + p.onlyIf() + " " + pr.cond
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
	switch p.Ctx {
	case ReplayPrep:
		return "runs before a replay only if"
	case Launcher:
		return "runs only if"
	}
	return "captured only if"
}

// passedNone: n is in a captured function's branch for a None input that
// every captured call passes explicitly (contexts.Result.PassedNone).
func (p *Pass) passedNone(n *Node) string {
	if p.Ctx != Captured || p.Proj == nil || p.Proj.Ctx == nil {
		return ""
	}
	return p.Proj.Ctx.PassedNone(p.Fn, n)
}

// ContextAssumptions are what node n of fn rests on to run in context c,
// as a finding's assumptions (nil when proved): reached through fn's chain
// for c, or, where reg is not nil, as that region's statement. A finding
// that pairs its own site with a second one (CG201: captured code binds
// new memory to an attribute that replay-prep code fills) is proved only
// when both sites' contexts are, so it names the second site's
// assumptions too. Nil also when fn does not run in c at all (the caller
// asks only for sites it found in c).
func (a *Analysis) ContextAssumptions(fn *Function, c Context, n *Node, reg *Region) []string {
	p := &Pass{Proj: a.Proj, File: fn.File, Fn: fn, Ctx: c, A: a, Region: reg, Resolution: Resolved}
	if reg == nil {
		r := a.Reached[fn][c]
		if r == nil {
			return nil
		}
		p.Reach, p.Resolution, p.Cond, p.Chain = r, r.Weakest, r.Cond, r.Names()
	}
	pr := p.proofOf(n)
	if pr.proved() {
		return nil
	}
	var out []string
	if pr.cond != "" {
		out = append(out, fmt.Sprintf("assumes %s runs there: it %s %s", fn.FullName(), p.onlyIf(), pr.cond))
	}
	return append(out, pr.assumptions()...)
}
