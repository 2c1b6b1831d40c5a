package analysis

import "github.com/cudagraph-capguard/capguard/guard/syntax"

// The syntax tree lives in guard/syntax, the layer below the index; these
// names keep the rules' code short.
type (
	Node = syntax.Node
	Tree = syntax.Tree
)

// Parse parses Python source (see syntax.Parse).
func Parse(src []byte) (*Tree, error) { return syntax.Parse(src) }

// ParseOK reports whether src parses without a syntax error.
func ParseOK(src []byte) bool { return syntax.ParseOK(src) }

// Walk visits n and its descendants in preorder (see syntax.Walk).
func Walk(n *Node, fn func(*Node) bool) { syntax.Walk(n, fn) }

// Unparen strips parentheses around an expression.
func Unparen(n *Node) *Node { return syntax.Unparen(n) }
