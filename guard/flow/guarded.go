package flow

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// A dispatch function returns different values for different constant
// arguments:
//
//	def get_layer_impl_builder(cls, layer_type):
//	    if layer_type == OpType.Attention:
//	        return AttentionBuilder
//	    elif layer_type == OpType.Linear:
//	        return LinearBuilder
//
// Context-insensitive flow would give every caller every builder (the
// embedding layer would get the attention implementation). A return under
// a test of a parameter against constants is guarded: a call whose
// argument for that parameter is a constant gets only the returns whose
// guard admits it (and the unguarded ones); any other call gets them all.

// guardedRet is one guarded return of a function.
type guardedRet struct {
	n NID
	retGuard
}

// retGuard is the test a return is under: parameter param is one of
// consts (constText form) or, neg, none of them (the return follows an
// `if p is None: return ...` that exits: the rest runs only for other p).
type retGuard struct {
	param  int
	consts []string
	neg    bool
}

// admits: call c (off parameters taken by the receiver) may take a return
// under guard g: its argument for the parameter is not a known constant,
// or the guard holds for it.
func (s *solver) admits(c *constraint, f *index.Function, off int, g *retGuard) bool {
	if g == nil {
		return true
	}
	k, known := s.argConst(c, f, off, g.param)
	if !known {
		return true
	}
	// An argument that is one of several constants (a parametrized test's
	// parameter: parametrize.go) takes the return when any of them does.
	for v := range strings.SplitSeq(k, constSep) {
		match := false
		for _, x := range g.consts {
			if x == v {
				match = true
			}
		}
		if match != g.neg {
			return true
		}
	}
	return false
}

// constText is a constant expression's canonical text: a string or number
// literal, True/False/None, or an enum-like member's last two parts
// (`OpType.Attention`, `backends.OpType.Attention` alike); "" otherwise.
func constText(n *Node, src []byte) string {
	n = syntax.Unparen(n)
	if n == nil {
		return ""
	}
	switch n.Kind() {
	case "string":
		if v, ok := index.StringLit(n, src); ok {
			return "'" + v
		}
	case "integer", "float", "true", "false", "none":
		return n.Text(src)
	case "attribute":
		t := n.Text(src)
		for _, c := range t {
			if !(c == '.' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return ""
			}
		}
		// An enum-like member (`OpType.Attention`): its class is
		// capitalized; `cfg.backend` is a value, not a constant.
		parts := strings.Split(t, ".")
		if len(parts) >= 2 && startsUpper(parts[len(parts)-2]) {
			return parts[len(parts)-2] + "." + parts[len(parts)-1]
		}
	}
	return ""
}

// decoratedConst is the constant of a decoration site's argument, the
// definition itself: it matches no literal.
const decoratedConst = "<definition>"

// returnGuard finds the innermost `if p == K` (`K == p`, `p is K`,
// `p in (K1, K2)`) whose body holds a return statement, p a parameter of
// fn, or the nearest such `if` before it in an enclosing block whose body
// always exits and that has no other branch (the return then runs only
// where the test is false: neg); ok is false for an unguarded return.
func returnGuard(fn *index.Function, ret *Node) (g retGuard, ok bool) {
	src := fn.File.Src
	for x := ret; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil {
			break
		}
		if p.Kind() == "block" {
			kids := p.NamedChildren()
			for i := len(kids) - 1; i >= 0; i-- {
				if kids[i] != x {
					continue
				}
				for j := i - 1; j >= 0; j-- {
					prev := kids[j]
					if prev.Kind() != "if_statement" || prev.Get("alternative") != nil || !exits(prev.Get("consequence")) {
						continue
					}
					if pi, cs := paramTest(fn, syntax.Unparen(prev.Get("condition")), src); pi >= 0 {
						return retGuard{param: pi, consts: cs, neg: true}, true
					}
				}
				break
			}
		}
		var cond *Node
		switch {
		case p.Kind() == "if_statement" && x.Field() == "consequence":
			cond = p.Get("condition")
		case p.Kind() == "elif_clause" && x.Field() == "consequence":
			cond = p.Get("condition")
		}
		if cond == nil {
			continue
		}
		if i, cs := paramTest(fn, syntax.Unparen(cond), src); i >= 0 {
			return retGuard{param: i, consts: cs}, true
		}
	}
	return retGuard{param: -1}, false
}

// exits: a block whose last statement returns or raises.
func exits(b *Node) bool {
	if b == nil {
		return false
	}
	kids := b.NamedChildren()
	for i := len(kids) - 1; i >= 0; i-- {
		switch kids[i].Kind() {
		case "comment":
			continue
		case "return_statement", "raise_statement":
			return true
		}
		return false
	}
	return false
}

// paramTest reads `p == K`, `p is K`, `p in (K, ...)` for a parameter p.
func paramTest(fn *index.Function, cond *Node, src []byte) (int, []string) {
	if cond == nil || cond.Kind() != "comparison_operator" {
		return -1, nil
	}
	kids := cond.NamedChildren()
	if len(kids) != 2 {
		return -1, nil
	}
	op := ""
	for _, c := range cond.Children() {
		if !c.Named() {
			op += c.Text(src)
		}
	}
	param := func(n *Node) int {
		n = syntax.Unparen(n)
		if n == nil || n.Kind() != "identifier" {
			return -1
		}
		for i, p := range fn.Params {
			if p.Name == n.Text(src) {
				return i
			}
		}
		return -1
	}
	switch op {
	case "==", "is":
		if i := param(kids[0]); i >= 0 {
			if k := constText(kids[1], src); k != "" {
				return i, []string{k}
			}
		}
		if i := param(kids[1]); i >= 0 {
			if k := constText(kids[0], src); k != "" {
				return i, []string{k}
			}
		}
	case "in":
		if i := param(kids[0]); i >= 0 {
			set := syntax.Unparen(kids[1])
			if set != nil && set.Is("tuple", "list", "set") {
				var out []string
				for _, e := range set.NamedChildren() {
					k := constText(e, src)
					if k == "" {
						return -1, nil
					}
					out = append(out, k)
				}
				return i, out
			}
		}
	}
	return -1, nil
}

// returnsInto sends f's returns to a call's result: the guarded ones only
// where the call's constant argument admits them.
func (s *solver) returnsInto(c *constraint, f *index.Function, off int, dst NID, st uint8) {
	s.copyTo(s.ret(f), dst, st)
	for i := range s.guarded[f] {
		if g := &s.guarded[f][i]; s.admits(c, f, off, &g.retGuard) {
			s.copyTo(g.n, dst, st)
		}
	}
}

// argConst is the constant a call passes for parameter i of f (off
// parameters taken by the receiver); known is false when the argument is
// not a constant or cannot be matched to the parameter.
func (s *solver) argConst(c *constraint, f *index.Function, off, i int) (string, bool) {
	if c.args == nil || i < off {
		return "", false
	}
	kw, j, how := argOf(c, f, off, i)
	switch {
	case how == argUnknown:
		return "", false
	case how == argAbsent:
		// Not passed: its default.
		if d := f.Params[i].Default; d != nil {
			if k := constText(d, f.File.Src); k != "" {
				return k, true
			}
		}
		return "", false
	case kw != nil:
		return kw.konst, kw.konst != ""
	case j < len(c.prepended()):
		return "", false
	}
	k := c.args.konst(j - len(c.prepended()))
	return k, k != ""
}
