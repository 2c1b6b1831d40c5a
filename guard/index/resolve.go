package index

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// SymKind is what a name statically denotes.
type SymKind uint8

const (
	SymNone     SymKind = iota
	SymModule           // a project module
	SymClass            // a project class
	SymFunc             // a project function
	SymExternal         // a name from outside the project ("torch.cuda.graph", a builtin "super")
)

// Symbol is a static resolution: what a dotted name means through imports,
// re-exports and simple aliases (`Base = other.Base`), without flow.
type Symbol struct {
	Kind     SymKind
	Module   *Module
	Class    *Class
	Func     *Function
	External string
}

type staticKey struct {
	f    *File
	name string
}

// resolveImports fills f.Imports and f.All.
func (p *Project) resolveImports(f *File) {
	if f.Tree == nil || f.Tree.Root == nil {
		return
	}
	src := f.Src
	syntax.Walk(f.Tree.Root, func(n *Node) bool {
		switch n.Kind() {
		case "import_statement":
			for _, c := range n.All("name") {
				if c.Kind() == "aliased_import" {
					f.Imports[c.Get("alias").Text(src)] = p.moduleString(f, c.Get("name").Text(src), 0)
					continue
				}
				full := c.Text(src)
				top := full
				if i := strings.IndexByte(full, '.'); i >= 0 {
					top = full[:i]
				}
				f.Imports[top] = p.moduleString(f, top, 0)
				f.Imports[full] = p.moduleString(f, full, 0)
			}
			return false
		case "import_from_statement":
			mod, level := FromModule(n, src)
			base := p.fromString(f, mod, level)
			for _, c := range n.Children() {
				if c.Kind() == "wildcard_import" {
					f.Star = true
				}
			}
			for _, c := range n.All("name") {
				if c.Kind() == "aliased_import" {
					f.Imports[c.Get("alias").Text(src)] = join(base, c.Get("name").Text(src))
				} else {
					f.Imports[c.Text(src)] = join(base, c.Text(src))
				}
			}
			return false
		case "expression_statement":
			// __all__ = ["a", "b"] at module level.
			if n.Parent() == f.Tree.Root {
				for _, a := range n.NamedChildren() {
					if a.Kind() == "assignment" && a.Get("left").Text(src) == "__all__" {
						if r := syntax.Unparen(a.Get("right")); r != nil && r.Is("list", "tuple") {
							f.All = []string{}
							for _, e := range r.NamedChildren() {
								if s, ok := StringLit(e, src); ok {
									f.All = append(f.All, s)
								}
							}
						}
					}
				}
			}
		}
		return true
	})
}

// moduleString is the dotted name of an imported module: the project
// module's qualified name, or the name as written for an external one.
func (p *Project) moduleString(f *File, dotted string, level int) string {
	if m := p.Import(f, dotted, level); m != nil {
		if q := m.Qualified(); q != "" {
			return q
		}
	}
	if level > 0 {
		// A relative import outside the analysed files: keep it relative
		// to the file's own package name.
		pkg := f.Name
		if f.Module == nil || !(f.Module.IsDir && f.Module.File == f) {
			pkg = parent(pkg)
		}
		for i := 1; i < level; i++ {
			pkg = parent(pkg)
		}
		return join(pkg, dotted)
	}
	return dotted
}

// fromString is moduleString for a from-import's module.
func (p *Project) fromString(f *File, dotted string, level int) string {
	if level == 0 {
		if m := p.ImportFrom(f, dotted, 0); m != nil {
			if q := m.Qualified(); q != "" {
				return q
			}
		}
	}
	return p.moduleString(f, dotted, level)
}

// FromModule returns a from-import's module name and its level of dots:
// `from ..a.b import c` -> ("a.b", 2).
func FromModule(n *Node, src []byte) (string, int) {
	mod := n.Get("module_name")
	if mod == nil {
		return "", 0
	}
	ref := strings.TrimSpace(mod.Text(src))
	dots := len(ref) - len(strings.TrimLeft(ref, "."))
	return strings.TrimSpace(ref[dots:]), dots
}

func parent(m string) string {
	if i := strings.LastIndexByte(m, '.'); i >= 0 {
		return m[:i]
	}
	return ""
}

// Join joins two parts of a dotted name, either of which may be empty.
func Join(a, b string) string { return join(a, b) }

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// StringLit returns the value of a plain string literal (no f-string, no
// concatenation).
func StringLit(n *Node, src []byte) (string, bool) {
	n = syntax.Unparen(n)
	if n == nil || n.Kind() != "string" {
		return "", false
	}
	var b strings.Builder
	for _, c := range n.Children() {
		switch c.Kind() {
		case "string_content":
			b.WriteString(c.Text(src))
		case "interpolation":
			return "", false
		case "string_start":
			if strings.ContainsAny(strings.ToLower(c.Text(src)), "fb") {
				return "", false
			}
		}
	}
	return b.String(), true
}

// IsDottedName: s reads as a dotted name of two parts or more
// (`pkg.models.llama.LlamaForCausalLM`), what `importlib.import_module`
// and a getattr of a computed name may resolve (flow/importstr.go).
func IsDottedName(s string) bool {
	part := 0 // characters in the current part
	parts := 1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if part == 0 {
				return false
			}
			parts++
			part = 0
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			part++
		case c >= '0' && c <= '9':
			if part == 0 {
				return false
			}
			part++
		default:
			return false
		}
	}
	return parts >= 2 && part > 0
}

// ResolveName resolves a name bound at module level in f (a def, a class,
// an import, a simple alias); a name f does not bind is a builtin.
//
// After Seal it only reads the memo, so concurrent callers (the rules run
// on every core) are safe.
func (p *Project) ResolveName(f *File, name string) Symbol {
	k := staticKey{f, name}
	if s, ok := p.static[k]; ok {
		return s
	}
	if p.sealed {
		// Seal resolved every name a parsed file binds; what is left
		// binds nothing to resolve (a builtin, an unparsed file) and
		// resolveName answers it without recursing or writing.
		if f.Tree == nil || f.Tree.Root == nil || !f.Top.Locals[name] {
			return p.resolveName(f, name)
		}
		return Symbol{}
	}
	if p.inFlight[k] {
		return Symbol{}
	}
	p.inFlight[k] = true
	s := p.resolveName(f, name)
	delete(p.inFlight, k)
	p.static[k] = s
	return s
}

// Seal resolves every module-level name of every file, in path and name
// order, so that the memo holds them all and later lookups only read it:
// the answers no longer depend on which rule asked first (a cycle of
// aliases resolves the same way every run), and goroutines may share the
// project. The index must not change after Seal.
func (p *Project) Seal() {
	if p.sealed {
		return
	}
	for _, f := range p.Files {
		if f.Tree == nil || f.Tree.Root == nil || f.Top == nil {
			continue
		}
		for _, name := range f.TopNames {
			p.ResolveName(f, name)
		}
	}
	p.sealed = true
}

func (p *Project) resolveName(f *File, name string) Symbol {
	if f.Tree == nil || f.Tree.Root == nil {
		return Symbol{}
	}
	if !f.Top.Locals[name] {
		if name == "__name__" || name == "__file__" {
			return Symbol{}
		}
		if f.Star {
			// A name a `from m import *` brings (a package's
			// `__init__.py` re-exporting its modules' classes).
			if s := p.starBinding(f, name, nil); s.Kind != SymNone {
				return s
			}
		}
		return Symbol{Kind: SymExternal, External: name}
	}
	for _, st := range topBinders(f, name, true) {
		stmtSteps.Add(1)
		if found := p.stmtBinding(f, st, name); found.Kind != SymNone {
			return found
		}
	}
	return Symbol{}
}

// wildcardKey is the binders entry of star imports, which may bind any
// name.
const wildcardKey = "*"

// topBinders are the module-level statements of f (as forTopStmts visits
// them, in source order) that may bind name: a def or class of that name,
// an import or from-import that binds it, an assignment statement with it
// as a plain target, and with wild the star imports too. The index is made
// once a file, so that resolving every name of a file costs its statements
// once, not once a name (a module of n constants took n² steps).
func topBinders(f *File, name string, wild bool) []*Node {
	f.bindersOnce.Do(func() {
		m := map[string][]*Node{}
		src := f.Src
		add := func(n string, st *Node) {
			if l := m[n]; len(l) == 0 || l[len(l)-1] != st {
				m[n] = append(l, st)
			}
		}
		forTopStmts(f.Tree.Root, func(st *Node) bool {
			switch st.Kind() {
			case "function_definition", "class_definition":
				if n := st.Get("name"); n != nil {
					add(n.Text(src), st)
				}
			case "import_statement":
				for _, c := range st.All("name") {
					if c.Kind() == "aliased_import" {
						add(c.Get("alias").Text(src), st)
						continue
					}
					full := c.Text(src)
					if i := strings.IndexByte(full, '.'); i >= 0 {
						full = full[:i]
					}
					add(full, st)
				}
			case "import_from_statement":
				for _, c := range st.All("name") {
					if c.Kind() == "aliased_import" {
						add(c.Get("alias").Text(src), st)
					} else {
						add(c.Text(src), st)
					}
				}
				for _, c := range st.Children() {
					if c.Kind() == "wildcard_import" {
						add(wildcardKey, st)
					}
				}
			case "expression_statement":
				for _, a := range st.NamedChildren() {
					if a.Kind() == "assignment" {
						if l := a.Get("left"); l != nil && l.Kind() == "identifier" {
							add(l.Text(src), st)
						}
					}
				}
			}
			return true
		})
		f.binders = m
	})
	own := f.binders[name]
	if !wild || len(f.binders[wildcardKey]) == 0 {
		return own
	}
	// The star imports, merged in by position (no statement is in both:
	// a star import binds no name of its own).
	out := append(slices.Clone(own), f.binders[wildcardKey]...)
	slices.SortStableFunc(out, func(a, b *Node) int { return int(a.Start - b.Start) })
	return out
}

// bindingBefore is what a module-level name of f is bound to by the last
// module-level statement before offset pos that binds it: a base in
// `class Impl(Impl, nn.Module)` after `from .base import Impl` is the
// imported class, and so is it for every statement up to that class; after
// it, the name is the new class (Hierarchy's bases). SymNone when no
// statement before pos binds the name.
func (p *Project) bindingBefore(f *File, name string, pos int) Symbol {
	var found Symbol
	if f.Tree == nil || f.Tree.Root == nil || !f.Top.Locals[name] {
		return found
	}
	for _, st := range topBinders(f, name, true) {
		if int(st.Start) >= pos {
			break
		}
		if s := p.stmtBinding(f, st, name); s.Kind != SymNone {
			found = s
		}
	}
	return found
}

// stmtBinding is what one module-level statement binds name to (the last
// of its bindings of it), SymNone when it binds no resolvable value to it.
func (p *Project) stmtBinding(f *File, st *Node, name string) Symbol {
	src := f.Src
	var found Symbol
	switch st.Kind() {
	case "function_definition":
		if st.Get("name").Text(src) == name {
			if fn := f.funcAt(st); fn != nil {
				found = Symbol{Kind: SymFunc, Func: fn}
			}
		}
	case "class_definition":
		if st.Get("name").Text(src) == name {
			if c := f.Classes[name]; c != nil {
				found = Symbol{Kind: SymClass, Class: c}
			}
		}
	case "import_statement":
		for _, c := range st.All("name") {
			if c.Kind() == "aliased_import" {
				if c.Get("alias").Text(src) == name {
					found = p.moduleSymbol(f, c.Get("name").Text(src), 0)
				}
				continue
			}
			full := c.Text(src)
			top := full
			if i := strings.IndexByte(full, '.'); i >= 0 {
				top = full[:i]
			}
			if top == name {
				found = p.moduleSymbol(f, top, 0)
			}
		}
	case "import_from_statement":
		mod, level := FromModule(st, src)
		for _, c := range st.All("name") {
			local, orig := fromName(c, src)
			if local != name {
				continue
			}
			m := p.ImportFrom(f, mod, level)
			if m == nil {
				base := mod
				if level > 0 {
					base = p.moduleString(f, mod, level)
				}
				found = Symbol{Kind: SymExternal, External: join(base, orig)}
			} else {
				found = p.ModuleMember(m, orig)
			}
		}
		if s := p.starStmtBinding(f, st, name, nil); s.Kind != SymNone {
			found = s
		}
	case "expression_statement":
		for _, a := range st.NamedChildren() {
			if a.Kind() != "assignment" {
				continue
			}
			l, r := a.Get("left"), syntax.Unparen(a.Get("right"))
			if l != nil && l.Kind() == "identifier" && l.Text(src) == name && r != nil && r.Is("identifier", "attribute") {
				if s := p.ResolveExpr(f, r); s.Kind != SymNone {
					found = s
				}
			}
		}
	}

	return found
}

// starBinding is what the star imports of f bind name to (the last that
// binds it), SymNone when none does. f does not bind name itself. seen
// holds the files asked already for this name (nil at the first): each is
// asked once, whatever the cycles and fan-out of the star imports.
func (p *Project) starBinding(f *File, name string, seen map[*File]bool) Symbol {
	if seen == nil {
		seen = map[*File]bool{}
	}
	if seen[f] {
		return Symbol{}
	}
	seen[f] = true
	var found Symbol
	for _, st := range topBinders(f, name, true) {
		if s := p.starStmtBinding(f, st, name, seen); s.Kind != SymNone {
			found = s
		}
	}
	return found
}

// starStmtBinding is what st binds name to when it is a `from m import *`
// of a project module that exports name: in the module's `__all__` where
// it has one, else any name not starting with an underscore.
func (p *Project) starStmtBinding(f *File, st *Node, name string, seen map[*File]bool) Symbol {
	if st.Kind() != "import_from_statement" {
		return Symbol{}
	}
	star := false
	for _, c := range st.Children() {
		star = star || c.Kind() == "wildcard_import"
	}
	if !star {
		return Symbol{}
	}
	mod, level := FromModule(st, f.Src)
	m := p.ImportFrom(f, mod, level)
	if m == nil || m.File == nil || m.File.Tree == nil || m.File.Tree.Root == nil {
		return Symbol{}
	}
	if mf := m.File; mf.All != nil && !slices.Contains(mf.All, name) || mf.All == nil && strings.HasPrefix(name, "_") {
		return Symbol{}
	}
	switch {
	case m.File.Top.Locals[name]:
		return p.ResolveName(m.File, name)
	case m.File.Star:
		return p.starBinding(m.File, name, seen)
	}
	return Symbol{}
}

// forTopStmts calls fn for each module-level statement, entering if, try
// and with blocks (guarded imports), until fn returns false.
func forTopStmts(root *Node, fn func(*Node) bool) {
	var visit func(stmts []*Node) bool
	visit = func(stmts []*Node) bool {
		for _, st := range stmts {
			if st.Kind() == "decorated_definition" {
				st = st.Get("definition")
				if st == nil {
					continue
				}
			}
			stmtSteps.Add(1)
			if !fn(st) {
				return false
			}
			if st.Is("if_statement", "try_statement", "with_statement") {
				for _, c := range st.Children() {
					if c.Kind() == "block" {
						if !visit(c.Children()) {
							return false
						}
					} else if strings.HasSuffix(c.Kind(), "_clause") {
						for _, cc := range c.Children() {
							if cc.Kind() == "block" && !visit(cc.Children()) {
								return false
							}
						}
					}
				}
			}
		}
		return true
	}
	visit(root.Children())
}

func (f *File) funcAt(def *Node) *Function {
	if f.byDef != nil {
		lookupSteps.Add(1)
		return f.byDef[def]
	}
	for _, fn := range f.Funcs {
		lookupSteps.Add(1)
		if fn.Def == def {
			return fn
		}
	}
	return nil
}

// stmtSteps counts the module-level statements that forTopStmts visits
// and that name resolution examines: the growth tests read it.
var stmtSteps atomic.Int64

// lookupSteps counts the entries funcAt examines: the growth tests read it
// (work, unlike wall-clock time, is deterministic).
var lookupSteps atomic.Int64

// FuncAt returns the function whose def (or lambda) node is def.
func (f *File) FuncAt(def *Node) *Function { return f.funcAt(def) }

func (p *Project) moduleSymbol(f *File, dotted string, level int) Symbol {
	if m := p.Import(f, dotted, level); m != nil {
		return Symbol{Kind: SymModule, Module: m}
	}
	return Symbol{Kind: SymExternal, External: dotted}
}

// ModuleMember resolves name in module m: a binding of its file (its
// __init__.py for a package), else a submodule.
func (p *Project) ModuleMember(m *Module, name string) Symbol {
	if m.File != nil && m.File.Top.Locals[name] {
		if s := p.ResolveName(m.File, name); s.Kind != SymNone {
			return s
		}
	} else if m.File != nil && m.File.Star && m.File.Tree != nil && m.File.Tree.Root != nil {
		if s := p.starBinding(m.File, name, nil); s.Kind != SymNone {
			return s
		}
	}
	if c := m.Child(name); c != nil {
		return Symbol{Kind: SymModule, Module: c}
	}
	return Symbol{}
}

// ResolveExpr resolves an identifier or attribute chain at module level
// in f.
func (p *Project) ResolveExpr(f *File, n *Node) Symbol {
	n = syntax.Unparen(n)
	if n == nil {
		return Symbol{}
	}
	switch n.Kind() {
	case "identifier":
		return p.ResolveName(f, n.Text(f.Src))
	case "attribute":
		base := p.ResolveExpr(f, n.Get("object"))
		attr := n.Get("attribute").Text(f.Src)
		switch base.Kind {
		case SymModule:
			return p.ModuleMember(base.Module, attr)
		case SymClass:
			if c := base.Class.File.Classes[base.Class.Qual+"."+attr]; c != nil {
				return Symbol{Kind: SymClass, Class: c}
			}
			if m := base.Class.Methods[attr]; m != nil {
				return Symbol{Kind: SymFunc, Func: m}
			}
		case SymExternal:
			return Symbol{Kind: SymExternal, External: base.External + "." + attr}
		}
	case "subscript":
		// Generic[T], Optional[X] as a base: the value.
		return p.ResolveExpr(f, n.Get("value"))
	}
	return Symbol{}
}

// Qualify returns the dotted name an expression denotes through the
// file's imports (`tc.graph` -> "torch.cuda.graph" after `import
// torch.cuda as tc`); names that are not imports qualify to themselves;
// "" for anything but identifiers and attribute chains.
func (f *File) Qualify(n *Node) string {
	n = syntax.Unparen(n)
	if n == nil {
		return ""
	}
	switch n.Kind() {
	case "identifier":
		name := n.Text(f.Src)
		if q, ok := f.Imports[name]; ok {
			return q
		}
		return name
	case "attribute":
		if n.End-n.Start > maxQualified {
			// No import or known API is so long a name; asking would
			// cost each link of a long chain the whole chain's text.
			return ""
		}
		if full, ok := f.Imports[string(f.Src[n.Start:n.End])]; ok {
			return full
		}
		base := f.Qualify(n.Get("object"))
		if base == "" {
			return ""
		}
		return base + "." + n.Get("attribute").Text(f.Src)
	}
	return ""
}

// maxQualified bounds the source length of an attribute chain Qualify
// names.
const maxQualified = 512

// LiteralOf returns the literal a module-level name is bound to, when f
// binds it exactly once, to a number, string, True, False or None (or
// imports it from a module that does); the file holding the literal too.
func (p *Project) LiteralOf(f *File, name string) (*File, *Node) {
	return p.literalOf(f, name, 0)
}

func (p *Project) literalOf(f *File, name string, depth int) (*File, *Node) {
	if depth > 4 || f.Tree == nil || f.Tree.Root == nil || !f.Top.Locals[name] {
		return nil, nil
	}
	var lit *Node
	var from *File
	n := 0
	src := f.Src
	visit := func(st *Node) bool {
		switch st.Kind() {
		case "expression_statement":
			for _, a := range st.NamedChildren() {
				if a.Kind() == "assignment" {
					if l := a.Get("left"); l != nil && l.Kind() == "identifier" && l.Text(src) == name {
						n++
						if r := syntax.Unparen(a.Get("right")); r != nil && r.Is("integer", "float", "string", "true", "false", "none") {
							lit, from = r, f
						}
					}
				}
			}
		case "import_from_statement":
			mod, level := FromModule(st, src)
			for _, c := range st.All("name") {
				local, orig := fromName(c, src)
				if local == name {
					n++
					if m := p.ImportFrom(f, mod, level); m != nil && m.File != nil {
						from, lit = p.literalOf(m.File, orig, depth+1)
					}
				}
			}
		case "function_definition", "class_definition", "import_statement":
			// Rebinds the name in other ways (counted only when it is ours).
			if st.Kind() != "import_statement" && st.Get("name") != nil && st.Get("name").Text(src) == name {
				n++
			}
		}
		return true
	}
	for _, st := range topBinders(f, name, false) {
		stmtSteps.Add(1)
		visit(st)
	}
	if n != 1 {
		return nil, nil
	}
	return from, lit
}

// fromName is the name a `from m import ...` item binds in the importing
// module (local) and the member of m it names (orig): both the item's
// name, or `orig as local`.
func fromName(c *Node, src []byte) (local, orig string) {
	if c.Kind() == "aliased_import" {
		return c.Get("alias").Text(src), c.Get("name").Text(src)
	}
	return c.Text(src), c.Text(src)
}
