package flow

import (
	"bytes"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// isinstance narrowing. A read of a local name inside the branch an
// `isinstance(name, T)` test selects sees only the values that can be a T:
//
//	if isinstance(model, list):
//	    model = model[0]      # a subscript of model's lists, not of its modules
//	x = y[0] if isinstance(y, tuple) else y
//	ok = isinstance(m, Block) and m.ready()
//
// Python guarantees it as long as the name is not bound again between the
// test and the read: a binding anywhere in the branch other than the
// assignment whose right-hand side holds the read turns it off, and so
// does a loop in the branch around such an assignment, or a nested
// function or lambda between the test and the read (it may run later).
// T must be known: builtin containers (list, tuple, dict, set, frozenset)
// or project classes, alone or in a tuple; any other T (an external
// class, a variable) narrows nothing. External objects the analysis cannot
// see into (VExt, VExtInst) always pass: they may be anything.

// narrowSpec is one test's set of types.
type narrowSpec struct {
	containers bool
	classes    []*index.Class
}

// narrowed returns the node a read n of local name (whose node is v)
// sees: v itself, or a filtered copy under an isinstance test.
func (s *solver) narrowed(sc scope, n *Node, name string, v NID) NID {
	fn := sc.fn
	if v < 0 || fn.Kind == index.TopLevel || fn.Body == nil {
		return v
	}
	// A closure's read of an enclosing function's name is narrowed by
	// the tests around the closure's definition in that function, if the
	// function binds the name nowhere after the test (the closure may run
	// any time after its definition).
	owner, at, closure := fn, n, false
	if !fn.Locals[name] {
		inner := fn
		owner = nil
		for o := fn.Outer; o != nil && o.Kind != index.TopLevel; o = o.Outer {
			if o.Locals[name] {
				owner = o
				break
			}
			inner = o
		}
		if owner == nil || owner.Body == nil || inner.Def == nil {
			return v
		}
		at, closure = inner.Def, true
	}
	src := owner.File.Src
	if !s.hasIsinstance(owner) {
		return v
	}
	if spec, ok := s.paramContract(owner, name); ok {
		return s.narrowNode(v, spec)
	}
	for c, a := at, at.Parent(); a != nil; c, a = a, a.Parent() {
		if a.Kind() == "block" || a == owner.Body {
			// `assert isinstance(name, T)` earlier in this block.
			if spec, ok := s.assertedBefore(owner, a, c, n, name); ok {
				return s.narrowNode(v, spec)
			}
			if a == owner.Body {
				break
			}
		}
		var cond, branch *Node
		switch a.Kind() {
		case "function_definition", "lambda", "class_definition":
			return v
		case "if_statement", "elif_clause":
			if a.Get("consequence") == c {
				cond, branch = a.Get("condition"), c
			}
		case "conditional_expression":
			if kids := a.NamedChildren(); len(kids) == 3 && kids[0] == c {
				cond = kids[1]
			}
		case "boolean_operator":
			if op := a.Get("operator"); op != nil && op.Text(src) == "and" && a.Get("right") == c {
				cond = a.Get("left")
			}
		}
		if cond == nil {
			continue
		}
		spec, ok := s.isinstanceTest(owner, cond, name)
		if !ok {
			continue
		}
		region := branch
		if closure {
			region = owner.Body
		}
		if region != nil && reboundIn(region, int(cond.End), n, name, src) {
			continue
		}
		return s.narrowNode(v, spec)
	}
	return v
}

// paramContract: `assert isinstance(p, T)` among the top-level statements
// of fn's body, for a parameter p that fn never binds again, with no
// return or yield before it, states what every call passes: a value that
// is not a T reaches p only in a run that fails the assert (reads before
// the assert included: they read the same value, in a run bound to fail).
// The points-to values merge every caller's arguments, so a value from an
// unrelated call (a dataset where a list of iterators is passed) would
// otherwise reach every read of p.
func (s *solver) paramContract(fn *index.Function, name string) (narrowSpec, bool) {
	if !fn.HasParam(name) || fn.Body == nil || fn.Kind == index.Lambda {
		return narrowSpec{}, false
	}
	src := fn.File.Src
	for _, st := range fn.Body.NamedChildren() {
		if MayReturn(st) {
			return narrowSpec{}, false
		}
		if st.Kind() != "assert_statement" {
			continue
		}
		kids := st.NamedChildren()
		if len(kids) == 0 {
			continue
		}
		if spec, ok := s.isinstanceTest(fn, kids[0], name); ok && !reboundIn(fn.Body, int(fn.Body.Start), nil, name, src) {
			return spec, true
		}
	}
	return narrowSpec{}, false
}

// MayReturn: statement st can leave the function (a return or a yield in it,
// outside nested functions).
func MayReturn(st *Node) bool {
	found := false
	syntax.Walk(st, func(x *Node) bool {
		switch x.Kind() {
		case "function_definition", "class_definition", "lambda":
			return false
		case "return_statement", "yield":
			found = true
		}
		return !found
	})
	return found
}

// narrowNode is a node holding v's values that pass spec.
func (s *solver) narrowNode(v NID, spec narrowSpec) NID {
	t := s.newNode()
	s.narrows = append(s.narrows, spec)
	s.addEdge(v, t, edge{tr: trNarrow, recv: VID(len(s.narrows) - 1), cap: sResolved})
	return t
}

// assertedBefore finds `assert isinstance(name, T)` among the statements
// of block before c (the statement holding the read n), with name bound
// nowhere in the function after it (but by the assignment that holds n).
// An assert is the author's statement of the type every caller passes:
// values that other callers' arguments merge into the parameter cannot
// reach code after it (they would fail the assert).
func (s *solver) assertedBefore(fn *index.Function, block, c, n *Node, name string) (narrowSpec, bool) {
	src := fn.File.Src
	for _, st := range block.NamedChildren() {
		if st == c || st.Start >= c.Start {
			break
		}
		if st.Kind() != "assert_statement" {
			continue
		}
		kids := st.NamedChildren()
		if len(kids) == 0 {
			continue
		}
		spec, ok := s.isinstanceTest(fn, kids[0], name)
		if !ok || reboundIn(fn.Body, int(st.End), n, name, src) {
			continue
		}
		return spec, true
	}
	return narrowSpec{}, false
}

var isinstanceCall = []byte("isinstance(")

// hasIsinstance reports whether fn's own text calls isinstance at all
// (most functions do not: their reads need no walk up the tree).
func (s *solver) hasIsinstance(fn *index.Function) bool {
	if r, ok := s.isinst[fn]; ok {
		return r
	}
	r := fn.Body != nil && bytes.Contains(fn.File.Src[fn.Body.Start:fn.Body.End], isinstanceCall)
	s.isinst[fn] = r
	return r
}

// isinstanceTest reads `isinstance(name, T)` in a condition (alone, in
// parentheses, or as one operand of an `and` chain).
func (s *solver) isinstanceTest(fn *index.Function, cond *Node, name string) (narrowSpec, bool) {
	src := fn.File.Src
	cond = syntax.Unparen(cond)
	if cond == nil {
		return narrowSpec{}, false
	}
	if cond.Kind() == "boolean_operator" {
		if op := cond.Get("operator"); op == nil || op.Text(src) != "and" {
			return narrowSpec{}, false
		}
		if sp, ok := s.isinstanceTest(fn, cond.Get("left"), name); ok {
			return sp, true
		}
		return s.isinstanceTest(fn, cond.Get("right"), name)
	}
	if cond.Kind() != "call" {
		return narrowSpec{}, false
	}
	f := cond.Get("function")
	if f == nil || f.Kind() != "identifier" || f.Text(src) != "isinstance" || fn.File.Top.Locals["isinstance"] {
		return narrowSpec{}, false
	}
	var args []*Node
	if al := cond.Get("arguments"); al != nil {
		args = al.NamedChildren()
	}
	if len(args) != 2 || args[0].Kind() != "identifier" || args[0].Text(src) != name {
		return narrowSpec{}, false
	}
	var spec narrowSpec
	types := []*Node{args[1]}
	if t := syntax.Unparen(args[1]); t != nil && t.Kind() == "tuple" {
		types = t.NamedChildren()
	}
	for _, t := range types {
		t = syntax.Unparen(t)
		if t == nil {
			return narrowSpec{}, false
		}
		if t.Kind() == "identifier" && fn.Locals[t.Text(src)] {
			return narrowSpec{}, false // a variable holding a type
		}
		if t.Kind() == "identifier" && !fn.File.Top.Locals[t.Text(src)] {
			switch t.Text(src) {
			case "list", "tuple", "dict", "set", "frozenset":
				spec.containers = true
				continue
			}
		}
		if t.Kind() != "identifier" && t.Kind() != "attribute" {
			return narrowSpec{}, false
		}
		sym := s.proj.ResolveExpr(fn.File, t)
		if sym.Kind != index.SymClass || sym.Class == nil {
			return narrowSpec{}, false
		}
		spec.classes = append(spec.classes, sym.Class)
	}
	return spec, true
}

// reboundIn reports whether name is bound in branch, at or after byte
// offset from, by anything but the assignment that holds the read n on
// its right-hand side outside a loop.
func reboundIn(branch *Node, from int, n *Node, name string, src []byte) bool {
	bound := false
	syntax.Walk(branch, func(x *Node) bool {
		if bound || int(x.End) <= from {
			return false
		}
		switch x.Kind() {
		case "function_definition", "class_definition", "lambda":
			if nm := x.Get("name"); nm != nil && nm.Text(src) == name {
				bound = true
			}
			// An inner function may rebind the name (nonlocal).
			if strings.Contains(x.Text(src), "nonlocal") && declaresNonlocal(x, name, src) {
				bound = true
			}
			return false
		case "assignment":
			for _, t := range index.TargetNames(x.Get("left"), src) {
				if t == name && !(contains(x.Get("right"), n) && !loopBetween(branch, x)) {
					bound = true
				}
			}
		case "import_statement", "import_from_statement", "global_statement", "nonlocal_statement":
			if strings.Contains(x.Text(src), name) {
				bound = true
			}
		default:
			for _, t := range index.BindingNames(x, src) {
				if t == name {
					bound = true
				}
			}
		}
		return true
	})
	return bound
}

// declaresNonlocal: a function nested in x (or x itself) declares name
// nonlocal.
func declaresNonlocal(x *Node, name string, src []byte) bool {
	found := false
	syntax.Walk(x, func(y *Node) bool {
		if y.Kind() == "nonlocal_statement" {
			for _, id := range y.NamedChildren() {
				if id.Kind() == "identifier" && id.Text(src) == name {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// contains reports whether n lies inside a.
func contains(a, n *Node) bool {
	for x := n; x != nil; x = x.Parent() {
		if x == a {
			return true
		}
	}
	return false
}

// loopBetween reports whether a for or while statement inside branch
// holds x.
func loopBetween(branch, x *Node) bool {
	for y := x.Parent(); y != nil && y != branch; y = y.Parent() {
		if y.Kind() == "for_statement" || y.Kind() == "while_statement" {
			return true
		}
	}
	return false
}

// narrowOK reports whether value v can be an instance of spec's types.
func (s *solver) narrowOK(spec narrowSpec, v VID) bool {
	val := &s.values[v]
	switch val.Kind {
	case VExt, VExtInst:
		return true
	case VCont:
		return spec.containers
	case VInst:
		if spec.containers && s.h.Derives(val.Cls, "list", "tuple", "dict", "set", "frozenset") {
			return true
		}
		for _, k := range s.h.MRO(val.Cls) {
			for _, c := range spec.classes {
				if k == c {
					return true
				}
			}
		}
	}
	return false
}
