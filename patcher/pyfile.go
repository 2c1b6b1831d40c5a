package patcher

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/python"
)

// pyFile is a parsed Python source: what the patcher needs to know about its
// top level.
type pyFile struct {
	src  []byte
	root *sitter.Node
	tree *sitter.Tree
}

func parsePy(src []byte) *pyFile {
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(python.GetLanguage())
	tree := p.Parse(nil, src)
	return &pyFile{src: src, root: tree.RootNode(), tree: tree}
}

func (f *pyFile) close() { f.tree.Close() }

// parseOK reports whether src parses without a syntax error: tree-sitter
// python (the parser guard uses) finds neither an ERROR nor a MISSING node.
// It is stricter than guard.ParseOK, which does not see MISSING nodes (so
// `import a as import b` passes there).
func parseOK(src []byte) bool {
	f := parsePy(src)
	defer f.close()
	return !f.root.HasError()
}

var codingRE = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`)

// checkEncoding refuses a source the patcher cannot round-trip: bytes that
// are not UTF-8, or non-ASCII bytes under a PEP 263 declaration of another
// encoding (the patcher would read them as UTF-8).
func checkEncoding(src []byte) error {
	if !utf8.Valid(src) {
		return fmt.Errorf("not valid UTF-8; capguard fixes UTF-8 files only")
	}
	enc := declaredEncoding(src)
	switch strings.ReplaceAll(strings.ToLower(enc), "_", "-") {
	case "", "utf-8", "utf8", "utf-8-sig":
		return nil
	}
	for _, b := range src {
		if b >= 0x80 {
			return fmt.Errorf("declares coding %s and holds non-ASCII bytes; capguard fixes UTF-8 files only", enc)
		}
	}
	return nil
}

// declaredEncoding returns the PEP 263 coding declaration of the first two
// lines, or "".
func declaredEncoding(src []byte) string {
	src = bytes.TrimPrefix(src, bom)
	for i := 0; i < 2 && len(src) > 0; i++ {
		line := src
		if j := bytes.IndexByte(src, '\n'); j >= 0 {
			line, src = src[:j], src[j+1:]
		} else {
			src = nil
		}
		if m := codingRE.FindSubmatch(line); m != nil {
			return string(m[1])
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			break
		}
	}
	return ""
}

var bom = []byte("\xef\xbb\xbf")

// isImport reports whether n is an import statement.
func isImport(n *sitter.Node) bool {
	switch n.Type() {
	case "import_statement", "import_from_statement", "future_import_statement":
		return true
	}
	return false
}

// isDocstring reports whether n is a statement made of one string.
func isDocstring(n *sitter.Node) bool {
	return n.Type() == "expression_statement" && n.NamedChildCount() == 1 &&
		(n.NamedChild(0).Type() == "string" || n.NamedChild(0).Type() == "concatenated_string")
}

// importGuard reports whether n is a compound statement made only of imports
// and trivial statements: `try: import x / except ImportError: x = None` or
// `if TYPE_CHECKING: import y`. It belongs to the import block.
func importGuard(n *sitter.Node) bool {
	if n.Type() != "try_statement" && n.Type() != "if_statement" {
		return false
	}
	sawImport := false
	ok := true
	var walk func(*sitter.Node)
	walk = func(x *sitter.Node) {
		for i := 0; i < int(x.NamedChildCount()) && ok; i++ {
			c := x.NamedChild(i)
			switch c.Type() {
			case "import_statement", "import_from_statement":
				sawImport = true
			case "pass_statement", "comment":
			case "expression_statement":
				if c.NamedChildCount() != 1 || c.NamedChild(0).Type() != "assignment" {
					ok = false
				}
			case "block", "except_clause", "else_clause", "elif_clause", "finally_clause":
				walk(c)
			default:
				// The condition of an if or the type of an except may be any
				// expression; another statement ends the import block.
				t := c.Type()
				if strings.HasSuffix(t, "_statement") || strings.HasSuffix(t, "_definition") {
					ok = false
				}
			}
		}
	}
	walk(n)
	return ok && sawImport
}

// topLevel calls fn for each statement at module level, also inside the
// blocks of if/try/with statements there (where a module can define or
// import a name conditionally).
func (f *pyFile) topLevel(fn func(n *sitter.Node)) {
	var walk func(*sitter.Node)
	walk = func(x *sitter.Node) {
		for i := 0; i < int(x.NamedChildCount()); i++ {
			c := x.NamedChild(i)
			fn(c)
			switch c.Type() {
			case "if_statement", "try_statement", "with_statement", "block",
				"else_clause", "elif_clause", "except_clause", "finally_clause":
				walk(c)
			}
		}
	}
	walk(f.root)
}

// binds reports whether the module binds name at its top level: a def or
// class, an import, or an assignment.
func (f *pyFile) binds(name string) bool {
	found := false
	f.topLevel(func(n *sitter.Node) {
		if found {
			return
		}
		switch n.Type() {
		case "decorated_definition":
			if d := n.ChildByFieldName("definition"); d != nil && f.text(d.ChildByFieldName("name")) == name {
				found = true
			}
		case "function_definition", "class_definition":
			found = f.text(n.ChildByFieldName("name")) == name
		case "import_statement", "import_from_statement":
			found = f.importBinds(n, name)
		case "expression_statement":
			if n.NamedChildCount() == 1 && n.NamedChild(0).Type() == "assignment" {
				left := n.NamedChild(0).ChildByFieldName("left")
				found = left != nil && left.Type() == "identifier" && f.text(left) == name
			}
		}
	})
	return found
}

// importBinds reports whether an import statement binds name.
func (f *pyFile) importBinds(n *sitter.Node, name string) bool {
	from := n.Type() == "import_from_statement"
	module := n.ChildByFieldName("module_name")
	for i := 0; i < int(n.NamedChildCount()); i++ {
		c := n.NamedChild(i)
		if from && module != nil && c.Equal(module) {
			continue
		}
		switch c.Type() {
		case "dotted_name":
			t := f.text(c)
			if from && t == name {
				return true
			}
			if !from && (t == name || strings.HasPrefix(t, name+".")) {
				return true // `import torch.nn` binds torch
			}
		case "aliased_import":
			if f.text(c.ChildByFieldName("alias")) == name {
				return true
			}
		case "wildcard_import":
			// `from m import *` may bind it; nothing is certain. Assume not.
		}
	}
	return false
}

func (f *pyFile) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return n.Content(f.src)
}

// header finds where code can be inserted after the module's header: its
// docstring, `from __future__` imports and import block (leading comments
// and blank lines between them included). It returns the byte offset of the
// start of the line after the header's last statement (len(src) at the end
// of the file), and which statement ended the header: "import",
// "docstring", or "" when the module has no header; then the offset is
// after the leading comment lines (a shebang, a licence).
func (f *pyFile) header() (offset int, last string) {
	end := -1
	first := true
	for i := 0; i < int(f.root.NamedChildCount()); i++ {
		c := f.root.NamedChild(i)
		switch {
		case c.Type() == "comment":
			continue
		case first && isDocstring(c):
			end, last = int(c.EndByte()), "docstring"
		case isImport(c) || importGuard(c):
			end, last = int(c.EndByte()), "import"
		default:
			i = int(f.root.NamedChildCount())
			continue
		}
		first = false
	}
	if end < 0 {
		return f.afterLeadingComments(), ""
	}
	return lineEndAfter(f.src, end), last
}

// afterLeadingComments returns the offset after the comment lines at the top
// of the file (a BOM, a shebang, a coding line, a licence).
func (f *pyFile) afterLeadingComments() int {
	pos := 0
	if bytes.HasPrefix(f.src, bom) {
		pos = len(bom)
	}
	for pos < len(f.src) {
		line := f.src[pos:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j+1]
		}
		if t := bytes.TrimLeft(line, " \t\f"); len(t) == 0 || t[0] != '#' {
			break
		}
		pos += len(line)
	}
	return pos
}

// lineEndAfter returns the offset of the start of the line after the one
// holding byte off-1 (len(src) when that line is the last). A trailing
// comment on the statement's line stays with it.
func lineEndAfter(src []byte, off int) int {
	if j := bytes.IndexByte(src[off:], '\n'); j >= 0 {
		return off + j + 1
	}
	return len(src)
}

// indentUnit returns the file's indentation step: the leading whitespace of
// the first statement in the body of a top-level def or class; "    " when
// there is none.
func (f *pyFile) indentUnit() string {
	for i := 0; i < int(f.root.NamedChildCount()); i++ {
		c := f.root.NamedChild(i)
		if c.Type() == "decorated_definition" {
			c = c.ChildByFieldName("definition")
		}
		if c == nil || (c.Type() != "function_definition" && c.Type() != "class_definition") {
			continue
		}
		body := c.ChildByFieldName("body")
		if body == nil || body.NamedChildCount() == 0 {
			continue
		}
		start := int(body.NamedChild(0).StartByte())
		ls := bytes.LastIndexByte(f.src[:start], '\n') + 1
		ws := string(f.src[ls:start])
		if ws != "" && strings.Trim(ws, " \t") == "" {
			return ws
		}
	}
	return "    "
}

// blankLinesAt counts the blank lines that start at offset off, and reports
// whether only blank lines follow to the end of the file.
func blankLinesAt(src []byte, off int) (n int, toEOF bool) {
	for off < len(src) {
		j := bytes.IndexByte(src[off:], '\n')
		line := src[off:]
		if j >= 0 {
			line = src[off : off+j]
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return n, false
		}
		n++
		if j < 0 {
			break
		}
		off += j + 1
	}
	return n, true
}
