package contexts

import (
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// callsIn returns the call nodes in stmts, not looking into nested defs,
// classes or lambdas (their bodies run when they are called).
func callsIn(stmts []*Node) []*Node {
	var out []*Node
	for _, s := range stmts {
		syntax.Walk(s, func(n *Node) bool {
			if n.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
				return false
			}
			if n.Kind() == "call" {
				out = append(out, n)
			}
			return true
		})
	}
	return out
}

// CallsIn is callsIn for other layers.
func CallsIn(stmts []*Node) []*Node { return callsIn(stmts) }

// ForEachStmt is forEachStmt for other layers.
func ForEachStmt(block *Node, fn func(*Node)) { forEachStmt(block, fn) }

// anyInScope: pred holds for a node of n's subtree outside the scopes
// nested in it (defs, classes, lambdas: their code runs elsewhere).
func anyInScope(n *Node, pred func(*Node) bool) bool {
	found := false
	syntax.Walk(n, func(x *Node) bool {
		if found || x.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		found = pred(x)
		return !found
	})
	return found
}

// forEachStmt calls fn for every statement of block and of the blocks
// nested in it, in source order. Definitions are passed but not entered.
func forEachStmt(block *Node, fn func(*Node)) {
	if block == nil {
		return
	}
	var stack []*Node
	pushBody := func(b *Node) {
		kids := b.Children()
		for i := len(kids) - 1; i >= 0; i-- {
			if s := kids[i]; s.Named() && s.Kind() != "comment" {
				stack = append(stack, s)
			}
		}
	}
	pushBody(block)
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fn(s)
		if s.Is("function_definition", "class_definition", "decorated_definition") {
			continue
		}
		bodies := stmtBlocks(s)
		for i := len(bodies) - 1; i >= 0; i-- {
			pushBody(bodies[i])
		}
	}
}

// stmtBlocks returns the blocks of a compound statement and its clauses.
func stmtBlocks(s *Node) []*Node {
	var out []*Node
	for _, c := range s.Children() {
		switch {
		case c.Kind() == "block":
			out = append(out, c)
		case strings.HasSuffix(c.Kind(), "_clause"):
			for _, cc := range c.Children() {
				if cc.Kind() == "block" {
					out = append(out, cc)
				}
			}
		}
	}
	return out
}

// precedingStmts are the statements that run before the statement holding
// n: earlier siblings at every level up to the function body.
func precedingStmts(fn *index.Function, n *Node) []*Node {
	var out []*Node
	for x := n; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil || p.Kind() != "block" && p.Kind() != "module" {
			continue
		}
		for _, s := range p.NamedChildren() {
			if s == x {
				break
			}
			if !s.Is("function_definition", "class_definition", "decorated_definition") {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// PrecedingStmts is precedingStmts for other layers.
func PrecedingStmts(fn *index.Function, n *Node) []*Node { return precedingStmts(fn, n) }

func hasMethodCall(stmt *Node, name string, src []byte) bool {
	found := false
	syntax.Walk(stmt, func(n *Node) bool {
		if found || n.Kind() == "block" || n.Kind() == "function_definition" {
			return false
		}
		if n.Kind() == "call" {
			if c := syntax.Unparen(n.Get("function")); c != nil && c.Kind() == "attribute" && c.Get("attribute").Text(src) == name {
				found = true
			}
		}
		return !found
	})
	return found
}

func positional(args *Node) []*Node {
	var out []*Node
	if args == nil {
		return nil
	}
	for _, a := range args.NamedChildren() {
		if !a.Is("keyword_argument", "list_splat", "dictionary_splat") {
			out = append(out, a)
		}
	}
	return out
}

func lastName(d string) string { return d[strings.LastIndexByte(d, '.')+1:] }

// implicitSites are the sites in stmts, other than call nodes, at which
// fn's call edges run a project function without a call expression: a
// subscript's __getitem__, a with item's __enter__ and __exit__, a for
// loop's __iter__, a property read's getter. Sites inside a nested
// definition or lambda are left out, as callsIn leaves out their calls.
// In source order.
func implicitSites(g *flow.Graph, fn *index.Function, stmts []*Node) []*Node {
	if len(stmts) == 0 {
		return nil
	}
	top := map[*Node]bool{}
	for _, s := range stmts {
		top[s] = true
	}
	seen := map[*Node]bool{}
	var out []*Node
	for _, e := range g.Out[fn] {
		s := e.Site
		if s == nil || s.Kind() == "call" || seen[s] {
			continue
		}
		seen[s] = true
		if underStmts(s, top) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// underStmts: n lies in one of the statements top, not inside a nested
// definition or lambda of it.
func underStmts(n *Node, top map[*Node]bool) bool {
	for x := n; x != nil; x = x.Parent() {
		if top[x] {
			return true
		}
		if x != n && x.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
			return false
		}
	}
	return false
}

// RegionSites are the call nodes of a region's statements (callsIn) and
// the sites where they run project code implicitly (implicitSites).
func RegionSites(g *flow.Graph, r *Region) []*Node {
	return append(callsIn(r.Stmts), implicitSites(g, r.Fn, r.Stmts)...)
}
