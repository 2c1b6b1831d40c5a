package flow

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// A module global read by a function body is read when the function runs.
// Code that runs after the module finished importing (a captured function:
// captures run after import; another module, which imports this one before
// it reads it) sees the module's last binding of the name. When every
// binding of a name is a statement directly in the module's body (the
// names newSSA tracks: no binding inside if/try/for/while/with, none by a
// `global` statement, no star import), the last one is known, and only its
// version joins the name's node (ssaState.last; bindTo). Reads at module
// level, in decorators, default values and class bodies see the binding in
// effect where they run (the versions of ssa.go).
//
// Two things can run a body before the import ends, and keep every version
// of a name (hideEarlier drops it from last):
//   - a function that reads the name, called (or referenced: passed on,
//     decorated by a project decorator, a class instantiated or derived
//     from) by module-level code before the name's last binding, directly
//     or through the functions its body names; a lambda in module-level
//     code is taken as called;
//   - an import of a project module between the name's first and last
//     bindings, which may import this module back and read the name then;
//     or a call of what such an import bound (a decorator too) between
//     them, which may call back into this module.
//
// The walk is one pass over the module: each def or class body is read at
// most once.
func (s *solver) hideEarlier(st *ssaState, f *index.File, stmts []*Node) {
	if st == nil || len(st.last) == 0 {
		return
	}
	lastAt := map[*Node][]string{}
	firstAt := map[*Node][]string{}
	for n, at := range st.last {
		lastAt[at] = append(lastAt[at], n)
		firstAt[st.first[n]] = append(firstAt[st.first[n]], n)
	}
	b := &importRun{s: s, f: f, src: f.Src, defs: map[string][]*Node{}, ran: map[string]int{}, mentioned: map[string]bool{}, projNames: map[string]bool{}, done: map[*Node]bool{}}
	projImports := 0
	impAtFirst, callsAtFirst := map[string]int{}, map[string]int{}
	for _, x := range stmts {
		// The statement's own reads and calls run before its binding.
		b.stmt(x)
		for _, n := range lastAt[x] {
			if b.mentioned[n] || projImports > impAtFirst[n] || b.foreign > callsAtFirst[n] {
				delete(st.last, n)
			}
		}
		projImports += s.projectImports(f, x, b.projNames)
		for _, n := range firstAt[x] {
			impAtFirst[n], callsAtFirst[n] = projImports, b.foreign
		}
	}
}

// projectImports counts the imports of project modules in a module-level
// statement (def and lambda bodies aside), and adds the names they bind to
// names.
func (s *solver) projectImports(f *index.File, x *Node, names map[string]bool) int {
	n := 0
	src := f.Src
	syntax.Walk(x, func(y *Node) bool {
		switch y.Kind() {
		case "function_definition", "lambda":
			return false
		case "import_statement":
			for _, c := range y.All("name") {
				local, dotted := c.Text(src), c.Text(src)
				if c.Kind() == "aliased_import" {
					local, dotted = c.Get("alias").Text(src), c.Get("name").Text(src)
				} else if i := strings.IndexByte(local, '.'); i >= 0 {
					local = local[:i]
				}
				if s.proj.Import(f, dotted, 0) != nil {
					n++
					names[local] = true
				}
			}
			return false
		case "import_from_statement":
			mod, level := index.FromModule(y, src)
			if s.proj.ImportFrom(f, mod, level) != nil {
				n++
				for _, c := range y.All("name") {
					if c.Kind() == "aliased_import" {
						c = c.Get("alias")
					}
					names[c.Text(src)] = true
				}
			}
			return false
		}
		return true
	})
	return n
}

// importRun follows what module-level code may run while the module
// imports.
type importRun struct {
	s    *solver
	f    *index.File
	src  []byte
	defs map[string][]*Node // the defs and classes of a name seen so far
	ran  map[string]int     // how many of defs[name] were taken as run
	// mentioned are the names read by a body taken as run: they may be
	// read before the import ends.
	mentioned map[string]bool
	// projNames are the names bound by imports of project modules so far;
	// foreign counts the calls of them (decorators included) module-level
	// code makes: another module's function may read this module's names
	// (it imports this one back, or is given one of its functions).
	projNames map[string]bool
	foreign   int
	done      map[*Node]bool
	queue     []*Node
	running   bool
}

// stmt walks a module-level statement: what runs at import is walked as
// module-level code, the bodies of defs are not (a lambda's is: taken as
// called), and its defs and classes are recorded.
func (b *importRun) stmt(x *Node) {
	syntax.Walk(x, func(y *Node) bool {
		switch y.Kind() {
		case "identifier":
			b.ref(y.Text(b.src))
		case "call", "decorator":
			callee := y.Get("function")
			if y.Kind() == "decorator" {
				callee = decoratorExpr(y)
				if callee != nil && callee.Kind() == "call" {
					callee = callee.Get("function")
				}
			}
			if root := rootName(callee, b.src); root != "" && b.projNames[root] {
				b.foreign++
			}
		case "assignment":
			// A name it binds is no reference.
			for _, c := range y.NamedChildren() {
				if c == y.Get("left") && c.Kind() == "identifier" {
					continue
				}
				b.stmt(c)
			}
			return false
		case "lambda":
			b.run(y)
			return false
		case "decorated_definition":
			def := y.Get("definition")
			if def != nil && b.projectDecorated(y) {
				// A project decorator may call what it decorates.
				b.run(def)
			}
		case "function_definition":
			// Decorators, defaults and annotations run at import; the
			// name is a binding, the body runs when called.
			for _, c := range y.NamedChildren() {
				if c == y.Get("body") || c == y.Get("name") {
					continue
				}
				b.stmt(c)
			}
			b.define(y)
			return false
		case "class_definition":
			for _, c := range y.NamedChildren() {
				if c == y.Get("name") {
					continue
				}
				b.stmt(c)
			}
			b.define(y)
			return false
		}
		return true
	})
}

// define records a def or class; one whose name code taken as run reads
// may be called before the import ends.
func (b *importRun) define(def *Node) {
	p := def.Parent()
	if p != nil && p.Kind() == "decorated_definition" {
		p = p.Parent()
	}
	if p != nil && p.Kind() == "block" && p.Parent() != nil && p.Parent().Kind() == "class_definition" {
		return // a method: run with its class
	}
	name := def.Get("name").Text(b.src)
	b.defs[name] = append(b.defs[name], def)
	if b.mentioned[name] {
		b.ref(name)
	}
}

// ref is a reference to name by code that runs at import: the defs and
// classes bound to it so far may be called.
func (b *importRun) ref(name string) {
	ds := b.defs[name]
	for b.ran[name] < len(ds) {
		d := ds[b.ran[name]]
		b.ran[name]++
		b.run(d)
	}
}

// run takes a body as run at import: every name it reads is mentioned,
// and what those names are may run too (a worklist: a chain of calls is
// no deeper a recursion).
func (b *importRun) run(body *Node) {
	b.queue = append(b.queue, body)
	if b.running {
		return
	}
	b.running = true
	for len(b.queue) > 0 {
		x := b.queue[len(b.queue)-1]
		b.queue = b.queue[:len(b.queue)-1]
		if b.done[x] {
			continue
		}
		b.done[x] = true
		var names []string
		syntax.Walk(x, func(y *Node) bool {
			if y.Kind() == "identifier" {
				if n := y.Text(b.src); !b.mentioned[n] {
					b.mentioned[n] = true
					names = append(names, n)
				}
			}
			return true
		})
		for _, n := range names {
			b.ref(n)
		}
	}
	b.running = false
}

// projectDecorated reports whether a decorated definition has a decorator
// that is not a name outside the project (a project decorator, a method of
// an object, a call of either).
func (b *importRun) projectDecorated(d *Node) bool {
	for _, c := range d.Children() {
		if c.Kind() != "decorator" {
			continue
		}
		e := decoratorExpr(c)
		if e != nil && e.Kind() == "call" {
			e = syntax.Unparen(e.Get("function"))
		}
		if e == nil || b.s.proj.ResolveExpr(b.f, e).Kind != index.SymExternal {
			return true
		}
	}
	return false
}

// rootName is the identifier an attribute chain starts from (`a` of
// `a.b.c`), or "".
func rootName(n *Node, src []byte) string {
	for n = syntax.Unparen(n); n != nil && n.Kind() == "attribute"; n = syntax.Unparen(n.Get("object")) {
	}
	if n != nil && n.Kind() == "identifier" {
		return n.Text(src)
	}
	return ""
}
