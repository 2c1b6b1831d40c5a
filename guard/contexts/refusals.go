package contexts

import (
	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Statements that raise while a stream captures guard what follows them in
// their block, as `if torch.cuda.is_current_stream_capturing(): raise`
// does (guard):
//
//   - an assert that fails under capture: `assert not
//     torch.cuda.is_current_stream_capturing(), "warm up first"` (or of a
//     capture flag, or a project predicate: captureTruth);
//   - a call of a project helper that refuses capture: every function the
//     call can reach raises on every path while the stream captures,
//     because its body, before any statement that can return, holds such an
//     assert, an `if <capturing>: raise` with no else, a call of another
//     helper that refuses (`ensure_not_capturing()`), or a plain `raise`
//     reached because every return before it is under `if not capturing:`
//     (`if not torch.cuda.is_current_stream_capturing(): return` then
//     `raise RuntimeError(...)`).
//
// A helper that can return first (`if key in cache: return cache[key]`)
// or that refuses only on a condition (`if strict and capturing: raise`)
// guards nothing. A `try` that catches the refusal runs the statements
// after it, so only the statements after the call in its own block are
// guarded. An assert vanishes under `python -O`, where the code it guards
// would run under capture anyway: capguard takes asserts as run.

// refusal is a candidate: an assert, or a statement whose expression is a
// call (an expression statement or an assignment's right side).
type refusal struct {
	fn   *index.Function
	s    *Node
	call *Node // nil for an assert
}

// refusalOf is the candidate statement s is, if any.
func refusalOf(fn *index.Function, s *Node) (refusal, bool) {
	switch s.Kind() {
	case "assert_statement":
		return refusal{fn: fn, s: s}, true
	case "expression_statement":
		kids := s.NamedChildren()
		if len(kids) != 1 {
			return refusal{}, false
		}
		e := syntax.Unparen(kids[0])
		if e.Kind() == "assignment" {
			e = syntax.Unparen(e.Get("right"))
		}
		if e != nil && e.Kind() == "call" {
			return refusal{fn: fn, s: s, call: e}, true
		}
	}
	return refusal{}, false
}

// refusalGuards marks what follows each statement that raises under
// capture as not captured (guardFollowing).
func (a *analyser) refusalGuards() {
	for _, r := range a.refusals {
		if a.refuses(r) {
			a.guardFollowing(r.fn, r.s)
		}
	}
}

// guardFollowing marks the statements after s in its block, which run only
// when s did not raise under capture, as not captured: up to a statement
// that begins a capture of its own (`check(); with torch.cuda.graph(g):
// step()`: the check ran before the capture began).
func (a *analyser) guardFollowing(fn *index.Function, s *Node) {
	if a.captureStarts == nil {
		a.captureStarts = map[*index.Function][]*Node{}
		for _, g := range a.res.Regions {
			if g.Ctx == Captured && g.Node != nil && g.What != guardRegion {
				a.captureStarts[g.Fn] = append(a.captureStarts[g.Fn], g.Node)
			}
		}
	}
	var out []*Node
next:
	for _, x := range following(s) {
		for _, n := range a.captureStarts[fn] {
			if x.Start <= n.Start && n.End <= x.End {
				break next
			}
		}
		out = append(out, x)
	}
	a.guarded(fn, out...)
}

// refuses: r raises on every path while a stream captures.
func (a *analyser) refuses(r refusal) bool {
	if r.call == nil {
		kids := r.s.NamedChildren()
		if len(kids) == 0 {
			return false
		}
		t, _ := a.captureTruth(r.fn.File, kids[0])
		return t == isFalse
	}
	targets := a.g.CallTargets(syntax.Unparen(r.call.Get("function")))
	if len(targets) == 0 {
		return false
	}
	for _, t := range targets {
		// A target by a declared type or a name may be overridden by
		// one that does not refuse: only proved calls guard.
		if t.Fn == nil || t.Kind.Strength() < flow.Resolved.Strength() || !a.refusingHelper(t.Fn) {
			return false
		}
	}
	return true
}

// refusingHelper: a def whose body raises on every path while a stream
// captures, before any statement of it can return.
func (a *analyser) refusingHelper(fn *index.Function) bool {
	if fn.Kind != index.Def || fn.Generator || fn.Async || fn.Body == nil {
		return false
	}
	if v, ok := a.refusing[fn]; ok {
		return v
	}
	if a.refusing == nil {
		a.refusing = map[*index.Function]bool{}
	}
	a.refusing[fn] = false // recursion
	v, skipped := false, false
	for _, s := range fn.Body.NamedChildren() {
		if s.Kind() == "comment" {
			continue
		}
		// A plain raise counts once an `if not capturing: return` came
		// before it: a def that always raises (`raise
		// NotImplementedError`) is an abstract method's, which an override
		// the analysis did not see may replace.
		if s.Kind() == "raise_statement" && skipped {
			v = true
			break
		}
		if s.Kind() == "if_statement" {
			switch a.ifUnderCapture(fn, s) {
			case raisesUnderCapture:
				v = true
			case deadUnderCapture:
				skipped = true
				continue
			}
			if v {
				break
			}
		}
		if r, ok := refusalOf(fn, s); ok && a.refuses(r) {
			v = true
			break
		}
		if flow.MayReturn(s) {
			break
		}
	}
	a.refusing[fn] = v
	return v
}

type ifCapture uint8

const (
	runsUnderCapture   ifCapture = iota
	raisesUnderCapture           // `if <true under capture>: ... raise`
	deadUnderCapture             // `if <false under capture>: ...`
)

// ifUnderCapture is what an if statement with no else or elif does while
// a stream captures: raise (`if capturing: raise ...`), nothing (`if not
// capturing: return`), or what its statements do.
func (a *analyser) ifUnderCapture(fn *index.Function, s *Node) ifCapture {
	for _, c := range s.Children() {
		if c.Kind() == "else_clause" || c.Kind() == "elif_clause" {
			return runsUnderCapture
		}
	}
	switch t, _ := a.captureTruth(fn.File, s.Get("condition")); t {
	case isFalse:
		return deadUnderCapture
	case isTrue:
		if last := lastStmt(s.Get("consequence")); last != nil && last.Kind() == "raise_statement" {
			return raisesUnderCapture
		}
	}
	return runsUnderCapture
}
