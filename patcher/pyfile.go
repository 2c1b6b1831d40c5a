package patcher

import (
	"bytes"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
)

// pyFile is a parsed Python source (guard's parser and tree): what the
// patcher needs to know about its top level.
type pyFile struct {
	src  []byte
	root *guard.Node
	bad  bool // a syntax error
}

func parsePy(src []byte) *pyFile {
	t, err := guard.Parse(src)
	if err != nil || t.Root == nil {
		return &pyFile{src: src, root: &guard.Node{}, bad: true}
	}
	return &pyFile{src: src, root: t.Root, bad: t.Syntax != ""}
}

// named lists n's named children, comments included (guard's
// NamedChildren leaves comments out).
func named(n *guard.Node) []*guard.Node {
	var out []*guard.Node
	for _, c := range n.Children() {
		if c.Named() {
			out = append(out, c)
		}
	}
	return out
}

var bom = []byte("\xef\xbb\xbf")

// isImport reports whether n is an import statement.
func isImport(n *guard.Node) bool {
	switch n.Kind() {
	case "import_statement", "import_from_statement", "future_import_statement":
		return true
	}
	return false
}

// isDocstring reports whether n is a statement made of one string.
func isDocstring(n *guard.Node) bool {
	return n.Kind() == "expression_statement" && len(named(n)) == 1 &&
		(named(n)[0].Kind() == "string" || named(n)[0].Kind() == "concatenated_string")
}

// importGuard reports whether n is a compound statement made only of imports
// and trivial statements: `try: import x / except ImportError: x = None` or
// `if TYPE_CHECKING: import y`. It belongs to the import block.
func importGuard(n *guard.Node) bool {
	if n.Kind() != "try_statement" && n.Kind() != "if_statement" {
		return false
	}
	sawImport := false
	ok := true
	var walk func(*guard.Node)
	walk = func(x *guard.Node) {
		for _, c := range named(x) {
			if !ok {
				break
			}
			switch c.Kind() {
			case "import_statement", "import_from_statement":
				sawImport = true
			case "pass_statement", "comment":
			case "expression_statement":
				if len(named(c)) != 1 || named(c)[0].Kind() != "assignment" {
					ok = false
				}
			case "block", "except_clause", "else_clause", "elif_clause", "finally_clause":
				walk(c)
			default:
				// The condition of an if or the type of an except may be any
				// expression; another statement ends the import block.
				t := c.Kind()
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
func (f *pyFile) topLevel(fn func(n *guard.Node)) {
	var walk func(*guard.Node)
	walk = func(x *guard.Node) {
		for _, c := range named(x) {
			fn(c)
			switch c.Kind() {
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
	f.topLevel(func(n *guard.Node) {
		if found {
			return
		}
		switch n.Kind() {
		case "decorated_definition":
			if d := n.Get("definition"); d != nil && f.text(d.Get("name")) == name {
				found = true
			}
		case "function_definition", "class_definition":
			found = f.text(n.Get("name")) == name
		case "import_statement", "import_from_statement":
			found = f.importBinds(n, name)
		case "expression_statement":
			if len(named(n)) == 1 && named(n)[0].Kind() == "assignment" {
				left := named(n)[0].Get("left")
				found = left != nil && left.Kind() == "identifier" && f.text(left) == name
			}
		}
	})
	return found
}

// importBinds reports whether an import statement binds name.
func (f *pyFile) importBinds(n *guard.Node, name string) bool {
	from := n.Kind() == "import_from_statement"
	module := n.Get("module_name")
	for _, c := range named(n) {
		if from && module != nil && c == module {
			continue
		}
		switch c.Kind() {
		case "dotted_name":
			t := f.text(c)
			if from && t == name {
				return true
			}
			if !from && (t == name || strings.HasPrefix(t, name+".")) {
				return true // `import torch.nn` binds torch
			}
		case "aliased_import":
			if f.text(c.Get("alias")) == name {
				return true
			}
		case "wildcard_import":
			// `from m import *` may bind it; nothing is certain. Assume not.
		}
	}
	return false
}

func (f *pyFile) text(n *guard.Node) string {
	if n == nil {
		return ""
	}
	return n.Text(f.src)
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
	for _, c := range named(f.root) {
		switch {
		case c.Kind() == "comment":
			continue
		case first && isDocstring(c):
			end, last = int(c.End), "docstring"
		case isImport(c) || importGuard(c):
			end, last = int(c.End), "import"
		default:
			goto done
		}
		first = false
	}
done:
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
	for _, c := range named(f.root) {
		if c.Kind() == "decorated_definition" {
			c = c.Get("definition")
		}
		if c == nil || (c.Kind() != "function_definition" && c.Kind() != "class_definition") {
			continue
		}
		body := c.Get("body")
		if body == nil || len(named(body)) == 0 {
			continue
		}
		start := named(body)[0].Start
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
