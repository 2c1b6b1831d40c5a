package analysis

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

func Short(s string) string { return syntax.Snippet(s, 60) }

func LastName(dotted string) string {
	return dotted[strings.LastIndexByte(dotted, '.')+1:]
}

func InAny(stmts []*Node, n *Node) bool {
	for _, s := range stmts {
		if n.Start >= s.Start && n.End <= s.End {
			return true
		}
	}
	return false
}

func MarkTargets(t *Node, set map[*Node]bool) {
	Walk(t, func(x *Node) bool {
		if x.Kind() == "identifier" {
			set[x] = true
			return false
		}
		return x.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "list_splat_pattern", "parenthesized_expression", "list_splat", "as_pattern_target")
	})
}

// Mentions: n reads the bare name.
func Mentions(n *Node, name string, src []byte) bool {
	found := false
	Walk(n, func(x *Node) bool {
		if found {
			return false
		}
		if x.Kind() == "identifier" && x.Text(src) == name {
			if par := x.Parent(); par != nil && par.Kind() == "attribute" && x.Field() == "attribute" {
				return false
			}
			if par := x.Parent(); par != nil && par.Kind() == "keyword_argument" && x.Field() == "name" {
				return false
			}
			found = true
		}
		return !found
	})
	return found
}

// InLoop: statement n runs in a loop of its function.
func InLoop(n *Node) bool { return EnclosingLoop(n) != nil }

// EnclosingLoop is the innermost for or while loop of its function around
// statement n, or nil.
func EnclosingLoop(n *Node) *Node {
	if n == nil {
		return nil
	}
	for x := n.Parent(); x != nil && !x.Is("function_definition", "lambda", "class_definition"); x = x.Parent() {
		if x.Is("for_statement", "while_statement") {
			return x
		}
	}
	return nil
}

// AttrRoot is the expression an attribute chain starts from (`state` of
// `state.lens.data`, n itself when it is no attribute), parentheses
// stripped; nil for nil.
func AttrRoot(n *Node) *Node {
	n = Unparen(n)
	for n != nil && n.Kind() == "attribute" {
		n = Unparen(n.Get("object"))
	}
	return n
}
