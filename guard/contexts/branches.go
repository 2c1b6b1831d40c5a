package contexts

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Branches the analysis does not evaluate (the severity policy: an error
// needs a chain that passes no condition the analysis could not evaluate).
// Conditional names the conditions it knows the meaning of (an optional
// input, a prefill branch, a cache miss, a debug gate); every other branch
// between a function's entry and a call or a finding — the body of an `if`
// or `elif`, an `else`, a branch of a conditional expression, the right
// operand of `and`/`or`, an `except` or `case` body — runs only under its
// condition, which is a setting, an input or a mode the analysis does not
// know: `if self.context_parallel:`, `elif config.hybrid_cp:`, `if
// self.fp8:`. The code is still captured where the condition holds, so its
// findings stay, as warnings that say the condition.
//
// Conditions the analysis does decide are not conditions: a capture guard
// (`torch.cuda.is_current_stream_capturing()`, a project's capture flag:
// their other branch is excluded already) and, in captured code, a
// condition the capture call's constants make true (`if use_graph:` where
// every captured call passes use_graph=True; prune.go).

// BranchCond is the condition, not evaluated, under which n runs in fn
// ("`self.fp8` holds", "`cu_seqlens is None` is false"), or "".
//
// The rules ask it from several goroutines at once; the analyser's caches
// (condMemo, and those behind captureTruth) are filled as it answers, so
// the answers are taken one at a time.
func (r *Result) BranchCond(fn *index.Function, c Context, n *Node) string {
	if r == nil || r.a == nil {
		return ""
	}
	r.branchMu.Lock()
	defer r.branchMu.Unlock()
	return r.a.branchCond(fn, c, n)
}

func (a *analyser) branchCond(fn *index.Function, c Context, n *Node) string {
	if fn == nil || fn.Body == nil || n == nil || fn.Kind == index.TopLevel {
		return ""
	}
	src := fn.File.Src
	var env map[string]string
	if c == Captured {
		env = a.captureEnv[fn]
	}
	for x := n; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil || p.Is("function_definition", "lambda", "class_definition") {
			return ""
		}
		var cond *Node
		neg := false
		switch {
		case (p.Kind() == "if_statement" || p.Kind() == "elif_clause") && x.Field() == "consequence":
			cond = p.Get("condition")
		case (x.Kind() == "else_clause" || x.Kind() == "elif_clause") && p.Kind() == "if_statement":
			cond, neg = p.Get("condition"), true
		case p.Kind() == "conditional_expression":
			if kids := p.NamedChildren(); len(kids) == 3 && x == kids[0] {
				cond = kids[1]
			} else if len(kids) == 3 && x == kids[2] {
				cond, neg = kids[1], true
			}
		case p.Kind() == "boolean_operator" && x == p.Get("right"):
			cond, neg = p.Get("left"), p.Operator(src) == "or"
		case p.Kind() == "except_clause":
			return "an exception is raised"
		case p.Kind() == "case_clause":
			return "`" + short(strings.TrimSpace(firstLine(p.Text(src)))) + "` matches"
		}
		if cond == nil || a.decided(fn, cond, env, neg) || alwaysTaken(cond, neg) {
			continue
		}
		t := short(strings.TrimSpace(cond.Text(src)))
		if neg {
			return "`" + t + "` is false"
		}
		return "`" + t + "` holds"
	}
	return ""
}

// alwaysTaken: cond is a literal that always takes this branch (`if
// True:`, `while 1:`'s arm; the else of `if False:`): no condition.
func alwaysTaken(cond *Node, neg bool) bool {
	switch syntax.Unparen(cond).Kind() {
	case "true":
		return !neg
	case "false", "none":
		return neg
	}
	return false
}

// decided: the analysis knows whether the branch of cond (negated: its
// else) runs under capture: a capture guard or flag, or the capture's
// constants.
func (a *analyser) decided(fn *index.Function, cond *Node, env map[string]string, neg bool) bool {
	cond = syntax.Unparen(cond)
	if cond == nil {
		return true
	}
	if a.condMemo == nil {
		a.condMemo = map[*Node]bool{}
	}
	guard, ok := a.condMemo[cond]
	if !ok {
		t, _ := a.captureTruth(fn.File, cond)
		guard = t != unknown || a.flagTruth(fn.File, cond) != unknown
		a.condMemo[cond] = guard
	}
	if guard {
		return true
	}
	// A decode test: its decode branch runs in the decode graphs engines
	// capture by default (the other branch is Conditional's prefill case).
	c, n := cond, neg
	for c != nil && c.Kind() == "not_operator" {
		c, n = syntax.Unparen(c.Get("argument")), !n
	}
	if c != nil {
		if name := testName(c, fn.File.Src); DecodeTests[name] && !n || PrefillTests[name] && n {
			return true
		}
	}
	if env != nil {
		t := evalConst(fn, env, cond)
		if t == unknown {
			t = entryNone(fn, env, cond)
		}
		switch t {
		case isTrue:
			return !neg
		case isFalse:
			return neg
		}
	}
	return false
}

// entryNone evaluates `p is None` / `p is not None` for a parameter p the
// function binds nowhere before the test, outside any loop: the value the
// captured calls pass (evalConst refuses a parameter bound anywhere, as
// `if out is None: out = torch.empty(...)` does).
func entryNone(fn *index.Function, env map[string]string, cond *Node) truth {
	src := fn.File.Src
	if cond.Kind() != "comparison_operator" {
		return unknown
	}
	kids := cond.NamedChildren()
	if len(kids) != 2 || kids[1].Kind() != "none" {
		return unknown
	}
	v := syntax.Unparen(kids[0])
	if v == nil || v.Kind() != "identifier" || !fn.HasParam(v.Text(src)) || boundBefore(fn, v.Text(src), int(cond.Start)) {
		return unknown
	}
	for x := cond.Parent(); x != nil && x != fn.Body; x = x.Parent() {
		if x.Is("for_statement", "while_statement") {
			return unknown
		}
	}
	val, ok := env[v.Text(src)]
	if !ok || val == "" || val == top {
		return unknown
	}
	isNone := strings.HasPrefix(val, "none:")
	switch op := cond.Operator(src); op {
	case "is":
		return of(isNone)
	case "is not":
		return of(!isNone)
	}
	return unknown
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
