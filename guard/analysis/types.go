package analysis

import (
	"slices"
	"sync"

	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
)

// The index's types, for the rules.
type (
	File     = index.File
	Function = index.Function
	Class    = index.Class
	// Region is a part of a function with a context of its own (a capture
	// region, the statements before a replay).
	Region = contexts.Region
)

// Project is one run's analysed project: the index, the call graph and
// every function's contexts.
type Project struct {
	Files     []*File
	Idx       *index.Project
	G         *flow.Graph
	Ctx       *contexts.Result
	Cfg       *Config
	KernelOps []string
	Traced    *TracedInput
	// memo holds what the rules of many files work out once a run (Memo).
	memo sync.Map
}

// Memo returns the value kept under key, made by mk on its first use. The
// rules run on every core, so two first uses may both make it; one is
// kept, and mk must give equal values (a pure function of the project).
func (p *Project) Memo(key any, mk func() any) any {
	if v, ok := p.memo.Load(key); ok {
		return v
	}
	v, _ := p.memo.LoadOrStore(key, mk())
	return v
}

// KernelName reports whether call launches a GPU kernel (contexts.Launches).
func (p *Project) KernelName(f *File, call *Node) (string, bool) {
	return contexts.Launches(p.G, p.KernelOps, f, call)
}

// ClassOf is the project class an expression denotes, or nil.
func (p *Project) ClassOf(f *File, n *Node) *Class {
	for _, v := range p.G.Values(n) {
		if v.Kind == flow.VClass {
			return v.Cls
		}
	}
	if s := p.Idx.ResolveExpr(f, n); s.Kind == index.SymClass {
		return s.Class
	}
	return nil
}

// ClassesOf are the project classes an expression may denote: every class
// among its values (a name bound by two definitions under an import-time
// condition, `if FLASH: class Lens: ... else: class Lens: ...`, denotes
// both), or the class the index resolves it to; nil for none.
func (p *Project) ClassesOf(f *File, n *Node) []*Class {
	var out []*Class
	for _, v := range p.G.Values(n) {
		if v.Kind == flow.VClass && v.Cls != nil && !slices.Contains(out, v.Cls) {
			out = append(out, v.Cls)
		}
	}
	if len(out) == 0 {
		if c := p.ClassOf(f, n); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// PosOf converts a byte offset of f to a Pos.
func PosOf(f *File, off int) Pos {
	l, c := f.Pos(off)
	return Pos{Line: l, Column: c, Offset: off}
}

func BodyStmts(fn *Function) []*Node { return fn.BodyStmts() }

// callsIn returns the call nodes in stmts, not looking into nested defs,
// classes or lambdas (their bodies run when they are called).
func callsIn(stmts []*Node) []*Node { return contexts.CallsIn(stmts) }

// WalkCode walks stmts in preorder as Walk does, but does not enter nested
// definitions or lambdas: their code runs when they are called, not here.
func WalkCode(stmts []*Node, visit func(*Node) bool) {
	for _, s := range stmts {
		Walk(s, func(n *Node) bool {
			if n.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
				return false
			}
			return visit(n)
		})
	}
}

func PrecedingStmts(fn *Function, n *Node) []*Node { return contexts.PrecedingStmts(fn, n) }

// InnermostAt is the innermost def of f holding offset off (nil at module
// level).
func InnermostAt(f *File, off int) *Function { return contexts.InnermostAt(f, off) }

// forEachCallAssignment calls fn for each `left = callee(...)` statement of
// block (nested blocks included), with the assignment's left side and the
// call (parentheses around it removed).
func forEachCallAssignment(block *Node, fn func(left, call *Node)) {
	contexts.ForEachStmt(block, func(s *Node) {
		if s.Kind() != "expression_statement" {
			return
		}
		for _, a := range s.NamedChildren() {
			if a.Kind() != "assignment" {
				continue
			}
			if l, r := a.Get("left"), Unparen(a.Get("right")); l != nil && r != nil && r.Kind() == "call" {
				fn(l, r)
			}
		}
	})
}

func IsName(n *Node, name string, src []byte) bool {
	return n != nil && n.Kind() == "identifier" && name != "" && n.Text(src) == name
}

// SiteOwner is the file and innermost function (def, lambda or module
// code) holding a syntax node.
func (p *Project) SiteOwner(n *Node) (*File, *Function) {
	root := n
	for root.Parent() != nil {
		root = root.Parent()
	}
	for _, f := range p.Files {
		if f.Tree == nil || f.Tree.Root != root {
			continue
		}
		best := f.Top
		for _, fn := range f.Funcs {
			if fn.Def.Start <= n.Start && n.End <= fn.Def.End {
				best = fn
			}
		}
		return f, best
	}
	return nil, nil
}
