package guard

import (
	"context"
	"fmt"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/python"
)

// Node is capguard's own copy of a tree-sitter syntax node. The tree-sitter
// tree is converted once, with a cursor, and closed at once: every later
// question is answered in plain Go, without a cgo call per question.
type Node struct {
	Kind     string // the node type, interned ("call", "identifier", "(")
	Field    string // the field name in the parent ("function", "arguments"), or ""
	Named    bool
	Start    int // byte offsets
	End      int
	Row      int // 0-based start row and byte column
	Col      int
	EndRow   int
	EndCol   int
	Parent   *Node
	Children []*Node
}

// Text returns the node's source bytes as a string.
func (n *Node) Text(src []byte) string {
	if n == nil {
		return ""
	}
	return string(src[n.Start:n.End])
}

// Get returns the first child in field name.
func (n *Node) Get(field string) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Field == field {
			return c
		}
	}
	return nil
}

// All returns the children in field name.
func (n *Node) All(field string) []*Node {
	var out []*Node
	for _, c := range n.Children {
		if c.Field == field {
			out = append(out, c)
		}
	}
	return out
}

// NamedChildren returns the named children, comments excluded.
func (n *Node) NamedChildren() []*Node {
	if n == nil {
		return nil
	}
	out := make([]*Node, 0, len(n.Children))
	for _, c := range n.Children {
		if c.Named && c.Kind != "comment" {
			out = append(out, c)
		}
	}
	return out
}

// Is reports whether the node is of one of the kinds.
func (n *Node) Is(kinds ...string) bool {
	if n == nil {
		return false
	}
	for _, k := range kinds {
		if n.Kind == k {
			return true
		}
	}
	return false
}

// Walk calls fn for n and every descendant in source order, iteratively (a
// file nested 20,000 deep must not exhaust anything). fn returns false to
// skip a node's children.
func Walk(n *Node, fn func(*Node) bool) {
	if n == nil {
		return
	}
	stack := []*Node{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !fn(x) {
			continue
		}
		for i := len(x.Children) - 1; i >= 0; i-- {
			stack = append(stack, x.Children[i])
		}
	}
}

// Unparen strips parentheses around an expression.
func Unparen(n *Node) *Node {
	for n != nil && n.Kind == "parenthesized_expression" {
		inner := n.NamedChildren()
		if len(inner) != 1 {
			return n
		}
		n = inner[0]
	}
	return n
}

// Tree is a parsed file.
type Tree struct {
	Root     *Node
	Comments []*Node
	// Syntax is the first syntax error ("line 3, column 7: unexpected ..."),
	// or "" when the file parsed cleanly.
	Syntax string
}

var (
	parserPool = sync.Pool{New: func() any {
		p := sitter.NewParser()
		p.SetLanguage(python.GetLanguage())
		return p
	}}
	kindMu    sync.RWMutex
	kindNames = map[sitter.Symbol]string{}
	fieldMu   sync.RWMutex
	fieldName = map[string]string{}
)

func kindOf(n *sitter.Node) string {
	sym := n.Symbol()
	kindMu.RLock()
	k, ok := kindNames[sym]
	kindMu.RUnlock()
	if ok {
		return k
	}
	k = n.Type()
	kindMu.Lock()
	kindNames[sym] = k
	kindMu.Unlock()
	return k
}

func intern(s string) string {
	if s == "" {
		return ""
	}
	fieldMu.RLock()
	v, ok := fieldName[s]
	fieldMu.RUnlock()
	if ok {
		return v
	}
	fieldMu.Lock()
	fieldName[s] = s
	fieldMu.Unlock()
	return s
}

// Parse parses Python source into a Tree. It never fails on bad input:
// tree-sitter recovers, and Tree.Syntax names the first error.
func Parse(src []byte) (*Tree, error) {
	p := parserPool.Get().(*sitter.Parser)
	defer parserPool.Put(p)
	tt, err := p.ParseCtx(context.Background(), nil, src)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if tt == nil {
		return nil, fmt.Errorf("parse: tree-sitter returned no tree")
	}
	defer tt.Close()
	t := &Tree{}
	root := tt.RootNode()
	t.Root = convert(root, t)
	if t.Root != nil && (root.HasError() || hasError(t.Root)) {
		t.Syntax = firstError(t.Root, src)
		if t.Syntax == "" {
			t.Syntax = "syntax error (the parser inserted a missing token)"
		}
	}
	return t, nil
}

// ParseOK reports whether src parses without a syntax error.
func ParseOK(src []byte) bool {
	t, err := Parse(src)
	return err == nil && t.Syntax == ""
}

// convert copies the tree-sitter tree with a cursor, iteratively.
func convert(root *sitter.Node, t *Tree) *Node {
	c := sitter.NewTreeCursor(root)
	defer c.Close()
	mk := func(parent *Node) *Node {
		sn := c.CurrentNode()
		sp, ep := sn.StartPoint(), sn.EndPoint()
		n := &Node{
			Kind:   kindOf(sn),
			Named:  sn.IsNamed(),
			Start:  int(sn.StartByte()),
			End:    int(sn.EndByte()),
			Row:    int(sp.Row),
			Col:    int(sp.Column),
			EndRow: int(ep.Row),
			EndCol: int(ep.Column),
			Parent: parent,
		}
		if sn.IsMissing() {
			n.Kind = "MISSING"
		}
		if parent != nil {
			n.Field = intern(c.CurrentFieldName())
			parent.Children = append(parent.Children, n)
		}
		if n.Kind == "comment" {
			t.Comments = append(t.Comments, n)
		}
		return n
	}
	top := mk(nil)
	cur := top
	for {
		if c.GoToFirstChild() {
			cur = mk(cur)
			continue
		}
		for {
			if c.GoToNextSibling() {
				cur = mk(cur.Parent)
				break
			}
			if !c.GoToParent() {
				return top
			}
			cur = cur.Parent
		}
	}
}

func hasError(root *Node) bool {
	found := false
	Walk(root, func(n *Node) bool {
		if found {
			return false
		}
		if n.Kind == "ERROR" || n.Kind == "MISSING" {
			found = true
		}
		return !found
	})
	return found
}

func firstError(root *Node, src []byte) string {
	var bad *Node
	Walk(root, func(n *Node) bool {
		if bad != nil {
			return false
		}
		if n.Kind == "ERROR" || n.Kind == "MISSING" {
			bad = n
			return false
		}
		return true
	})
	if bad == nil {
		return ""
	}
	what := "unexpected " + quoteSnippet(bad.Text(src))
	if bad.Kind == "MISSING" {
		what = "missing token"
	}
	return fmt.Sprintf("syntax error at line %d, column %d: %s", bad.Row+1, bad.Col+1, what)
}

func quoteSnippet(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	if s == "" {
		return "end of input"
	}
	return fmt.Sprintf("%q", s)
}
