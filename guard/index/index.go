// Package index is the first layer of capguard's analysis: every file of
// the project with its definitions (functions, lambdas, classes), their
// scopes (parameters, locals, globals, nonlocals), imports, and the module
// tree that relative, absolute and PEP 420 namespace imports resolve in.
// It does no flow analysis: guard/flow builds the points-to graph and the
// call graph on top of it.
package index

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// Node is a syntax node.
type Node = syntax.Node

// File is one parsed Python file.
type File struct {
	// binders are the module-level statements that may bind each name
	// (topBinders), made once.
	binders     map[string][]*Node
	bindersOnce sync.Once
	Path        string // as the user named it (or as found under a named folder)
	Abs         string // absolute, cleaned
	// Name is the dotted module name relative to the working directory
	// ("pkg.sub.mod"; a package's __init__.py is the package's name). It is
	// the prefix of every function's name in `capguard graph`.
	Name string
	// Module is the file's place in the module tree (for an __init__.py,
	// its package folder).
	Module *Module
	Src    []byte
	Tree   *syntax.Tree

	Funcs   []*Function // defs and lambdas in source order
	ByQual  map[string]*Function
	Classes map[string]*Class // by qualified name
	// ClassList holds the classes in source order.
	ClassList []*Class
	// Top is the pseudo function of the module-level code.
	Top *Function
	// Kernels are the names of functions decorated with triton.jit,
	// triton.autotune or triton.heuristics (top-level and nested).
	Kernels map[string]bool
	// Imports maps a local name bound by an import anywhere in the file to
	// the dotted name it denotes: "tc" -> "torch.cuda", "f" -> "pkg.mod.f"
	// (relative imports made absolute against the file's module tree).
	Imports map[string]string
	// All is the file's literal __all__, nil when it has none.
	All []string
	// Star is set when the file has a `from m import *`: names it does not
	// bind may come from there.
	Star bool
	// TopNames are the names bound at module level (defs, classes,
	// assignments, imports), for star imports.
	TopNames []string

	lines []int
	// byDef finds a function by its def (or lambda) node: FuncAt is asked
	// once per def, so a scan of Funcs made a file's analysis quadratic in
	// its number of functions.
	byDef map[*Node]*Function
}

// Function is a def, a lambda, or the pseudo function of a module's
// top-level code (Kind TopLevel).
type Function struct {
	File *File
	// Qual is the qualified name: "Class.method", "outer.inner",
	// "f.<lambda1>"; "" for module-level code.
	Qual  string
	Name  string
	Kind  FuncKind
	Class *Class    // the class whose body defines it (methods), else nil
	Outer *Function // the enclosing function (nested defs, lambdas, methods of a class inside a function); the module's Top for top-level code
	Def   *Node     // function_definition, lambda, or the module node
	// Body is the block of a def, the body expression of a lambda, the
	// module node for top-level code.
	Body       *Node
	Params     []Param
	Decorators []*Node
	Docstring  *Node
	Returns    *Node // the return annotation, nil when none
	// Locals are the names the function binds (parameters included),
	// without those declared global or nonlocal.
	Locals    map[string]bool
	Globals   map[string]bool
	Nonlocals map[string]bool
	Generator bool // a yield in its own body
	Async     bool
	// Static, ClassMethod and Property come from the decorators.
	Static, ClassMethod, Property bool
	// Kernel: decorated with triton.jit / autotune / heuristics.
	Kernel bool
	// Device: one of its kernel decorators makes its body device code
	// (torchapi.DeviceCodeDecorator: Triton's jit, `cute.kernel`,
	// `T.prim_func`...), not a DSL's host-side launch code.
	Device bool
	// Lambdas counts the lambdas directly in this scope, for naming.
	lambdas int
	// full is FullName, made once by NewFile ("" where a Function was
	// made elsewhere: FullName builds it then). The contexts and rules
	// ask for it in sorts and chains: built at every call, it was 79 of
	// the 835 MB the contexts allocated on flashinfer (a holdout).
	full string
}

// FuncKind tells a def from a lambda and from module-level code.
type FuncKind uint8

const (
	Def FuncKind = iota
	Lambda
	TopLevel
)

// Param is a formal parameter.
type Param struct {
	Name       string
	Node       *Node
	Default    *Node
	Annotation *Node
	Kind       ParamKind
}

// ParamKind is how a parameter takes arguments.
type ParamKind uint8

const (
	Positional ParamKind = iota // positional or keyword
	PosOnly
	VarArgs // *args
	KwOnly
	VarKw // **kwargs
)

// Class is a class definition.
type Class struct {
	File  *File
	Name  string
	Qual  string
	Node  *Node // class_definition
	Bases []*Node
	// Keywords are `metaclass=...` and the like.
	Keywords   []*Node
	Decorators []*Node
	Methods    map[string]*Function
	// Defines holds every name the class body binds (methods, class
	// attributes, nested classes): attribute lookup along the MRO stops at
	// the first class that defines the name.
	Defines map[string]bool
	// AttrTypes are the annotations of class-level `x: T` declarations and
	// of `self.x: T = ...` in methods.
	AttrTypes map[string][]*Node
	// Outer is the function whose body holds the class (the module's Top
	// for a top-level class).
	Outer *Function
	// Enclosing is the class whose body holds this class, nil if none.
	Enclosing *Class
}

// Label is the function as a path and qualified name, for messages.
func (f *Function) Label() string {
	if f.Kind == TopLevel {
		return f.File.Path
	}
	return f.File.Path + ":" + f.Qual
}

// FullName is the function in `capguard graph` naming: the file's dotted
// module name plus the qualified name; the module's name for top-level
// code.
func (f *Function) FullName() string {
	if f.full != "" {
		return f.full
	}
	return f.fullName()
}

func (f *Function) fullName() string {
	if f.Kind == TopLevel {
		return f.File.Name
	}
	if f.File.Name == "" {
		return f.Qual
	}
	return f.File.Name + "." + f.Qual
}

// Line is the 1-based line of the def (of the first decorator's def line:
// the `def` keyword), 1 for top-level code.
func (f *Function) Line() int {
	if f.Kind == TopLevel {
		return 1
	}
	return f.File.Line(f.Def)
}

// Self is the name of the receiver parameter of a method (or of the
// enclosing method, for a closure that does not rebind it), or "".
func (f *Function) Self() string {
	if f.Class == nil {
		if f.Outer != nil && f.Outer.Kind != TopLevel && !f.Locals[f.Outer.Self()] {
			return f.Outer.Self()
		}
		return ""
	}
	if f.Static || len(f.Params) == 0 || f.Params[0].Kind == VarArgs || f.Params[0].Kind == VarKw {
		return ""
	}
	return f.Params[0].Name
}

// Owner is the class whose self the function sees: its own class, or for a
// closure, the class of the enclosing method.
func (f *Function) Owner() *Class {
	for g := f; g != nil; g = g.Outer {
		if g.Class != nil {
			return g.Class
		}
		if g.Kind == TopLevel {
			return nil
		}
	}
	return nil
}

// HasParam reports whether the function has a parameter called name.
func (f *Function) HasParam(name string) bool {
	for _, p := range f.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// BodyStmts are the statements of a def's body (nil for a lambda), or of
// the module for top-level code.
func (f *Function) BodyStmts() []*Node {
	if f.Body == nil || f.Kind == Lambda {
		return nil
	}
	return f.Body.NamedChildren()
}

// Pos converts a byte offset to a 1-based line and byte column.
func (f *File) Pos(off int) (line, col int) {
	lo, hi := 0, len(f.lines)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if f.lines[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1, off - f.lines[lo] + 1
}

// Line is the 1-based line where node n of the file starts.
func (f *File) Line(n *syntax.Node) int {
	l, _ := f.Pos(int(n.Start))
	return l
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

// NewFile indexes one parsed file. The module tree place (Module) and the
// imports' absolute names are filled in by Project.
func NewFile(path, abs, name string, src []byte, tree *syntax.Tree) *File {
	f := &File{Path: path, Abs: abs, Name: name, Src: src, Tree: tree,
		ByQual: map[string]*Function{}, Classes: map[string]*Class{}, Kernels: map[string]bool{},
		Imports: map[string]string{}}
	f.lines = []int{0}
	for i, b := range src {
		if b == '\n' {
			f.lines = append(f.lines, i+1)
		}
	}
	root := (*Node)(nil)
	if tree != nil {
		root = tree.Root
	}
	f.Top = &Function{File: f, Kind: TopLevel, Def: root, Body: root, Name: "<module>",
		Locals: map[string]bool{}, Globals: map[string]bool{}, Nonlocals: map[string]bool{}}
	if root != nil {
		c := &collector{f: f}
		c.block(root.Children(), f.Top, nil, "")
		scope(f.Top, root)
		f.TopNames = sortedKeys(f.Top.Locals)
		for _, fn := range f.Funcs {
			scopeOf(fn)
			fn.full = fn.fullName()
		}
		sort.SliceStable(f.Funcs, func(i, j int) bool { return f.Funcs[i].Def.Start < f.Funcs[j].Def.Start })
	}
	return f
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// collector walks a file once for definitions.
type collector struct {
	f *File
}

// block collects the definitions in a list of statements that run in
// function fn (a def's body, a module), inside class cls when the
// statements are a class body.
func (c *collector) block(stmts []*Node, fn *Function, cls *Class, prefix string) {
	for _, st := range stmts {
		c.stmt(st, fn, cls, prefix, nil)
	}
}

func (c *collector) stmt(st *Node, fn *Function, cls *Class, prefix string, decorators []*Node) {
	src := c.f.Src
	switch st.Kind() {
	case "decorated_definition":
		var decs []*Node
		for _, ch := range st.Children() {
			if ch.Kind() == "decorator" {
				decs = append(decs, ch)
			}
		}
		// The decorators run in the enclosing scope: lambdas in them too.
		for _, d := range decs {
			c.expr(d, fn, prefix)
		}
		if def := st.Get("definition"); def != nil {
			c.stmt(def, fn, cls, prefix, decs)
		}
		return
	case "function_definition":
		name := st.Get("name").Text(src)
		g := &Function{File: c.f, Name: name, Qual: prefix + name, Kind: Def, Class: cls, Outer: fn,
			Def: st, Body: st.Get("body"), Decorators: decorators, Returns: st.Get("return_type")}
		for _, ch := range st.Children() {
			if ch.Kind() == "async" {
				g.Async = true
			}
		}
		g.Params = params(st.Get("parameters"), src)
		g.Docstring = docstring(g.Body)
		for _, d := range decorators {
			switch decoratorName(d, src) {
			case "staticmethod":
				g.Static = true
			case "classmethod":
				g.ClassMethod = true
			case "property", "cached_property", "functools.cached_property":
				g.Property = true
			}
			if isKernelDecorator(d, src) {
				g.Kernel = true
				if torchapi.DeviceCodeDecorator(strings.Join(strings.Fields(decoratorName(d, src)), "")) {
					g.Device = true
				}
			}
		}
		if g.Kernel {
			c.f.Kernels[name] = true
		}
		c.add(g)
		if cls != nil {
			cls.Methods[name] = g
		}
		// Defaults and annotations are evaluated in the enclosing scope.
		for _, p := range g.Params {
			c.expr(p.Default, fn, prefix)
		}
		if g.Body != nil {
			c.block(g.Body.Children(), g, nil, g.Qual+".")
		}
		return
	case "class_definition":
		name := st.Get("name").Text(src)
		k := &Class{File: c.f, Name: name, Qual: prefix + name, Node: st, Decorators: decorators,
			Methods: map[string]*Function{}, Defines: map[string]bool{}, AttrTypes: map[string][]*Node{},
			Outer: fn, Enclosing: cls}
		if sc := st.Get("superclasses"); sc != nil {
			for _, b := range sc.NamedChildren() {
				switch b.Kind() {
				case "keyword_argument":
					k.Keywords = append(k.Keywords, b)
				case "list_splat", "dictionary_splat":
				default:
					k.Bases = append(k.Bases, b)
				}
				c.expr(b, fn, prefix)
			}
		}
		c.f.Classes[k.Qual] = k
		c.f.ClassList = append(c.f.ClassList, k)
		if body := st.Get("body"); body != nil {
			// A class body runs in the enclosing function; its defs are
			// methods named under the class.
			c.block(body.Children(), fn, k, k.Qual+".")
			classDefines(k, body)
		}
		return
	}
	// Any other statement: lambdas in it, and nested blocks (if, for,
	// try, with, match) whose defs belong to the same scope.
	for _, ch := range st.Children() {
		switch {
		case ch.Kind() == "block":
			c.block(ch.Children(), fn, cls, prefix)
		case strings.HasSuffix(ch.Kind(), "_clause") || ch.Kind() == "case_clause":
			for _, cc := range ch.Children() {
				if cc.Kind() == "block" {
					c.block(cc.Children(), fn, cls, prefix)
				} else {
					c.expr(cc, fn, prefix)
				}
			}
		case ch.Kind() == "match_statement" || ch.Kind() == "case_block":
			c.stmt(ch, fn, cls, prefix, nil)
		default:
			c.expr(ch, fn, prefix)
		}
	}
}

// maxQual bounds the length of a nested lambda's qualified name.
const maxQual = 256

// expr finds lambdas in an expression (not entering nested lambdas' bodies
// twice: a lambda's own body is collected under it).
func (c *collector) expr(n *Node, fn *Function, prefix string) {
	if n == nil {
		return
	}
	stack := []*Node{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Kind() == "lambda" {
			fn.lambdas++
			name := "<lambda" + strconv.Itoa(fn.lambdas) + ">"
			qual := name
			if fn.Kind != TopLevel {
				qual = fn.Qual + "." + name
				if len(fn.Qual) > maxQual {
					// Lambdas nested in lambdas: a name per level would
					// make their names quadratic in the nesting; past
					// maxQual the offset keeps each name unique.
					qual = fn.Qual[:maxQual] + "...<lambda@" + strconv.Itoa(int(x.Start)) + ">"
				}
			}
			g := &Function{File: c.f, Name: name, Qual: qual, Kind: Lambda, Outer: fn, Def: x, Body: x.Get("body")}
			g.Params = params(x.Get("parameters"), c.f.Src)
			c.add(g)
			for _, p := range g.Params {
				c.expr(p.Default, fn, prefix)
			}
			c.expr(g.Body, g, qual+".")
			continue
		}
		if x.Is("function_definition", "class_definition", "decorated_definition") {
			continue
		}
		kids := x.Children()
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
}

func (c *collector) add(g *Function) {
	c.f.Funcs = append(c.f.Funcs, g)
	if c.f.byDef == nil {
		c.f.byDef = map[*Node]*Function{}
	}
	if _, dup := c.f.byDef[g.Def]; !dup {
		c.f.byDef[g.Def] = g
	}
	if _, dup := c.f.ByQual[g.Qual]; !dup {
		c.f.ByQual[g.Qual] = g
	}
}

// classDefines records the names a class body binds and its annotated
// attributes.
func classDefines(k *Class, body *Node) {
	src := k.File.Src
	for _, st := range body.NamedChildren() {
		switch st.Kind() {
		case "function_definition", "class_definition":
			k.Defines[st.Get("name").Text(src)] = true
		case "decorated_definition":
			if d := st.Get("definition"); d != nil {
				k.Defines[d.Get("name").Text(src)] = true
			}
		case "expression_statement":
			for _, a := range st.NamedChildren() {
				if a.Kind() != "assignment" && a.Kind() != "augmented_assignment" {
					continue
				}
				for _, name := range targetNames(a.Get("left"), src) {
					k.Defines[name] = true
				}
				if t := a.Get("type"); t != nil {
					if l := a.Get("left"); l != nil && l.Kind() == "identifier" {
						k.AttrTypes[l.Text(src)] = append(k.AttrTypes[l.Text(src)], t)
					}
				}
			}
		}
	}
}

// params lists a parameters node's formal parameters.
func params(ps *Node, src []byte) []Param {
	if ps == nil {
		return nil
	}
	var out []Param
	kwonly := false
	for _, p := range ps.NamedChildren() {
		var q Param
		switch p.Kind() {
		case "identifier":
			q = Param{Name: p.Text(src), Node: p}
		case "typed_parameter":
			q.Annotation = p.Get("type")
			for _, c := range p.NamedChildren() {
				switch c.Kind() {
				case "identifier":
					if q.Name == "" {
						q = Param{Name: c.Text(src), Node: c, Annotation: q.Annotation}
					}
				case "list_splat_pattern":
					q = Param{Name: firstIdent(c, src), Node: c, Kind: VarArgs, Annotation: q.Annotation}
				case "dictionary_splat_pattern":
					q = Param{Name: firstIdent(c, src), Node: c, Kind: VarKw, Annotation: q.Annotation}
				}
			}
		case "default_parameter", "typed_default_parameter":
			n := p.Get("name")
			q = Param{Name: n.Text(src), Node: n, Default: p.Get("value"), Annotation: p.Get("type")}
		case "list_splat_pattern":
			q = Param{Name: firstIdent(p, src), Node: p, Kind: VarArgs}
		case "dictionary_splat_pattern":
			q = Param{Name: firstIdent(p, src), Node: p, Kind: VarKw}
		case "keyword_separator":
			kwonly = true
			continue
		case "positional_separator":
			for i := range out {
				out[i].Kind = PosOnly
			}
			continue
		default:
			continue
		}
		if q.Name == "" {
			continue
		}
		if q.Kind == VarArgs {
			kwonly = true
		} else if kwonly && q.Kind == Positional {
			q.Kind = KwOnly
		}
		out = append(out, q)
	}
	return out
}

func firstIdent(n *Node, src []byte) string {
	for _, c := range n.NamedChildren() {
		if c.Kind() == "identifier" {
			return c.Text(src)
		}
	}
	return ""
}

func docstring(body *Node) *Node {
	if body == nil {
		return nil
	}
	for _, s := range body.NamedChildren() {
		if s.Kind() == "expression_statement" {
			kids := s.NamedChildren()
			if len(kids) == 1 && kids[0].Kind() == "string" {
				return kids[0]
			}
		}
		return nil
	}
	return nil
}

// DecoratorTarget is what a decorator names, its call's arguments left
// out: `@functools.lru_cache(maxsize=8)` -> the `functools.lru_cache`
// expression; nil for an empty one.
func DecoratorTarget(d *Node) *Node {
	var e *Node
	for _, c := range d.NamedChildren() {
		if c.Kind() != "comment" {
			e = c
			break
		}
	}
	e = syntax.Unparen(e)
	if e != nil && e.Kind() == "call" {
		e = syntax.Unparen(e.Get("function"))
	}
	return e
}

// decoratorName is a decorator's dotted name without call arguments:
// `@functools.lru_cache(maxsize=8)` -> "functools.lru_cache".
func decoratorName(d *Node, src []byte) string {
	e := DecoratorTarget(d)
	if e == nil || !e.Is("identifier", "attribute") {
		return ""
	}
	return e.Text(src)
}

// isKernelDecorator: triton.jit, triton.autotune, triton.heuristics (as
// `@triton.jit`, `@tl.jit`, or imported `@jit`, `@autotune`).
func isKernelDecorator(d *Node, src []byte) bool {
	return torchapi.KernelDecorator(strings.Join(strings.Fields(decoratorName(d, src)), ""))
}
