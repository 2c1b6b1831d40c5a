package syntax

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/cudagraph-capguard/capguard/guard/internal/pyparse"
)

// Node is capguard's own copy of a tree-sitter syntax node. The tree-sitter
// tree is converted once, with a cursor, and closed at once: every later
// question is answered in plain Go, without a cgo call per question.
//
// A checked file costs its nodes' memory: 32 bytes a node (its type,
// named or not, an index into a table; its offsets int32; its parent an
// int32 offset; its children a pointer and a count) and 8 for its pointer
// in its parent's child list, about one node per 5 bytes of source with
// the punctuation and keyword tokens left out (Omitted). So Node holds
// only what the analysis asks: the line and column are derived from Start
// when needed (index.File.Pos and Line, with the file's line table; RowCol
// for a syntax error's message), the field name from the grammar's field
// id (Field).
type Node struct {
	// kids is the first of the node's nkids child pointers, carved from
	// the tree's slab of them (Children).
	kids       **Node
	Start, End int32 // byte offsets (a file is refused past 2 GiB long before)
	// par is how many nodes before this one, in the tree's slab of nodes,
	// its parent is (0: the root, or a node made alone). A pointer would
	// take 8 bytes (Parent).
	par   int32
	nkids int32
	// Aux belongs to the layer that analyses the tree (guard/flow keeps
	// the points-to node of each evaluated expression here, plus one).
	Aux   int32
	field uint16 // the grammar's field id in the parent, 0 for none
	// kind is the node type's index in kindTable (Kind), its top bit set
	// for a named node (Named): a bool of its own took a word.
	kind uint16
}

// namedBit marks a named node's kind.
const namedBit = 1 << 15

// Kind is the node type ("call", "identifier", "("; "" for a Node made
// alone). A string on every node took 16 bytes; the index takes 2.
func (n *Node) Kind() string { return kindTable[n.kind&^namedBit] }

// Named says whether the node is a named one (tree-sitter's sense: not
// an anonymous token such as "(" or "def").
func (n *Node) Named() bool { return n.kind&namedBit != 0 }

// nodeSize is a Node's size in bytes, for Parent's arithmetic.
const nodeSize = unsafe.Sizeof(Node{})

// Parent is the node's parent (nil for the root). Every tree's nodes are
// one slab (build, Decode: link), so the parent is par nodes before n in
// the same allocation.
func (n *Node) Parent() *Node {
	if n.par == 0 {
		return nil
	}
	return (*Node)(unsafe.Add(unsafe.Pointer(n), -int(n.par)*int(nodeSize)))
}

// Children are the node's children in order (nil for a leaf). The slice
// shares the tree's memory: read it, never write into it (append copies:
// its capacity is its length).
func (n *Node) Children() []*Node {
	if n.nkids == 0 {
		return nil
	}
	return unsafe.Slice(n.kids, n.nkids)
}

// Field is the field name in the parent ("function", "arguments"), or "".
func (n *Node) Field() string { return fieldNames[n.field] }

// fieldNames are the grammar's field names by id ("" for 0).
var fieldNames = pyparse.FieldNames()

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
	for _, c := range n.Children() {
		if fieldNames[c.field] == field {
			return c
		}
	}
	return nil
}

// All returns the children in field name.
func (n *Node) All(field string) []*Node {
	var out []*Node
	for _, c := range n.Children() {
		if fieldNames[c.field] == field {
			out = append(out, c)
		}
	}
	return out
}

// NamedChildren returns the named children, comments excluded. When every
// child is one (most nodes, with the tokens Omitted names left out), it is
// the tree's own child list, capped so that an append copies: callers
// must not write into it.
func (n *Node) NamedChildren() []*Node {
	if n == nil {
		return nil
	}
	kids := n.Children() // its capacity is its length (Children)
	all := true
	for _, c := range kids {
		if !c.Named() || c.Kind() == "comment" {
			all = false
			break
		}
	}
	if all {
		return kids
	}
	out := make([]*Node, 0, len(kids))
	for _, c := range kids {
		if c.Named() && c.Kind() != "comment" {
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
		if n.Kind() == k {
			return true
		}
	}
	return false
}

// Walk calls fn for n and every descendant in source order. fn returns
// false to skip a node's children.
func Walk(n *Node, fn func(*Node) bool) {
	if n == nil {
		return
	}
	// Recursive: no stack to allocate on every call (the walks are many
	// and small). Its depth is bounded: a tree deeper than MaxDepth is
	// refused when it is built or decoded, and Go's stacks grow for the
	// deep ones below it (`a + b + ... + z`).
	if !fn(n) {
		return
	}
	for _, c := range n.Children() {
		Walk(c, fn)
	}
}

// Operator is the text of an operator node's unnamed tokens, space
// separated: "==", "is not", "not in", "and".
func (n *Node) Operator(src []byte) string {
	op := ""
	for _, c := range n.Children() {
		if !c.Named() && c.Kind() != "(" && c.Kind() != ")" {
			if op != "" {
				op += " "
			}
			op += c.Text(src)
		}
	}
	return op
}

// NameRef: identifier n names a variable the code reads or binds, not an
// attribute's name (`meta.lengths`) or a keyword argument's
// (`f(lengths=t)`).
func NameRef(n *Node) bool {
	p := n.Parent()
	if p == nil {
		return true
	}
	switch p.Kind() {
	case "keyword_argument":
		return p.Get("name") != n
	case "attribute":
		return p.Get("attribute") != n
	}
	return true
}

// Unparen strips parentheses around an expression.
func Unparen(n *Node) *Node {
	for n != nil && n.Kind() == "parenthesized_expression" {
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

// MaxSource is the longest source Parse takes: a node's offsets are int32
// (tree-sitter's are 32-bit too), which keeps a node of the tree at 64
// bytes. Files are refused long before (config's max-file-size, 10 MB by
// default).
const MaxSource = math.MaxInt32

// Parse parses Python source into a Tree. It never fails on bad input:
// tree-sitter recovers, and Tree.Syntax names the first error.
func Parse(src []byte) (*Tree, error) {
	if len(src) > MaxSource {
		return nil, fmt.Errorf("parse: %d bytes, past the %d a syntax tree's offsets hold", len(src), MaxSource)
	}
	t := &Tree{}
	var treeErr bool
	depth := 0
	err := pyparse.Parse(src, func(recs []pyparse.Rec, hasError bool) {
		if depth = treeDepth(recs); depth > MaxDepth {
			return
		}
		t.Root = build(recs, t)
		treeErr = hasError
	})
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if depth > MaxDepth {
		return nil, &DepthError{Depth: depth}
	}
	ps, pe, msg := -1, -1, ""
	if t.Root != nil && (treeErr || hasError(t.Root)) {
		if alt, changed := grammarFixes(src); changed {
			if t2, err := Parse(alt); err == nil && t2.Syntax == "" {
				return t2, nil
			}
		}
		msg, ps, pe = firstError(t.Root, src)
		if msg == "" {
			msg, ps, pe = "syntax error (the parser inserted a missing token)", len(src), len(src)
		}
	}
	if t.Root != nil {
		// CPython's tokenizer-level errors and positions (lexcheck.go).
		t.Syntax = pythonSyntax(src, ps, pe, msg)
	}
	return t, nil
}

// MaxDepth is the deepest syntax tree capguard analyses. CPython refuses
// to compile an expression nested about 3,000 deep (`1+1+...+1` with 3,000
// terms, 3,000 nested lambdas or `x.a.a...`: "maximum recursion depth
// exceeded during compilation"; 200 nested brackets, 100 nested blocks), so
// no importable file comes near it. Every walk over a tree is then bounded
// by it, whatever walks the later layers do.
const MaxDepth = 5000

// DepthError is a file whose syntax tree is nested past MaxDepth: it is
// not analysed.
type DepthError struct{ Depth int }

func (e *DepthError) Error() string {
	return fmt.Sprintf("syntax nested %d levels deep, past capguard's limit of %d (CPython cannot compile code nested about 3,000 deep either); not checked", e.Depth, MaxDepth)
}

// treeDepth is the depth of pyparse's preorder table.
func treeDepth(recs []pyparse.Rec) int {
	return preorderDepth(len(recs), func(i int) int {
		if p := recs[i].Parent; p != pyparse.NoParent {
			return int(p)
		}
		return -1
	})
}

// preorderDepth is the depth of a preorder table of n nodes (a parent
// comes before its children) whose node i has parent parent(i), -1 for
// none.
func preorderDepth(n int, parent func(int) int) int {
	depth := make([]int32, n)
	deepest := int32(0)
	for i := 0; i < n; i++ {
		if p := parent(i); p >= 0 {
			depth[i] = depth[p] + 1
			deepest = max(deepest, depth[i])
		}
	}
	return int(deepest)
}

// ParseOK reports whether src parses without a syntax error: the parser's
// error flag (without building the tree) and the tokenizer-level pass.
func ParseOK(src []byte) bool {
	bad, err := pyparse.HasError(src)
	if err == nil && bad {
		if alt, changed := grammarFixes(src); changed {
			bad, err = pyparse.HasError(alt)
		}
	}
	return err == nil && !bad && LexOK(src) // the tokenizer-level errors Parse reports too (lexcheck.go)
}

// Omitted reports whether the Go tree leaves out an unnamed token of a
// kind, under a parent of a kind: the tokens whose place the tree's shape
// already says, and which no layer asks for. They are a third of a file's
// nodes. Left out: brackets, commas and dots (a call's argument list, a
// tuple, an attribute), "=" (an assignment, a keyword argument, a
// default), ":" outside a slice (a block's header, a dict pair, an
// annotation; in a slice the colons say which bounds are given) and the
// keywords that only open a statement or clause ("def", "if", "else",
// "for", "pass", "->"). Operators (read by Node.Operator),
// "as", "from", "in", "not", "is", "async", "await", "yield", "lambda",
// "import", "return", "print", "exec" and every token tree-sitter inserted
// as MISSING stay.
func Omitted(kind, parent string) bool {
	switch kind {
	case "(", ")", "[", "]", "{", "}", ",", ".", "=", "->",
		"def", "class", "if", "elif", "else", "for", "while", "try", "except", "finally", "with",
		"pass", "global", "nonlocal", "raise", "assert", "del", "continue", "break":
		return true
	case ":":
		return parent != "slice"
	}
	return false
}

// omittedSyms marks the grammar's symbols Omitted leaves out under any
// parent but a slice; colonSym and sliceSym are the exception's.
var omittedSyms, colonSym, sliceSym = func() (out [1 << 16]bool, colon, slice uint16) {
	for sym := range out {
		name := pyparse.SymbolName(uint16(sym))
		out[sym] = Omitted(name, "")
		if name == ":" {
			colon = uint16(sym)
		}
		if name == "slice" {
			slice = uint16(sym)
		}
	}
	return out, colon, slice
}()

// dropped reports whether build leaves record i out of the tree: an
// unnamed token the parser read that Omitted names.
func dropped(recs []pyparse.Rec, i int) bool {
	r := &recs[i]
	if r.Named || r.Missing || !omittedSyms[r.Sym] {
		return false
	}
	return r.Sym != colonSym || recs[r.Parent].Sym != sliceSym
}

// build makes the Go tree from pyparse's preorder table, the tokens
// Omitted names left out: all nodes in one slab, all child lists carved from
// a second one.
func build(recs []pyparse.Rec, t *Tree) *Node {
	if len(recs) == 0 {
		return nil
	}
	// at[i]: record i's index in the slab, -1 when it is left out (such
	// a token is a leaf, and the root is never one).
	at := make([]int32, len(recs))
	kept := 0
	for i := range recs {
		if i > 0 && dropped(recs, i) {
			at[i] = -1
			continue
		}
		at[i] = int32(kept)
		kept++
	}
	nodes := make([]Node, kept)
	parent := make([]int32, kept)
	for i := range recs {
		if at[i] < 0 {
			continue
		}
		r := &recs[i]
		n := &nodes[at[i]]
		n.kind = symKind(r.Sym)
		n.field = r.Field
		if r.Named {
			n.kind |= namedBit
		}
		n.Start, n.End = int32(r.Start), int32(r.End)
		if r.Missing {
			n.kind = missingKind | n.kind&namedBit
		}
		parent[at[i]] = -1
		if r.Parent != pyparse.NoParent {
			parent[at[i]] = at[r.Parent]
		}
	}
	return link(nodes, parent, t)
}

// link makes the tree of a slab of nodes in preorder whose fields are set,
// node i's parent being parent[i] (-1 for the root, node 0): the parent
// pointers, the child lists (carved from one second slab) and t's
// comments. build and Decode both end with it.
func link(nodes []Node, parent []int32, t *Tree) *Node {
	counts := make([]int32, len(nodes))
	for i := 1; i < len(nodes); i++ {
		counts[parent[i]]++
	}
	kids := make([]*Node, len(nodes)-1)
	off := 0
	for i := range nodes {
		if c := int(counts[i]); c > 0 {
			nodes[i].kids = &kids[off]
			off += c
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if p := parent[i]; p >= 0 {
			pn := &nodes[p]
			n.par = int32(i) - p
			unsafe.Slice(pn.kids, counts[p])[pn.nkids] = n
			pn.nkids++
		}
		if n.Kind() == "comment" {
			t.Comments = append(t.Comments, n)
		}
	}
	return &nodes[0]
}

func hasError(root *Node) bool {
	found := false
	Walk(root, func(n *Node) bool {
		if found {
			return false
		}
		if n.Kind() == "ERROR" || n.Kind() == "MISSING" {
			found = true
		}
		return !found
	})
	return found
}

// firstError describes the first syntax error: the first ERROR or MISSING
// node in source order, narrowed to the first such node inside it while
// there is one. tree-sitter's recovery can wrap a whole file in one ERROR
// node (CPython's test_compile.py: an error on line 1 for a construct on
// line 1335); the innermost error is near the real one.
func firstError(root *Node, src []byte) (string, int, int) {
	first := func(top *Node, self bool) *Node {
		var bad *Node
		Walk(top, func(n *Node) bool {
			if bad != nil {
				return false
			}
			if (n != top || self) && (n.Kind() == "ERROR" || n.Kind() == "MISSING") {
				bad = n
				return false
			}
			return true
		})
		return bad
	}
	bad := first(root, true)
	if bad == nil {
		return "", -1, -1
	}
	for inner := first(bad, false); inner != nil; inner = first(bad, false) {
		bad = inner
	}
	what := "unexpected " + quoteSnippet(bad.Text(src))
	if bad.Kind() == "MISSING" {
		what = "missing token"
	}
	row, col := RowCol(src, int(bad.Start))
	return fmt.Sprintf("syntax error at line %d, column %d: %s", row+1, col+1, what), int(bad.Start), int(bad.End)
}

func quoteSnippet(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = Snippet(s, 43)
	if s == "" {
		return "end of input"
	}
	return fmt.Sprintf("%q", s)
}

// Snippet is source text for a message: its whitespace runs made one
// space, and cut to at most max bytes with "..." when longer, at a
// character boundary (a cut inside a UTF-8 sequence makes invalid text,
// which JSON shows as U+FFFD). The one snippet helper of every layer.
func Snippet(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// RowCol is the 0-based row and byte column of offset off in src, as
// tree-sitter counts them (rows end at '\n'). It scans src: for a message
// or two (a syntax error); index.File.Pos answers many with its line table.
func RowCol(src []byte, off int) (row, col int) {
	off = min(max(off, 0), len(src))
	start := 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			row++
			start = i + 1
		}
	}
	return row, off - start
}

// Blankless is s without spaces, tabs and line breaks: the key under which
// two spellings of one expression (`x[ : n]`, `x[:n]`) compare equal.
func Blankless(s string) string {
	return strings.Join(strings.Fields(s), "")
}
