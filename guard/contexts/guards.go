package contexts

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Explicit capture guards (captureTruth and guard) beyond a direct call of
// torch.cuda.is_current_stream_capturing():
//
//   - an early exit: `if torch.cuda.is_current_stream_capturing(): raise`
//     (or `return ...`) with no else: nothing after the if runs under
//     capture (exits, following);
//   - a project helper that returns a capture test (`def is_capturing():
//     return torch.cuda.is_current_stream_capturing()`, or one returning a
//     capture flag): a call of it is the test it returns (helperCall);
//   - a project's own capture flag: an attribute or global set True
//     before a capture region in the function that captures, or before
//     the yield of a @contextmanager that sets it False again after it
//     (`self._is_capturing = True; yield; ... = False`), whose name says
//     capture or graph. It is True while a stream captures, so code under
//     its negation is not captured (flagTruth). A flag says "inside the
//     capture scope", which holds during warm-up too, so its true branch
//     is not a capture root: it is captured when captured code reaches it.

// captureFlags finds the project's capture flags.
func (a *analyser) captureFlags() {
	a.flags = map[string]string{}
	a.helpers = map[*index.Function]truth{}
	for _, r := range a.res.Regions {
		if r.Ctx != Captured || r.What == guardRegion {
			continue
		}
		for _, s := range precedingStmts(r.Fn, r.Node) {
			a.flagsSetIn(r.Fn.File, s, "true", func(key, text string) { a.flags[key] = text })
		}
	}
	for _, f := range a.p.Files {
		for _, fn := range f.Funcs {
			if !fn.Generator || !isContextManager(fn) {
				continue
			}
			y := firstYield(fn.Body)
			if y == nil {
				continue
			}
			before, after := map[string]string{}, map[string]bool{}
			forEachStmt(fn.Body, func(s *Node) {
				if s.Kind() != "expression_statement" {
					return
				}
				if s.End <= y.Start {
					a.flagsSetIn(f, s, "true", func(key, text string) { before[key] = text })
				} else if s.Start > y.Start {
					a.flagsSetIn(f, s, "false", func(key, _ string) { after[key] = true })
				}
			})
			for k, t := range before {
				if after[k] {
					a.flags[k] = t
				}
			}
		}
	}
}

// flagsSetIn calls set for each `x.flag = <lit>` or `flag = <lit>` in
// expression statement s whose name says capture or graph.
func (a *analyser) flagsSetIn(f *index.File, s *Node, lit string, set func(key, text string)) {
	if s.Kind() != "expression_statement" {
		return
	}
	for _, n := range s.NamedChildren() {
		if n.Kind() != "assignment" {
			continue
		}
		l, r := syntax.Unparen(n.Get("left")), syntax.Unparen(n.Get("right"))
		if l == nil || r == nil || r.Kind() != lit {
			continue
		}
		if key := flagKey(l, f.Src); key != "" {
			set(key, strings.TrimSpace(l.Text(f.Src)))
		}
	}
}

// flagKey is the key of a flag target or test: "." + the attribute's name,
// or the global's name; "" when the name says neither capture nor graph.
func flagKey(n *Node, src []byte) string {
	name, key := "", ""
	switch n.Kind() {
	case "attribute":
		name = n.Get("attribute").Text(src)
		key = "." + name
	case "identifier":
		name = n.Text(src)
		key = name
	default:
		return ""
	}
	l := strings.ToLower(name)
	if !strings.Contains(l, "captur") && !strings.Contains(l, "graph") {
		return ""
	}
	return key
}

// flagTruth: a capture flag is true while a stream captures.
func (a *analyser) flagTruth(f *index.File, cond *Node) truth {
	if len(a.flags) == 0 || cond == nil {
		return unknown
	}
	k := flagKey(cond, f.Src)
	if k == "" || a.flags[k] == "" {
		return unknown
	}
	if cond.Kind() == "identifier" {
		// A global flag, not a local of the same name.
		if fn := InnermostAt(f, int(cond.Start)); fn != nil && fn.Locals[k] && !fn.Globals[k] {
			return unknown
		}
	}
	return isTrue
}

// helperCall is the truth under capture of a call of a project predicate
// whose body only returns a capture test; every target must agree.
func (a *analyser) helperCall(call *Node) (truth, bool) {
	targets := a.g.CallTargets(syntax.Unparen(call.Get("function")))
	if len(targets) == 0 {
		return unknown, false
	}
	out, capturing := unknown, false
	for i, t := range targets {
		v, done := a.helpers[t.Fn]
		if !done {
			a.helpers[t.Fn] = unknown // recursion
			v = unknown
			if e := onlyReturn(t.Fn); e != nil {
				v, _ = a.captureTruth(t.Fn.File, e)
			}
			a.helpers[t.Fn] = v
		}
		if v == unknown || i > 0 && v != out {
			return unknown, false
		}
		out = v
		if e := onlyReturn(t.Fn); e != nil {
			if _, c := a.captureTruth(t.Fn.File, e); c {
				capturing = true
			}
		}
	}
	return out, capturing
}

// onlyReturn is the expression of a def whose body (after its docstring)
// is one return statement.
func onlyReturn(fn *index.Function) *Node {
	if fn == nil || fn.Kind != index.Def || fn.Body == nil {
		return nil
	}
	var stmts []*Node
	for _, s := range fn.Body.NamedChildren() {
		if s.Kind() == "comment" || s == fn.Docstring || fn.Docstring != nil && s.Start <= fn.Docstring.Start && fn.Docstring.End <= s.End {
			continue
		}
		stmts = append(stmts, s)
	}
	if len(stmts) != 1 || stmts[0].Kind() != "return_statement" {
		return nil
	}
	kids := stmts[0].NamedChildren()
	if len(kids) != 1 {
		return nil
	}
	return kids[0]
}

// exits: the block ends in a return or raise.
func exits(block *Node) bool {
	last := lastStmt(block)
	return last != nil && (last.Kind() == "return_statement" || last.Kind() == "raise_statement")
}

// LastStmt is block's last statement (comments aside), or nil.
func LastStmt(block *Node) *Node { return lastStmt(block) }

// lastStmt is block's last statement (comments aside), or nil.
func lastStmt(block *Node) *Node {
	if block == nil {
		return nil
	}
	var last *Node
	for _, s := range block.NamedChildren() {
		if s.Kind() != "comment" {
			last = s
		}
	}
	return last
}

// following are the statements after s in its block.
func following(s *Node) []*Node {
	p := s.Parent()
	if p == nil || p.Kind() != "block" && p.Kind() != "module" {
		return nil
	}
	var out []*Node
	for _, x := range p.NamedChildren() {
		if x.Start > s.Start && x.Kind() != "comment" {
			out = append(out, x)
		}
	}
	return out
}

func isContextManager(fn *index.Function) bool {
	for _, d := range fn.Decorators {
		if strings.Contains(d.Text(fn.File.Src), "contextmanager") {
			return true
		}
	}
	return false
}

func firstYield(n *Node) *Node {
	var y *Node
	syntax.Walk(n, func(x *Node) bool {
		if y != nil || x.Is("function_definition", "lambda", "class_definition") {
			return false
		}
		if x.Kind() == "yield" {
			y = x
		}
		return y == nil
	})
	return y
}
