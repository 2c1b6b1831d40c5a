package guard

import (
	"path/filepath"
	"sort"
	"strings"
)

// File is one parsed Python file and what capguard learned of it.
type File struct {
	Path   string // as the user named it (or as found under a named folder)
	Module string // dotted module name ("pkg.sub.mod"), from the __init__.py chain
	Src    []byte
	Tree   *Tree
	// Imports maps a local name to the dotted name it binds:
	// "tc" -> "torch.cuda", "graph" -> "torch.cuda.graph", "f" -> "pkg.mod.f".
	Imports map[string]string
	Funcs   []*Function
	ByQual  map[string]*Function
	Classes map[string]*Class // by qualified name
	// Kernels are the names of functions decorated with triton.jit or
	// triton.autotune in this file.
	Kernels map[string]bool
	// lines holds the byte offset of each line start, for positions.
	lines    []int
	moduleFn *Function
}

// Function is a def (or a method) with what the rules need of it.
type Function struct {
	File       *File
	Qual       string // "Class.method", "outer.inner", "f"
	Name       string
	Class      *Class // enclosing class, nil for functions
	Outer      *Function
	Def        *Node // function_definition
	Body       *Node // block
	Params     []string
	Decorators []*Node
	Docstring  *Node
}

// Label is the function as it appears in a call chain: "path:Qual".
func (f *Function) Label() string { return f.File.Path + ":" + f.Qual }

// Self is the name of the receiver parameter of a method, or "".
func (f *Function) Self() string {
	if f.Class == nil && f.Outer != nil {
		// A closure inside a method sees the method's self.
		if s := f.Outer.Self(); s != "" && !f.hasParam(s) {
			return s
		}
		return ""
	}
	if f.Class == nil || len(f.Params) == 0 {
		return ""
	}
	for _, d := range f.Decorators {
		if strings.Contains(d.Text(f.File.Src), "staticmethod") {
			return ""
		}
	}
	return f.Params[0]
}

// Class is a class definition.
type Class struct {
	File    *File
	Name    string
	Qual    string
	Node    *Node
	Bases   []*Node
	Methods map[string]*Function
	// Attrs maps an attribute of self to the callees of the calls assigned
	// to it (`self.rotary = RotaryEmbedding(dim)` gives rotary:
	// [RotaryEmbedding]), __init__'s first, then the other methods' in
	// source order.
	Attrs map[string][]*Node
}

func newFile(path, module string, src []byte, tree *Tree) *File {
	f := &File{Path: path, Module: module, Src: src, Tree: tree,
		Imports: map[string]string{}, ByQual: map[string]*Function{},
		Classes: map[string]*Class{}, Kernels: map[string]bool{}}
	f.lines = []int{0}
	for i, b := range src {
		if b == '\n' {
			f.lines = append(f.lines, i+1)
		}
	}
	if tree != nil && tree.Root != nil {
		f.collect(tree.Root, "", nil, nil)
		// Source order (collect is preorder; innermostAt relies on it).
		sort.SliceStable(f.Funcs, func(i, j int) bool { return f.Funcs[i].Def.Start < f.Funcs[j].Def.Start })
	}
	return f
}

// Pos converts a byte offset to a 1-based line and column.
func (f *File) Pos(off int) Pos {
	lo, hi := 0, len(f.lines)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if f.lines[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return Pos{Line: lo + 1, Column: off - f.lines[lo] + 1, Offset: off}
}

// LineStart returns the byte offset where line (1-based) starts.
func (f *File) LineStart(line int) int {
	if line < 1 {
		return 0
	}
	if line > len(f.lines) {
		return len(f.Src)
	}
	return f.lines[line-1]
}

// collect walks module and class bodies and function bodies for defs,
// classes and imports. Iterative over statements; recursion depth follows
// def/class nesting only.
func (f *File) collect(block *Node, prefix string, cls *Class, outer *Function) {
	for _, st := range block.Children {
		f.collectStmt(st, prefix, cls, outer, nil)
	}
}

func (f *File) collectStmt(st *Node, prefix string, cls *Class, outer *Function, decorators []*Node) {
	switch st.Kind {
	case "decorated_definition":
		def := st.Get("definition")
		if def != nil {
			var decs []*Node
			for _, c := range st.Children {
				if c.Kind == "decorator" {
					decs = append(decs, c)
				}
			}
			f.collectStmt(def, prefix, cls, outer, decs)
		}
	case "function_definition":
		name := st.Get("name").Text(f.Src)
		fn := &Function{File: f, Name: name, Qual: prefix + name, Class: cls, Outer: outer,
			Def: st, Body: st.Get("body"), Decorators: decorators}
		for _, p := range st.Get("parameters").NamedChildren() {
			fn.Params = append(fn.Params, paramName(p, f.Src))
		}
		fn.Docstring = docstring(fn.Body)
		f.Funcs = append(f.Funcs, fn)
		f.ByQual[fn.Qual] = fn
		if cls != nil && outer == nil {
			cls.Methods[name] = fn
		}
		for _, d := range decorators {
			t := d.Text(f.Src)
			if strings.Contains(t, "triton.jit") || strings.Contains(t, "triton.autotune") ||
				strings.Contains(t, "@jit") || strings.Contains(t, "triton.heuristics") {
				f.Kernels[name] = true
			}
		}
		if fn.Body != nil {
			f.collectNested(fn.Body, fn.Qual+".", fn)
		}
	case "class_definition":
		name := st.Get("name").Text(f.Src)
		c := &Class{File: f, Name: name, Qual: prefix + name, Node: st,
			Methods: map[string]*Function{}, Attrs: map[string][]*Node{}}
		if sc := st.Get("superclasses"); sc != nil {
			for _, b := range sc.NamedChildren() {
				if b.Kind != "keyword_argument" {
					c.Bases = append(c.Bases, b)
				}
			}
		}
		f.Classes[c.Qual] = c
		if body := st.Get("body"); body != nil {
			f.collect(body, c.Qual+".", c, nil)
		}
		// Methods in a fixed order (__init__, then source order): the
		// attribute's constructor must not depend on map order.
		var methods []*Function
		for _, m := range c.Methods {
			methods = append(methods, m)
		}
		sort.Slice(methods, func(i, j int) bool {
			if (methods[i].Name == "__init__") != (methods[j].Name == "__init__") {
				return methods[i].Name == "__init__"
			}
			return methods[i].Def.Start < methods[j].Def.Start
		})
		for _, m := range methods {
			self := m.Self()
			if self == "" || m.Body == nil {
				continue
			}
			forEachCallAssignment(m.Body, func(l, call *Node) {
				if l.Kind == "attribute" && isName(l.Get("object"), self, f.Src) {
					attr := l.Get("attribute").Text(f.Src)
					c.Attrs[attr] = append(c.Attrs[attr], call.Get("function"))
				}
			})
		}
	case "import_statement", "import_from_statement":
		f.collectImport(st)
	case "if_statement", "try_statement", "with_statement", "block", "else_clause", "except_clause", "finally_clause", "elif_clause":
		// Defs and imports under `if TYPE_CHECKING:`, `try: import x`, and so on.
		for _, c := range st.Children {
			if c.Kind == "block" || strings.HasSuffix(c.Kind, "_clause") {
				for _, s := range c.Children {
					f.collectStmt(s, prefix, cls, outer, nil)
				}
			}
		}
		if st.Kind == "block" {
			for _, s := range st.Children {
				f.collectStmt(s, prefix, cls, outer, nil)
			}
		}
	}
}

// collectNested finds defs and classes nested anywhere inside a function body.
func (f *File) collectNested(body *Node, prefix string, outer *Function) {
	forEachStmt(body, func(s *Node) {
		switch s.Kind {
		case "function_definition", "class_definition", "decorated_definition":
			f.collectStmt(s, prefix, nil, outer, nil)
		case "import_statement", "import_from_statement":
			f.collectImport(s)
		}
	})
}

// forEachCallAssignment calls fn for each `left = callee(...)` statement of
// block (nested blocks included), with the assignment's left side and the
// call (parentheses around it removed).
func forEachCallAssignment(block *Node, fn func(left, call *Node)) {
	forEachStmt(block, func(s *Node) {
		if s.Kind != "expression_statement" {
			return
		}
		for _, a := range s.NamedChildren() {
			if a.Kind != "assignment" {
				continue
			}
			if l, r := a.Get("left"), Unparen(a.Get("right")); l != nil && r != nil && r.Kind == "call" {
				fn(l, r)
			}
		}
	})
}

// forEachStmt calls fn for every statement of block and of the blocks
// nested in it (if/else/elif, try/except/finally, for, while, with), in
// source order. Definitions are passed to fn but not entered.
func forEachStmt(block *Node, fn func(*Node)) {
	if block == nil {
		return
	}
	var stack []*Node // statements, the next one last
	pushBody := func(b *Node) {
		for i := len(b.Children) - 1; i >= 0; i-- {
			if s := b.Children[i]; s.Named && s.Kind != "comment" {
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

// stmtBlocks returns the blocks of a compound statement, its clauses'
// included (`if`'s body, then its elif and else bodies), in source order.
func stmtBlocks(s *Node) []*Node {
	var out []*Node
	for _, c := range s.Children {
		switch {
		case c.Kind == "block":
			out = append(out, c)
		case strings.HasSuffix(c.Kind, "_clause"):
			for _, cc := range c.Children {
				if cc.Kind == "block" {
					out = append(out, cc)
				}
			}
		}
	}
	return out
}

func (f *File) collectImport(st *Node) {
	src := f.Src
	if st.Kind == "import_statement" {
		for _, n := range st.All("name") {
			if n.Kind == "aliased_import" {
				f.Imports[n.Get("alias").Text(src)] = n.Get("name").Text(src)
			} else {
				full := n.Text(src)
				top := full
				if i := strings.IndexByte(full, '.'); i >= 0 {
					top = full[:i]
				}
				f.Imports[top] = top
				f.Imports[full] = full
			}
		}
		return
	}
	mod := st.Get("module_name")
	base := f.absModule(mod.Text(src))
	for _, n := range st.All("name") {
		if n.Kind == "aliased_import" {
			f.Imports[n.Get("alias").Text(src)] = join(base, n.Get("name").Text(src))
		} else {
			f.Imports[n.Text(src)] = join(base, n.Text(src))
		}
	}
}

// absModule turns a (possibly relative) module reference into an absolute
// dotted name, relative to this file's package.
func (f *File) absModule(ref string) string {
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, ".") {
		return ref
	}
	dots := len(ref) - len(strings.TrimLeft(ref, "."))
	rest := ref[dots:]
	pkg := f.Module
	if filepath.Base(f.Path) != "__init__.py" {
		pkg = parentModule(pkg)
	}
	for i := 1; i < dots; i++ {
		pkg = parentModule(pkg)
	}
	return join(pkg, rest)
}

func parentModule(m string) string {
	if i := strings.LastIndexByte(m, '.'); i >= 0 {
		return m[:i]
	}
	return ""
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

func paramName(p *Node, src []byte) string {
	switch p.Kind {
	case "identifier":
		return p.Text(src)
	case "typed_parameter", "list_splat_pattern", "dictionary_splat_pattern":
		for _, c := range p.NamedChildren() {
			if c.Kind == "identifier" {
				return c.Text(src)
			}
		}
	case "default_parameter", "typed_default_parameter":
		if n := p.Get("name"); n != nil {
			return n.Text(src)
		}
	}
	return ""
}

func docstring(body *Node) *Node {
	if body == nil {
		return nil
	}
	for _, s := range body.NamedChildren() {
		if s.Kind == "expression_statement" {
			kids := s.NamedChildren()
			if len(kids) == 1 && kids[0].Kind == "string" {
				return kids[0]
			}
		}
		return nil
	}
	return nil
}

func isName(n *Node, name string, src []byte) bool {
	return n != nil && n.Kind == "identifier" && name != "" && n.Text(src) == name
}

func (f *Function) hasParam(name string) bool {
	for _, p := range f.Params {
		if p == name {
			return true
		}
	}
	return false
}

// Owner is the class whose self the function sees: its own class, or for a
// closure, the class of the enclosing method.
func (f *Function) Owner() *Class {
	for g := f; g != nil; g = g.Outer {
		if g.Class != nil {
			return g.Class
		}
	}
	return nil
}
