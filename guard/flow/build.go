package flow

import (
	"github.com/cudagraph-capguard/capguard/guard/device"
	"strconv"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

type Node = syntax.Node

// scope is where code runs: a function, and the class whose body it is in
// (class-body names are the class's attributes).
type scope struct {
	fn  *index.Function
	cls *index.Class
	ssa *ssaState // straight-line versions of the scope's names (ssa.go)
}

// decl is a declared type to seed a node with when flow leaves it empty.
type decl struct {
	n    NID
	ann  *Node
	file *index.File
	self *index.Class // a method's self: its own class
	cm   bool         // classmethod's cls
	fn   *index.Function
}

// decoratedName is a decorated def or class whose name, when the
// decorators' results stay empty, falls back to the definition itself.
type decoratedName struct {
	n   NID
	v   VID
	def *Node
}

// methodSite is a call `recv.name(...)`, for the name fallback.
// storeSite is a store through an attribute of a receiver: `x.attr[k] = v`
// or `x.attr.append(v)` (recv is x's node), for the store fallback.
type storeSite struct {
	site  *Node
	owner *index.Function
	recv  NID
	name  string
}

type methodSite struct {
	call     *Node
	owner    *index.Function
	recv     NID
	callee   NID
	name     string
	tensorOK bool
}

// build adds the constraints of every function of files, file by file in
// their order (all of their prepasses first).
func (s *solver) build(files []*index.File) {
	for _, f := range files {
		if f.Tree == nil || f.Tree.Root == nil {
			continue
		}
		for _, fn := range f.Funcs {
			if fn.Device {
				continue // device code (below)
			}
			s.prepass(fn)
			s.prepassSetters(fn)
		}
	}
	for _, f := range files {
		if f.Tree == nil || f.Tree.Root == nil {
			continue
		}
		if s.canceled != nil && (s.stopped || s.canceled()) {
			s.stopped = true
			return
		}
		mv := s.mod(f.Module)
		_ = mv
		top := f.Tree.Root.NamedChildren()
		st := newSSA(f.Top, top)
		s.hideEarlier(st, f, top)
		s.block(scope{fn: f.Top, ssa: st}, top)
		for _, fn := range f.Funcs {
			if fn.Device {
				// A kernel's body (Triton's jit, cute.kernel, T.prim_func:
				// index.Function.Device) is device code the compiler
				// reads, not Python run on the host: nothing it binds
				// reaches host values, and the contexts never enter it
				// (its name's value, VKernel, is made where it is
				// defined). A Triton kernel library's bodies are a fifth
				// of its nodes. A DSL's host-side launch code (cute.jit,
				// tilelang.jit) is built: it launches kernels and builds
				// what its caller gets.
				continue
			}
			s.function(fn)
		}
	}
}

// function adds the constraints of one def or lambda's body, its
// parameters' defaults and declared types.
func (s *solver) function(fn *index.Function) {
	ps := s.paramNodes(fn)
	outer := scope{fn: fn.Outer}
	if fn.Outer == nil {
		outer = scope{fn: fn.File.Top}
	}
	for i, p := range fn.Params {
		switch p.Kind {
		case index.VarArgs:
			s.add(ps[i], s.cont(p.Node, tagPlain), sResolved)
		case index.VarKw:
			// Key-sensitive: keywords keep their names (kwspread.go).
			s.add(ps[i], s.keyedDict(p.Node), sResolved)
		}
		if p.Default != nil {
			s.copyTo(s.eval(outer, p.Default), ps[i], sResolved)
		}
		if p.Annotation != nil {
			s.decls = append(s.decls, decl{n: ps[i], ann: p.Annotation, file: fn.File})
		}
	}
	if fn.Class != nil && len(ps) > 0 && !fn.Static && fn.Params[0].Kind != index.VarArgs {
		s.decls = append(s.decls, decl{n: ps[0], self: fn.Class, cm: fn.ClassMethod, file: fn.File, fn: fn})
	}
	if fn.Returns != nil {
		s.decls = append(s.decls, decl{n: s.ret(fn), ann: fn.Returns, file: fn.File})
	}
	sc := scope{fn: fn}
	if fn.Kind == index.Lambda {
		s.returnValue(sc, fn.Body, s.eval(sc, fn.Body), s.ret(fn))
		return
	}
	if fn.Body != nil {
		body := fn.Body.NamedChildren()
		sc.ssa = newSSA(fn, body)
		s.block(sc, body)
	}
}

// varNode is the node a name denotes in a scope, by Python's rules: a
// class-body name, a local, an enclosing function's local (closures), a
// module global, or a builtin.
func (s *solver) varNode(sc scope, name string) NID {
	if sc.cls != nil && sc.cls.Defines[name] {
		return s.field(s.class(sc.cls), name)
	}
	fn := sc.fn
	if fn.Globals[name] {
		return s.global(fn.File, name)
	}
	if fn.Kind != index.TopLevel && fn.Locals[name] {
		return s.local(fn, name)
	}
	for o := fn.Outer; o != nil; o = o.Outer {
		if o.Kind == index.TopLevel {
			break
		}
		if o.Locals[name] {
			return s.local(o, name)
		}
	}
	if fn.File.Top.Locals[name] {
		return s.global(fn.File, name)
	}
	if fn.File.Star {
		// Maybe from a star import; maybe a builtin.
		g := s.global(fn.File, name)
		s.copyTo(s.builtin(name), g, sResolved)
		return g
	}
	return s.builtin(name)
}

// bindNode is the node an assignment to name in a scope writes.
func (s *solver) bindNode(sc scope, name string) NID {
	if sc.cls != nil {
		return s.field(s.class(sc.cls), name)
	}
	fn := sc.fn
	if fn.Kind == index.TopLevel || fn.Globals[name] {
		return s.global(fn.File, name)
	}
	if fn.Nonlocals[name] {
		for o := fn.Outer; o != nil && o.Kind != index.TopLevel; o = o.Outer {
			if o.Locals[name] {
				return s.local(o, name)
			}
		}
	}
	return s.local(fn, name)
}

func (s *solver) global(f *index.File, name string) NID {
	return s.field(s.mod(f.Module), name)
}

// builtin is the node of a builtin name: it holds the name as an
// external value.
func (s *solver) builtin(name string) NID {
	if n, ok := s.builtinNodes[name]; ok {
		return n
	}
	n := s.newNode()
	s.builtinNodes[name] = n
	s.add(n, s.ext(name), sResolved)
	return n
}

func (s *solver) block(sc scope, stmts []*Node) {
	for _, st := range stmts {
		if sc.ssa != nil && sc.ssa.top[st] {
			s.forgetTouched(sc, st)
			sc.ssa.stmt = st
		}
		s.stmt(sc, st)
	}
}

func (s *solver) stmt(sc scope, st *Node) {
	switch st.Kind() {
	case "expression_statement":
		for _, e := range st.NamedChildren() {
			s.exprStmt(sc, e)
		}
	case "return_statement":
		if sc.fn != nil && device.Dead(st, sc.fn.Body, sc.fn.File.Src, s.device) {
			return // a branch for another device type (guard/device)
		}
		for _, e := range st.NamedChildren() {
			v := s.evalValue(sc, e)
			if g, ok := returnGuard(sc.fn, st); ok && sc.cls == nil {
				n := s.newNode()
				s.returnValue(sc, e, v, n)
				s.guarded[sc.fn] = append(s.guarded[sc.fn], guardedRet{n: n, retGuard: g})
				continue
			}
			s.returnValue(sc, e, v, s.ret(sc.fn))
		}
	case "decorated_definition", "function_definition":
		s.def(sc, st)
	case "class_definition":
		s.classDef(sc, st, nil)
	case "import_statement", "import_from_statement", "future_import_statement":
		s.importStmt(sc, st)
	case "for_statement":
		it := s.iterNode(sc, st, s.eval(sc, st.Get("right")))
		s.assign(sc, st.Get("left"), it)
		s.blocks(sc, st)
	case "with_statement":
		for _, item := range withItems(st) {
			v := syntax.Unparen(item.Get("value"))
			if v != nil && v.Kind() == "as_pattern" {
				ctx := s.eval(sc, v.NamedChildren()[0])
				t := s.newNode()
				s.watch(ctx, s.newCons(constraint{kind: cEnter, owner: sc.fn, site: v, dst: t}))
				if a := v.Get("alias"); a != nil {
					s.assign(sc, a, t)
				}
			} else {
				ctx := s.eval(sc, v)
				s.watch(ctx, s.newCons(constraint{kind: cEnter, owner: sc.fn, site: v, dst: s.newNode()}))
			}
		}
		s.blocks(sc, st)
	case "try_statement":
		for _, c := range st.Children() {
			if c.Kind() == "except_clause" || c.Kind() == "except_group_clause" {
				var typ *Node
				var alias *Node
				for _, x := range c.NamedChildren() {
					if x.Kind() == "block" {
						continue
					}
					if x.Kind() == "as_pattern" {
						typ = x.NamedChildren()[0]
						alias = x.Get("alias")
					} else if typ == nil {
						typ = x
					} else if x.Kind() == "identifier" {
						alias = x
					}
				}
				if typ != nil {
					t := s.eval(sc, typ)
					if alias != nil {
						// The caught object: an instance of the class.
						inst := s.newNode()
						s.watch(t, s.newCons(constraint{kind: cInstOf, owner: sc.fn, site: c, dst: inst}))
						s.assign(sc, alias, inst)
					}
				}
			}
		}
		s.blocks(sc, st)
	case "if_statement", "while_statement":
		s.eval(sc, st.Get("condition"))
		for _, c := range st.Children() {
			if c.Kind() == "elif_clause" {
				s.eval(sc, c.Get("condition"))
			}
		}
		s.blocks(sc, st)
	case "match_statement":
		s.eval(sc, st.Get("subject"))
		s.blocks(sc, st)
	case "raise_statement":
		for _, e := range st.NamedChildren() {
			v := s.eval(sc, e)
			if e.Kind() != "call" && v >= 0 {
				// raise E: Python instantiates the class.
				s.watch(v, s.newCons(constraint{kind: cCall, owner: sc.fn, site: e, dst: s.newNode(), args: &callArgs{}, recvNode: noNode, raise: true}))
			}
		}
	case "assert_statement", "delete_statement", "print_statement", "exec_statement":
		for _, e := range st.NamedChildren() {
			s.eval(sc, e)
		}
	case "global_statement", "nonlocal_statement", "pass_statement", "break_statement", "continue_statement", "comment":
	default:
		for _, c := range st.NamedChildren() {
			if c.Kind() == "block" {
				s.block(sc, c.NamedChildren())
			}
		}
	}
}

// blocks walks the blocks of a compound statement and of its clauses.
func (s *solver) blocks(sc scope, st *Node) {
	for _, c := range st.Children() {
		switch {
		case c.Kind() == "block":
			s.block(sc, c.NamedChildren())
		case strings.HasSuffix(c.Kind(), "_clause") || c.Kind() == "case_block":
			for _, cc := range c.Children() {
				if cc.Kind() == "block" {
					s.block(sc, cc.NamedChildren())
				} else if strings.HasSuffix(cc.Kind(), "_clause") {
					s.blocks(sc, cc)
				}
			}
		}
	}
}

func withItems(st *Node) []*Node {
	var out []*Node
	for _, c := range st.Children() {
		if c.Kind() == "with_clause" {
			for _, it := range c.NamedChildren() {
				if it.Kind() == "with_item" {
					out = append(out, it)
				}
			}
		}
	}
	return out
}

func (s *solver) exprStmt(sc scope, e *Node) {
	switch e.Kind() {
	case "assignment":
		s.assignment(sc, e)
	case "augmented_assignment":
		v := s.eval(sc, e.Get("right"))
		l := e.Get("left")
		if l != nil && l.Kind() == "identifier" {
			// x += [f]: the elements join.
			s.copyTo(v, s.bindNode(sc, l.Text(sc.fn.File.Src)), sResolved)
			s.eval(sc, l)
		} else {
			s.assign(sc, l, v)
		}
	default:
		s.eval(sc, e)
	}
}

// assignment handles `a = b = value` (tree-sitter nests the chain on the
// right) and `x: T = v`.
func (s *solver) assignment(sc scope, a *Node) NID {
	right := a.Get("right")
	var v NID = noNode
	if right != nil && right.Kind() == "assignment" {
		v = s.assignment(sc, right)
	} else if right != nil {
		left := syntax.Unparen(a.Get("left"))
		r := syntax.Unparen(right)
		if left != nil && isPattern(left) && r.Is("tuple", "list", "expression_list") && sameArity(left, r) {
			// a, b = x, y: pairwise.
			ls, rs := patternElems(left), r.NamedChildren()
			for i := range ls {
				s.assign(sc, ls[i], s.eval(sc, rs[i]))
			}
			s.eval(sc, r) // the tuple itself, for queries
			id, _ := s.expr(r)
			return id
		}
		v = s.evalValue(sc, right)
	}
	left := a.Get("left")
	s.assign(sc, left, v)
	if t := a.Get("type"); t != nil && left != nil {
		l := syntax.Unparen(left)
		switch l.Kind() {
		case "identifier":
			s.decls = append(s.decls, decl{n: s.bindNode(sc, l.Text(sc.fn.File.Src)), ann: t, file: sc.fn.File})
		case "attribute":
			if obj := l.Get("object"); obj != nil && obj.Kind() == "identifier" && obj.Text(sc.fn.File.Src) == sc.fn.Self() && sc.fn.Owner() != nil {
				s.fieldDecls = append(s.fieldDecls, fieldDecl{cls: sc.fn.Owner(), attr: l.Get("attribute").Text(sc.fn.File.Src), ann: t, file: sc.fn.File})
			}
		}
	}
	return v
}

func isPattern(n *Node) bool {
	return n.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list")
}

func patternElems(n *Node) []*Node { return n.NamedChildren() }

func sameArity(l, r *Node) bool {
	ls, rs := l.NamedChildren(), r.NamedChildren()
	if len(ls) != len(rs) {
		return false
	}
	for _, x := range append(ls, rs...) {
		if x.Is("list_splat_pattern", "list_splat") {
			return false
		}
	}
	return true
}

// assign binds target to what node v holds.
func (s *solver) assign(sc scope, target *Node, v NID) {
	t := syntax.Unparen(target)
	if t == nil {
		return
	}
	src := sc.fn.File.Src
	switch t.Kind() {
	case "identifier":
		n, commit := s.bindTo(sc, t.Text(src))
		s.copyTo(v, n, sResolved)
		commit()
		s.setExpr(t, n)
	case "attribute":
		base := s.eval(sc, t.Get("object"))
		attr := t.Get("attribute").Text(src)
		if s.fieldSite(t) {
			return // stored at each call (setters.go)
		}
		s.watch(base, s.newCons(constraint{kind: cStore, owner: sc.fn, site: t, attr: attr, src: v}))
	case "subscript":
		path := s.keyPath(sc, t)
		base := s.eval(sc, t.Get("value"))
		s.noteStore(t, sc.fn, t.Get("value"))
		key := ""
		subs := t.All("subscript")
		for _, sub := range subs {
			s.eval(sc, sub)
		}
		if len(subs) == 1 {
			key = s.constIndex(sc, subs[0])
		}
		s.watch(base, s.newCons(constraint{kind: cElemStore, owner: sc.fn, site: t, src: v, attr: key}))
		if path != "" && sc.ssa.stmt != nil && isTopAssign(sc.ssa.stmt, t) {
			n := s.newNode()
			s.copyTo(v, n, sResolved)
			for p := range sc.ssa.paths {
				if len(p) > len(path) && p[:len(path)+1] == path+"|" {
					delete(sc.ssa.paths, p)
				}
			}
			sc.ssa.paths[path] = n
		}
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list":
		// Each target before a starred one reads its own position of a
		// key-sensitive container (`model, cfg = load()` with load
		// returning a tuple literal): the first target gets element 0,
		// not every element. A starred target and those after it read
		// every element (their positions count from the end).
		splat := false
		for i, e := range t.NamedChildren() {
			if e.Is("list_splat_pattern", "list_splat") {
				splat = true
				// *rest: a list of the same elements.
				rest := s.cont(e, tagPlain)
				s.elemsIntoCapped(&constraint{owner: sc.fn, site: e}, v, s.values[rest].Elems, sResolved)
				n := s.newNode()
				s.add(n, rest, sResolved)
				for _, x := range e.NamedChildren() {
					s.assign(sc, x, n)
				}
				continue
			}
			el := s.newNode()
			key := ""
			if !splat {
				key = strconv.Itoa(i)
			}
			s.watch(v, s.newCons(constraint{kind: cElemLoad, owner: sc.fn, site: e, dst: el, attr: key}))
			s.assign(sc, e, el)
		}
	case "list_splat_pattern", "as_pattern_target":
		for _, x := range t.NamedChildren() {
			s.assign(sc, x, v)
		}
	}
}

// iterNode is the node of what iterating over the values of n gives.
func (s *solver) iterNode(sc scope, site *Node, n NID) NID {
	out := s.newNode()
	s.watch(n, s.newCons(constraint{kind: cIter, owner: sc.fn, site: site, dst: out}))
	return out
}

// def binds a (decorated) def's name.
func (s *solver) def(sc scope, st *Node) {
	def := st
	var decs []*Node
	if st.Kind() == "decorated_definition" {
		def = st.Get("definition")
		for _, c := range st.Children() {
			if c.Kind() == "decorator" {
				decs = append(decs, c)
			}
		}
		if def != nil && def.Kind() == "class_definition" {
			s.classDef(sc, def, decs)
			return
		}
	}
	if def == nil {
		return
	}
	fn := sc.fn.File.FuncAt(def)
	if fn == nil {
		return
	}
	s.importTimeDefaults(sc, fn)
	name := def.Get("name").Text(sc.fn.File.Src)
	v := s.fnValue(fn)
	cur := s.newNode()
	s.add(cur, v, sResolved)
	cur = s.decorate(sc, decs, cur, fn.Kernel)
	target, commit := s.bindTo(sc, name)
	s.copyTo(cur, target, sResolved)
	commit()
	if len(decs) > 0 && !fn.Kernel {
		s.decorated = append(s.decorated, decoratedName{n: target, v: v, def: def})
	}
}

// importTimeDefaults evaluates the default values of a def or lambda in
// module-level code where they run, at its definition: they see the
// versions of the module's names in effect there (lastbind.go), not only
// the last binding that function bodies see. function() finds them
// evaluated.
func (s *solver) importTimeDefaults(sc scope, fn *index.Function) {
	if sc.ssa == nil || sc.fn.Kind != index.TopLevel {
		return
	}
	for _, p := range fn.Params {
		if p.Default != nil {
			s.eval(scope{fn: sc.fn, ssa: sc.ssa}, p.Default)
		}
	}
}

// decorate applies decorators (innermost first) to what node cur holds.
// Decorators of a Triton kernel, and decorators known to keep the
// function, are evaluated for their own calls but not applied.
func (s *solver) decorate(sc scope, decs []*Node, cur NID, kernel bool) NID {
	f := sc.fn.File
	for i := len(decs) - 1; i >= 0; i-- {
		e := decoratorExpr(decs[i])
		if e == nil {
			continue
		}
		d := s.eval(sc, e)
		if kernel || s.keeps(f, e) {
			continue
		}
		t := s.newNode()
		// The innermost decorator is given the definition itself: never
		// None or a literal (a return under `if fn is None:` is not its).
		k := ""
		if i == len(decs)-1 {
			k = decoratedConst
		}
		args := &callArgs{}
		args.addPos(cur, false, "", false, k)
		s.watch(d, s.newCons(constraint{kind: cCall, owner: sc.fn, site: decs[i], dst: t, args: args, recvNode: noNode, deco: true}))
		cur = t
	}
	return cur
}

// keeps reports whether a decorator expression is one that returns the
// function (staticmethod, functools.wraps(...), torch.no_grad()...), by
// its static name.
func (s *solver) keeps(f *index.File, e *Node) bool {
	if e.Kind() == "call" {
		e = syntax.Unparen(e.Get("function"))
	}
	sym := s.proj.ResolveExpr(f, e)
	return sym.Kind == index.SymExternal && isTransparent(sym.External)
}

func decoratorExpr(d *Node) *Node {
	for _, c := range d.NamedChildren() {
		if c.Kind() != "comment" {
			return syntax.Unparen(c)
		}
	}
	return nil
}

// classDef binds a class's name and runs its body.
func (s *solver) classDef(sc scope, def *Node, decs []*Node) {
	f := sc.fn.File
	name := def.Get("name").Text(f.Src)
	var k *index.Class
	for _, c := range f.ClassList {
		if c.Node == def {
			k = c
		}
	}
	if k == nil {
		return
	}
	if sup := def.Get("superclasses"); sup != nil {
		for _, b := range sup.NamedChildren() {
			if b.Kind() == "keyword_argument" {
				s.eval(sc, b.Get("value"))
			} else {
				s.eval(sc, b)
			}
		}
	}
	cv := s.class(k)
	cur := s.newNode()
	s.add(cur, cv, sResolved)
	cur = s.decorate(sc, decs, cur, false)
	target, commit := s.bindTo(sc, name)
	s.copyTo(cur, target, sResolved)
	commit()
	if len(decs) > 0 {
		s.decorated = append(s.decorated, decoratedName{n: target, v: cv, def: def})
	}
	if body := def.Get("body"); body != nil {
		s.block(scope{fn: sc.fn, cls: k, ssa: sc.ssa}, body.NamedChildren())
	}
}

// importStmt binds the names an import statement binds.
func (s *solver) importStmt(sc scope, st *Node) {
	f := sc.fn.File
	src := f.Src
	if st.Kind() == "future_import_statement" {
		return
	}
	if st.Kind() == "import_statement" {
		for _, c := range st.All("name") {
			if c.Kind() == "aliased_import" {
				dotted := c.Get("name").Text(src)
				n, commit := s.bindTo(sc, c.Get("alias").Text(src))
				s.add(n, s.moduleValue(f, dotted, 0), sResolved)
				commit()
				continue
			}
			full := c.Text(src)
			top := full
			if i := strings.IndexByte(full, '.'); i >= 0 {
				top = full[:i]
			}
			n, commit := s.bindTo(sc, top)
			s.add(n, s.moduleValue(f, top, 0), sResolved)
			commit()
		}
		return
	}
	mod, level := index.FromModule(st, src)
	m := s.proj.ImportFrom(f, mod, level)
	for _, c := range st.Children() {
		if c.Kind() == "wildcard_import" {
			s.starImport(sc, m, mod)
		}
	}
	for _, c := range st.All("name") {
		local, orig := c.Text(src), c.Text(src)
		if c.Kind() == "aliased_import" {
			local, orig = c.Get("alias").Text(src), c.Get("name").Text(src)
		}
		target, commit := s.bindTo(sc, local)
		if m == nil {
			base := mod
			if level > 0 {
				commit()
				continue // a relative import outside the analysed files
			}
			s.add(target, s.ext(base+"."+orig), sResolved)
			commit()
			continue
		}
		if ch := m.Child(orig); ch != nil {
			s.add(target, s.mod(ch), sResolved)
		}
		if m.File != nil {
			s.copyTo(s.field(s.mod(m), orig), target, sResolved)
		}
		commit()
	}
}

// moduleValue is the value `import dotted` binds: a project module or an
// external name.
func (s *solver) moduleValue(f *index.File, dotted string, level int) VID {
	if m := s.proj.Import(f, dotted, level); m != nil {
		return s.mod(m)
	}
	return s.ext(dotted)
}

// starImport copies a module's public names (its __all__ when it has one)
// into the scope.
func (s *solver) starImport(sc scope, m *index.Module, dotted string) {
	if m == nil || m.File == nil {
		return
	}
	names := m.File.All
	if names == nil {
		for _, n := range m.File.TopNames {
			if !strings.HasPrefix(n, "_") {
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		s.copyTo(s.field(s.mod(m), n), s.bindNode(sc, n), sResolved)
		if ch := m.Child(n); ch != nil {
			s.add(s.bindNode(sc, n), s.mod(ch), sResolved)
		}
	}
}

// isTopAssign reports whether target is the (whole) target of the
// top-level assignment statement st.
func isTopAssign(st, target *Node) bool {
	if st.Kind() != "expression_statement" {
		return false
	}
	for _, a := range st.NamedChildren() {
		if a.Kind() == "assignment" && syntax.Unparen(a.Get("left")) == target {
			return true
		}
	}
	return false
}

// noteStore records a store into the value of expression holder when it is
// an attribute of a receiver (`x.attr`): if nothing ever reaches x, the
// store fallback may name x's class by the attribute.
func (s *solver) noteStore(site *Node, owner *index.Function, holder *Node) {
	h := syntax.Unparen(holder)
	if h == nil || h.Kind() != "attribute" {
		return
	}
	if recv, ok := s.expr(h.Get("object")); ok {
		s.storeSites = append(s.storeSites, storeSite{site: site, owner: owner, recv: recv, name: h.Get("attribute").Text(owner.File.Src)})
	}
}
