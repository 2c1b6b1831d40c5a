package contexts

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// A replay under `if self.use_graph:` is not prepared by the `else` arm of
// an earlier `if self.use_graph:` (`if self.use_graph: self.inp.fill(b)
// else: self.inp = Batch(b)` ... `if self.use_graph: self.replay(i)`): the
// two arms test one flag, and only the arm that agrees with the replay's
// runs before it. A flag here is a name or an attribute chain (`use_graph`,
// `self.cfg.cuda_graph`), possibly negated, that nothing can change between
// the two tests: a local that no statement between them binds, or an
// attribute that, on objects of its object's classes, only constructors
// (`__init__`) bind.

// flagCond is a condition that tests one flag: its text (blanks dropped)
// and whether it is negated (`not self.use_graph`).
type flagCond struct {
	text string
	neg  bool
}

// flagOf reads a condition as a flag test; ok is false for anything else.
func flagOf(cond *Node, src []byte) (flagCond, bool) {
	x, neg := flagExpr(cond)
	if x == nil {
		return flagCond{}, false
	}
	return flagCond{text: blankless(x.Text(src)), neg: neg}, true
}

// flagExpr is the name or attribute chain a condition tests, without its
// parentheses and `not`s, and whether those negate it; nil for another
// condition.
func flagExpr(cond *Node) (*Node, bool) {
	neg := false
	for {
		cond = syntax.Unparen(cond)
		if cond == nil || cond.Kind() != "not_operator" {
			break
		}
		neg = !neg
		cond = cond.Get("argument")
	}
	if !attrChain(cond) {
		return nil, false
	}
	return cond, neg
}

// attrChain: a name, or attributes of attributes of a name.
func attrChain(n *Node) bool {
	for n != nil && n.Kind() == "attribute" {
		n = syntax.Unparen(n.Get("object"))
	}
	return n != nil && n.Kind() == "identifier"
}

// guardsOf are the flag tests that hold where call runs in fn: for each if
// statement around it, its condition where call lies in its consequence,
// the condition negated where call lies in its else clause (an elif chain
// says nothing: it is passed over).
func guardsOf(fn *index.Function, call *Node, src []byte) map[string]bool {
	out := map[string]bool{}
	for x := call; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil {
			break
		}
		var ifs *Node
		holds := true
		switch {
		case p.Kind() == "block" && p.Parent() != nil && p.Parent().Kind() == "if_statement" && p.Parent().Get("consequence") == p:
			ifs = p.Parent()
		case p.Kind() == "block" && p.Parent() != nil && p.Parent().Kind() == "else_clause" && p.Parent().Parent() != nil && p.Parent().Parent().Kind() == "if_statement":
			ifs, holds = p.Parent().Parent(), false
		}
		if ifs == nil || hasElif(ifs) {
			continue
		}
		if t, ok := flagOf(ifs.Get("condition"), src); ok {
			out[t.text] = holds != t.neg
		}
	}
	return out
}

func hasElif(ifs *Node) bool {
	for _, c := range ifs.Children() {
		if c.Kind() == "elif_clause" {
			return true
		}
	}
	return false
}

// withoutContrary drops, from the statements before call, the arm of an
// if statement (no elif) that tests a flag the call's own guards test the
// other way, where the flag is stable between the two (flagStable).
func (a *analyser) withoutContrary(fn *index.Function, call *Node, stmts []*Node) []*Node {
	src := fn.File.Src
	guards := guardsOf(fn, call, src)
	if len(guards) == 0 {
		return stmts
	}
	var out []*Node
	for _, s := range stmts {
		if s.Kind() != "if_statement" || hasElif(s) {
			out = append(out, s)
			continue
		}
		t, ok := flagOf(s.Get("condition"), src)
		want, tested := guards[t.text]
		if !ok || !tested || !a.flagStable(fn, t.text, s, call) {
			out = append(out, s)
			continue
		}
		// The consequence runs where the flag is !t.neg; the call where
		// it is want.
		out = append(out, s.Get("condition"))
		var keep *Node
		if want == !t.neg {
			keep = s.Get("consequence")
		} else {
			for _, c := range s.Children() {
				if c.Kind() == "else_clause" {
					keep = c.Get("body")
				}
			}
		}
		if keep != nil {
			out = append(out, keep)
		}
	}
	return out
}

// flagStable: nothing binds the flag between the if statement s and the
// call: for a local, no assignment to it in fn from s's start on; for an
// attribute chain, no assignment to that attribute of an object of the
// flag object's classes anywhere in the project but in a constructor (an
// object of no known class, on either side, may be the flag's).
func (a *analyser) flagStable(fn *index.Function, text string, s, call *Node) bool {
	src := fn.File.Src
	if i := strings.LastIndexByte(text, '.'); i >= 0 {
		cond, _ := flagExpr(s.Get("condition"))
		if cond == nil || cond.Kind() != "attribute" {
			return false
		}
		mine := map[*index.Class]bool{}
		for _, c := range a.g.InstanceClasses(cond.Get("object")) {
			mine[c] = true
		}
		if len(mine) == 0 {
			return false
		}
		for _, b := range a.attrBoundOutsideInit()[text[i+1:]] {
			theirs := a.g.InstanceClasses(b)
			if len(theirs) == 0 {
				return false
			}
			for _, c := range theirs {
				if mine[c] {
					return false
				}
			}
		}
		return true
	}
	stable := true
	syntax.Walk(fn.Body, func(n *Node) bool {
		if !stable || n.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		if n.Start >= s.Start && n.Start < call.Start && n.Is("assignment", "augmented_assignment", "for_statement", "named_expression") {
			for _, t := range boundNames(n, src) {
				if t == text {
					stable = false
				}
			}
		}
		return stable
	})
	return stable
}

// boundNames are the plain names an assignment, for loop or walrus binds
// (index's target names).
func boundNames(n *Node, src []byte) []string {
	if n.Kind() == "assignment" {
		return index.TargetNames(n.Get("left"), src)
	}
	return index.BindingNames(n, src)
}

// attrBoundOutsideInit are, by attribute name, the objects whose
// attribute some statement of the project binds (`x.name = ...`,
// augmented too, or `setattr(x, "name", v)`) outside an `__init__`.
func (a *analyser) attrBoundOutsideInit() map[string][]*Node {
	if a.attrBound != nil {
		return a.attrBound
	}
	a.attrBound = map[string][]*Node{}
	for _, f := range a.p.Files {
		if f.Tree == nil || f.Tree.Root == nil {
			continue
		}
		syntax.Walk(f.Tree.Root, func(n *Node) bool {
			if n.Kind() == "function_definition" {
				if name := n.Get("name"); name != nil && name.Text(f.Src) == "__init__" {
					return false
				}
			}
			if n.Kind() == "call" {
				if fn := n.Get("function"); fn != nil && fn.Text(f.Src) == "setattr" {
					if args := positional(n.Get("arguments")); len(args) >= 2 && args[1].Kind() == "string" {
						name := strings.Trim(args[1].Text(f.Src), "\"'")
						a.attrBound[name] = append(a.attrBound[name], args[0])
					}
				}
			}
			if n.Is("assignment", "augmented_assignment") {
				syntax.Walk(n.Get("left"), func(x *Node) bool {
					if x.Kind() == "attribute" {
						name := x.Get("attribute").Text(f.Src)
						a.attrBound[name] = append(a.attrBound[name], x.Get("object"))
					}
					return x.Kind() != "subscript"
				})
			}
			return true
		})
	}
	return a.attrBound
}
