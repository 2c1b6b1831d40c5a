package contexts

import (
	"fmt"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// A call through merged values. The points-to solve keeps one abstract
// object for every instance of a class and one set of values for every
// parameter and return, whatever the caller: a wrapper that every test
// and every training script hands its model holds each of those models,
// and a call through its field reaches each model's forward from any one
// capture. Most such sets cannot be told from a real choice among
// classes (a block that builds an MoE or a dense MLP by its config). Some
// can: a set that holds a value no call can take (a list, a module, a
// dtype: flow.Graph.Uncallable) is one the solve merged from flows that
// never meet in a run, since the program, calling it, never has those
// values there. Where such a call has more than one callee, that it runs
// the one a chain goes through is an assumption, not a proof: the edge is
// a condition on the chain (edgeCond), which a finding says, and the
// finding is a warning (an error is a proof). A call with one callee
// runs it whatever else the set holds, and a traced edge was seen to run.

// mergedCond says, for edge e of fn, that its call site calls through
// merged values (above), or "".
func (a *analyser) mergedCond(fn *index.Function, e flow.Edge) string {
	if e.Site == nil || e.Kind == flow.Traced || e.Site.Kind() != "call" {
		return ""
	}
	m, ok := a.merged[e.Site]
	if !ok {
		m = a.mergedSite(fn, e.Site, e.Site.Get("function"), a.siteCallees(fn, e.Site))
		if a.merged == nil {
			a.merged = map[*Node]*mergedCall{}
		}
		a.merged[e.Site] = m
	}
	return m.cond(e.Callee)
}

// mergedCall is a call that calls through merged values.
type mergedCall struct {
	fn      *index.Function
	site    *Node
	expr    string // what it calls, shortened
	callees int    // its distinct callees
	what    string // flow.Graph.Uncallable's phrase
}

// mergedSite is the call at site in fn, calling expr with n distinct
// callees, where it calls through merged values, else nil.
func (a *analyser) mergedSite(fn *index.Function, site, expr *Node, n int) *mergedCall {
	if expr == nil || n < 2 {
		return nil
	}
	what := a.g.Uncallable(expr)
	if what == "" {
		return nil
	}
	return &mergedCall{fn: fn, site: site, expr: syntax.Snippet(expr.Text(fn.File.Src), 40), callees: n, what: what}
}

// cond is the condition that the merged call runs callee ("" for nil).
func (m *mergedCall) cond(callee *index.Function) string {
	if m == nil {
		return ""
	}
	// How many values the set holds is not said: past the solve's caps
	// (24 containers, 64 guesses a node) it counts the ones that came
	// first, which follows the order the files were built in.
	return fmt.Sprintf("the call of `%s` in %s (line %d) runs %s, one of its %d callees, through values the analysis merged there (among them %s, which no call can take)",
		m.expr, m.fn.FullName(), m.fn.File.Line(m.site), callee.FullName(), m.callees, m.what)
}
