package flow

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Straight-line precision ("SSA-lite"). Within one scope, a name bound
// only by statements directly in the scope's body (assignments, defs,
// classes, imports; never inside a compound statement, never as a loop,
// with or except target, never augmented, deleted or written by an inner
// scope) has one version per binding: a read in the same scope sees the
// latest binding before it, as Python runs it; a read from elsewhere (an
// inner function, another module) sees every version, except a module's
// names, for which it sees the last binding where no code run during the
// import can read an earlier one (lastbind.go). In the same way, a
// constant-key path of such a name (`d["a"]`, `d["a"]["b"]`) written by a
// top-level statement is read back exactly by the following top-level
// statements until something else touches the name.
type ssaState struct {
	tracked map[string]bool
	cur     map[string]NID
	paths   map[string]NID // "name|k1|k2" -> the value last stored there
	top     map[*Node]bool // the scope's direct body statements
	stmt    *Node          // the top-level statement being evaluated
	// last is, in a module's top-level scope, the statement of a tracked
	// name's last binding, for the names whose earlier bindings no code
	// run after the import can see (lastbind.go): only that binding's
	// version joins the name's node that function bodies and other
	// modules read.
	last  map[string]*Node
	first map[string]*Node // the statement of such a name's first binding
}

// newSSA works out the tracked names of a scope whose body is stmts.
func newSSA(fn *index.Function, stmts []*Node) *ssaState {
	st := &ssaState{tracked: map[string]bool{}, cur: map[string]NID{}, paths: map[string]NID{}, top: map[*Node]bool{}}
	src := fn.File.Src
	bad := map[string]bool{}
	star := false
	for _, s := range stmts {
		st.top[s] = true
	}
	for g := range fn.Globals {
		bad[g] = true
	}
	for g := range fn.Nonlocals {
		bad[g] = true
	}
	topBind := func(s *Node) []string {
		switch s.Kind() {
		case "expression_statement":
			var out []string
			for _, a := range s.NamedChildren() {
				for a != nil && a.Kind() == "assignment" {
					out = append(out, index.TargetNames(a.Get("left"), src)...)
					a = a.Get("right")
				}
			}
			return out
		case "function_definition", "class_definition":
			return []string{s.Get("name").Text(src)}
		case "decorated_definition":
			if d := s.Get("definition"); d != nil {
				return []string{d.Get("name").Text(src)}
			}
		case "import_statement", "import_from_statement":
			var out []string
			for _, c := range s.All("name") {
				if c.Kind() == "aliased_import" {
					out = append(out, c.Get("alias").Text(src))
				} else {
					n := c.Text(src)
					if i := strings.IndexByte(n, '.'); i >= 0 {
						n = n[:i]
					}
					out = append(out, n)
				}
			}
			for _, c := range s.Children() {
				if c.Kind() == "wildcard_import" {
					star = true // names of unknown sets arrive: track nothing
				}
			}
			return out
		}
		return nil
	}
	// Versions only matter for a name bound twice at top level, or a
	// constant-key path written by a top-level statement; most scopes
	// have neither, and skip the walk below.
	counts := map[string]int{}
	paths := false
	for _, s := range stmts {
		for _, n := range topBind(s) {
			counts[n]++
		}
		if s.Kind() == "expression_statement" {
			for _, a := range s.NamedChildren() {
				if a.Kind() == "assignment" && syntax.Unparen(a.Get("left")) != nil && syntax.Unparen(a.Get("left")).Kind() == "subscript" ||
					a.Kind() == "call" && strings.HasSuffix(a.Get("function").Text(src), ".update") {
					paths = true
				}
			}
		}
	}
	if star {
		return nil
	}
	twice := false
	for _, c := range counts {
		if c > 1 {
			twice = true
		}
	}
	if !twice && !paths {
		return nil
	}
	for _, s := range stmts {
		for _, n := range topBind(s) {
			if !bad[n] {
				st.tracked[n] = true
			}
		}
		// Any other binding of a name, anywhere in the statement (but not
		// in nested scopes), makes it untracked.
		syntax.Walk(s, func(x *Node) bool {
			switch x.Kind() {
			case "lambda", "class_definition":
				return false
			case "function_definition":
				// An inner function writing a name of ours (nonlocal or
				// global) is caught by its declarations.
				markInnerWrites(x, src, bad)
				return false
			case "augmented_assignment", "for_statement", "for_in_clause", "named_expression", "delete_statement", "with_item", "except_clause", "as_pattern":
				for _, n := range index.BindingNames(x, src) {
					bad[n] = true
				}
			case "assignment":
				if !st.top[x.Parent()] {
					for _, n := range index.TargetNames(x.Get("left"), src) {
						bad[n] = true
					}
				}
			case "import_statement", "import_from_statement":
				if !st.top[x] {
					for _, n := range topBind(x) {
						bad[n] = true
					}
				}
			}
			return true
		})
		if !st.top[s] {
			continue
		}
	}
	// A def or class nested in a compound statement rebinds its name.
	for _, s := range stmts {
		syntax.Walk(s, func(x *Node) bool {
			if x == s || x.Parent() == s && s.Kind() == "decorated_definition" {
				return true // the statement's own def, decorated or not
			}
			switch x.Kind() {
			case "function_definition", "class_definition":
				bad[x.Get("name").Text(src)] = true
				return false
			case "lambda":
				return false
			}
			return true
		})
	}
	for n := range bad {
		delete(st.tracked, n)
	}
	if fn.Kind == index.TopLevel {
		st.last, st.first = map[string]*Node{}, map[string]*Node{}
		for _, s := range stmts {
			for _, n := range topBind(s) {
				if st.tracked[n] && counts[n] > 1 {
					st.last[n] = s
					if st.first[n] == nil {
						st.first[n] = s
					}
				}
			}
		}
	}
	return st
}

// markInnerWrites marks the names an inner def declares global or
// nonlocal (it may rebind them at any time).
func markInnerWrites(def *Node, src []byte, bad map[string]bool) {
	syntax.Walk(def, func(x *Node) bool {
		if x.Kind() == "global_statement" || x.Kind() == "nonlocal_statement" {
			for _, c := range x.NamedChildren() {
				if c.Kind() == "identifier" {
					bad[c.Text(src)] = true
				}
			}
		}
		return true
	})
}

// bindTo is the node a binding of name writes: for a tracked name, a new
// version (its values also join the name's node, for readers elsewhere).
// commit makes the version current once the value is in.
func (s *solver) bindTo(sc scope, name string) (n NID, commit func()) {
	final := s.bindNode(sc, name)
	if sc.cls != nil || sc.ssa == nil || !sc.ssa.tracked[name] {
		return final, func() {}
	}
	v := s.newNode()
	if last, ok := sc.ssa.last[name]; !ok || last == sc.ssa.stmt {
		s.copyTo(v, final, sResolved)
	}
	return v, func() {
		sc.ssa.cur[name] = v
		for p := range sc.ssa.paths {
			if p == name || strings.HasPrefix(p, name+"|") {
				delete(sc.ssa.paths, p)
			}
		}
	}
}

// readVersion is the current version of a tracked name, if any.
func (s *solver) readVersion(sc scope, name string) (NID, bool) {
	if sc.ssa == nil || sc.cls != nil && sc.cls.Defines[name] {
		return noNode, false
	}
	n, ok := sc.ssa.cur[name]
	return n, ok
}

// keyPath is `name|k1|k2` for a constant-key subscript chain rooted at a
// tracked name with a current version, or "".
func (s *solver) keyPath(sc scope, n *Node) string {
	if sc.ssa == nil || sc.cls != nil {
		return ""
	}
	src := sc.fn.File.Src
	var keys []string
	x := syntax.Unparen(n)
	for x != nil && x.Kind() == "subscript" {
		subs := x.All("subscript")
		if len(subs) != 1 {
			return ""
		}
		k := s.constIndex(sc, subs[0])
		if k == "" {
			return ""
		}
		keys = append([]string{k}, keys...)
		x = syntax.Unparen(x.Get("value"))
	}
	if x == nil || x.Kind() != "identifier" || len(keys) == 0 {
		return ""
	}
	name := x.Text(src)
	if _, ok := sc.ssa.cur[name]; !ok {
		return ""
	}
	return name + "|" + strings.Join(keys, "|")
}

// touches reports the tracked names a top-level statement uses other than
// as the root of a constant-key subscript or the receiver of
// `.update({...literal...})`: their paths are forgotten.
func (s *solver) forgetTouched(sc scope, st *Node) {
	if sc.ssa == nil || len(sc.ssa.paths) == 0 {
		return
	}
	src := sc.fn.File.Src
	compound := !st.Is("expression_statement", "return_statement")
	syntax.Walk(st, func(x *Node) bool {
		if x.Kind() != "identifier" {
			return true
		}
		name := x.Text(src)
		if !sc.ssa.tracked[name] {
			return true
		}
		p := x.Parent()
		ok := !compound && p != nil && p.Kind() == "subscript" && p.Get("value") == x && s.keyPath(sc, p) != ""
		if !compound && p != nil && p.Kind() == "attribute" && p.Get("object") == x && p.Get("attribute").Text(src) == "update" {
			if call := p.Parent(); call != nil && call.Kind() == "call" {
				ok = true
			}
		}
		if !ok {
			for k := range sc.ssa.paths {
				if strings.HasPrefix(k, name+"|") {
					delete(sc.ssa.paths, k)
				}
			}
		}
		return true
	})
}

// constIndex is a subscript index's constant: a literal, or a name bound
// once at module level to a literal (here or in the module it is
// imported from).
func (s *solver) constIndex(sc scope, n *Node) string {
	if k := constText(n, sc.fn.File.Src); k != "" {
		return k
	}
	n = syntax.Unparen(n)
	if n != nil && n.Kind() == "identifier" && (sc.fn.Kind == index.TopLevel || !sc.fn.Locals[n.Text(sc.fn.File.Src)]) {
		if f, lit := s.proj.LiteralOf(sc.fn.File, n.Text(sc.fn.File.Src)); lit != nil {
			return constText(lit, f.Src)
		}
	}
	return ""
}
