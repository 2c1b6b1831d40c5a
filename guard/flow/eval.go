package flow

import (
	"strconv"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// evalValue evaluates a right-hand side: a bare `a, b` is a tuple.
func (s *solver) evalValue(sc scope, n *Node) NID {
	return s.eval(sc, n)
}

// eval adds the constraints of expression n in scope sc and returns the
// node of its value (noNode for values that cannot hold a function, a
// class, a module or an object the analysis tracks: literals, numbers).
func (s *solver) eval(sc scope, n *Node) NID {
	if n == nil {
		return noNode
	}
	if id, ok := s.expr(n); ok {
		return id
	}
	id := s.eval1(sc, n)
	s.setExpr(n, id)
	return id
}

func (s *solver) eval1(sc scope, n *Node) NID {
	src := sc.fn.File.Src
	switch n.Kind() {
	case "parenthesized_expression":
		var last NID = noNode
		for _, c := range n.NamedChildren() {
			last = s.eval(sc, c)
		}
		return last
	case "identifier":
		name := n.Text(src)
		if v, ok := s.readVersion(sc, name); ok {
			return s.narrowed(sc, n, name, v)
		}
		return s.narrowed(sc, n, name, s.varNode(sc, name))
	case "attribute":
		base := s.eval(sc, n.Get("object"))
		if base < 0 {
			return noNode
		}
		t := s.newNode()
		attr := n.Get("attribute").Text(src)
		s.attrNames[attr] = true
		s.watch(base, s.newCons(constraint{kind: cLoad, owner: sc.fn, site: n, attr: attr, dst: t}))
		return t
	case "call":
		return s.callExpr(sc, n)
	case "subscript":
		if sc.ssa != nil && sc.ssa.stmt != nil && sc.ssa.stmt.Is("expression_statement", "return_statement") {
			if path := s.keyPath(sc, n); path != "" {
				if v, ok := sc.ssa.paths[path]; ok {
					s.eval(sc, n.Get("value"))
					return v
				}
			}
		}
		base := s.eval(sc, n.Get("value"))
		subs := n.All("subscript")
		for _, sub := range subs {
			s.eval(sc, sub)
		}
		if base < 0 {
			return noNode
		}
		t := s.newNode()
		if len(subs) == 1 && subs[0].Kind() == "slice" {
			lo, hi, ok := sliceBounds(subs[0], src)
			if !ok {
				return base // xs[a:b:c], xs[i:j]: xs's elements
			}
			s.watch(base, s.newCons(constraint{kind: cSlice, owner: sc.fn, site: n, dst: t, lo: int32(lo), hi: int32(hi)}))
			return t
		}
		for _, sub := range subs {
			if sub.Kind() == "slice" {
				return base
			}
		}
		key := ""
		if len(subs) == 1 {
			key = s.constIndex(sc, subs[0])
		}
		s.watch(base, s.newCons(constraint{kind: cElemLoad, owner: sc.fn, site: n, dst: t, attr: key}))
		return t
	case "list", "tuple", "set", "expression_list", "pattern_list":
		c := s.cont(n, tagPlain)
		if n.Kind() != "set" {
			c = s.keyedCont(n)
		}
		el := s.values[c].Elems
		rows := rowTable(n)
		for i, e := range n.NamedChildren() {
			if rows && plainRow(e) {
				s.putKey(c, strconv.Itoa(i), s.evalRow(sc, n, e), sResolved)
				continue
			}
			if e.Kind() == "list_splat" || e.Kind() == "parenthesized_list_splat" {
				s.unkey(c)
				for _, x := range e.NamedChildren() {
					s.elemsIntoCapped(&constraint{owner: sc.fn, site: e}, s.eval(sc, x), el, sResolved)
				}
				continue
			}
			s.putKey(c, strconv.Itoa(i), s.eval(sc, e), sResolved)
		}
		t := s.newNode()
		s.add(t, c, sResolved)
		return t
	case "dictionary":
		c := s.keyedDict(n)
		for _, e := range n.NamedChildren() {
			switch e.Kind() {
			case "pair":
				s.eval(sc, e.Get("key"))
				if k := constText(e.Get("key"), src); k != "" {
					s.putKey(c, k, s.eval(sc, e.Get("value")), sResolved)
				} else {
					s.copyTo(s.eval(sc, e.Get("value")), s.looseElems(c), sResolved)
				}
			case "dictionary_splat":
				// Key by key (kwspread.go).
				for _, x := range e.NamedChildren() {
					s.spreadInto(sc.fn, e, c, s.eval(sc, x), sResolved)
				}
			}
		}
		t := s.newNode()
		s.add(t, c, sResolved)
		return t
	case "list_comprehension", "set_comprehension", "generator_expression", "dictionary_comprehension":
		c := s.cont(n, tagPlain)
		el := s.values[c].Elems
		for _, cl := range n.NamedChildren() {
			switch cl.Kind() {
			case "for_in_clause":
				it := s.iterNode(sc, cl, s.eval(sc, cl.Get("right")))
				s.assign(sc, cl.Get("left"), it)
			case "if_clause":
				for _, x := range cl.NamedChildren() {
					s.eval(sc, x)
				}
			}
		}
		body := n.Get("body")
		if body != nil && body.Kind() == "pair" {
			s.eval(sc, body.Get("key"))
			s.copyTo(s.eval(sc, body.Get("value")), el, sResolved)
		} else {
			s.copyTo(s.eval(sc, body), el, sResolved)
		}
		t := s.newNode()
		s.add(t, c, sResolved)
		return t
	case "conditional_expression", "boolean_operator":
		t := s.newNode()
		kids := n.NamedChildren()
		for i, c := range kids {
			v := s.eval(sc, c)
			if n.Kind() == "conditional_expression" && i == 1 {
				continue // the condition
			}
			s.copyTo(v, t, sResolved)
		}
		return t
	case "binary_operator", "unary_operator", "comparison_operator", "not_operator":
		t := s.newNode()
		for _, c := range n.NamedChildren() {
			v := s.eval(sc, c)
			if n.Kind() == "binary_operator" || n.Kind() == "unary_operator" {
				s.addEdge(v, t, edge{tr: trTensorCont})
			}
		}
		return t
	case "lambda":
		fn := sc.fn.File.FuncAt(n)
		if fn == nil {
			return noNode
		}
		s.importTimeDefaults(sc, fn)
		t := s.newNode()
		s.add(t, s.fnValue(fn), sResolved)
		return t
	case "await":
		var last NID = noNode
		for _, c := range n.NamedChildren() {
			last = s.eval(sc, c)
		}
		return last
	case "named_expression":
		v := s.eval(sc, n.Get("value"))
		s.assign(sc, n.Get("name"), v)
		return v
	case "yield":
		from := false
		for _, c := range n.Children() {
			if c.Kind() == "from" {
				from = true
			}
		}
		for _, c := range n.NamedChildren() {
			v := s.eval(sc, c)
			if from {
				s.elemsIntoCapped(&constraint{owner: sc.fn, site: n}, v, s.yieldNode(sc.fn), sResolved)
			} else {
				s.copyTo(v, s.yieldNode(sc.fn), sResolved)
			}
		}
		return noNode
	case "assignment":
		return s.assignment(sc, n)
	case "keyword_argument":
		return s.eval(sc, n.Get("value"))
	case "list_splat", "dictionary_splat", "parenthesized_list_splat":
		var last NID = noNode
		for _, c := range n.NamedChildren() {
			last = s.eval(sc, c)
		}
		return last
	case "string", "concatenated_string", "integer", "float", "true", "false", "none", "ellipsis", "comment":
		if n.Kind() == "string" {
			s.noteString(sc.fn.File, n)
		}
		if n.Kind() == "string" || n.Kind() == "concatenated_string" {
			syntax.Walk(n, func(x *Node) bool {
				if x.Kind() == "interpolation" {
					for _, c := range x.NamedChildren() {
						s.eval(sc, c)
					}
					return false
				}
				return true
			})
		}
		return noNode
	}
	// Anything else (slices, format specs, type expressions): its parts,
	// for the calls in them.
	for _, c := range n.NamedChildren() {
		s.eval(sc, c)
	}
	return noNode
}

// callExpr evaluates a call.
func (s *solver) callExpr(sc scope, n *Node) NID {
	src := sc.fn.File.Src
	fnode := syntax.Unparen(n.Get("function"))
	args := &callArgs{}
	if al := n.Get("arguments"); al != nil {
		if al.Kind() == "generator_expression" {
			args.addPos(s.eval(sc, al), false, "", false, "")
		} else {
			for _, a := range al.NamedChildren() {
				switch a.Kind() {
				case "keyword_argument":
					args.kw = append(args.kw, kwArg{a.Get("name").Text(src), s.eval(sc, a.Get("value")), s.argConstText(sc, a.Get("value"), src)})
				case "dictionary_splat":
					for _, x := range a.NamedChildren() {
						args.kwSplat = append(args.kwSplat, s.eval(sc, x))
					}
				case "list_splat":
					for _, x := range a.NamedChildren() {
						args.addPos(s.eval(sc, x), true, "", false, "")
					}
				case "comment":
				default:
					n := s.eval(sc, a)
					l, ok := index.StringLit(a, src)
					if ok {
						s.attrNames[l] = true // getattr(x, "name")
					}
					args.addPos(n, false, l, ok, s.argConstText(sc, a, src))
				}
			}
		}
	}
	t := s.newNode()
	// super() and super(C, self).
	if fnode != nil && fnode.Kind() == "identifier" && fnode.Text(src) == "super" && !sc.fn.File.Top.Locals["super"] {
		cls, self := s.superOf(sc)
		if len(args.pos) == 2 {
			if sym := s.proj.ResolveExpr(sc.fn.File, syntax.Unparen(n.Get("arguments").NamedChildren()[0])); sym.Kind == index.SymClass {
				cls = sym.Class
			}
			s.watch(args.pos[1], s.newCons(constraint{kind: cSuper, owner: sc.fn, site: n, cls: cls, dst: t}))
			return t
		}
		if cls != nil && self >= 0 {
			s.watch(self, s.newCons(constraint{kind: cSuper, owner: sc.fn, site: n, cls: cls, dst: t}))
		}
		return t
	}
	callee := s.eval(sc, fnode)
	c := constraint{kind: cCall, owner: sc.fn, site: n, dst: t, args: args, recvNode: noNode}
	if fnode != nil && fnode.Kind() == "attribute" {
		obj := syntax.Unparen(fnode.Get("object"))
		recv, ok := s.expr(obj)
		if !ok {
			recv = s.eval(sc, obj)
		}
		c.recvNode = recv
		name := fnode.Get("attribute").Text(src)
		if torchapi.ContainerMethods[name] {
			s.watch(recv, s.newCons(constraint{kind: cMethod, owner: sc.fn, site: n, attr: name, dst: t, args: args}))
			if torchapi.ContainerStores[name] {
				s.noteStore(n, sc.fn, obj)
			}
		}
		if name == "update" && obj != nil && obj.Kind() == "identifier" && sc.ssa != nil && sc.cls == nil && sc.ssa.stmt != nil &&
			sc.ssa.stmt.Kind() == "expression_statement" && sc.ssa.stmt.NamedChildren()[0] == n {
			// d.update({"a": f}) as a statement of its own: d["a"] is f.
			if _, tracked := sc.ssa.cur[obj.Text(src)]; tracked {
				if al := n.Get("arguments"); al != nil && len(al.NamedChildren()) == 1 {
					if lit := syntax.Unparen(al.NamedChildren()[0]); lit != nil && lit.Kind() == "dictionary" {
						for _, pr := range lit.NamedChildren() {
							if pr.Kind() == "pair" {
								if k := constText(pr.Get("key"), src); k != "" {
									sc.ssa.paths[obj.Text(src)+"|"+k] = s.eval(sc, pr.Get("value"))
								}
							}
						}
					}
				}
			}
		}
		if torchapi.ModuleReturnsSelf[name] {
			s.watch(recv, s.newCons(constraint{kind: cSelfRet, owner: sc.fn, site: n, attr: name, dst: t}))
		}
		if (name == "add_module" || name == "register_module") && len(args.pos) >= 2 {
			// nn.Module.add_module(name, module): an attribute by that name.
			attr := "*"
			if l, ok := args.lit(0); ok {
				attr = l
			}
			s.watch(recv, s.newCons(constraint{kind: cStore, owner: sc.fn, site: n, attr: attr, src: args.pos[1]}))
		}
		s.methodSites = append(s.methodSites, methodSite{call: n, owner: sc.fn, recv: recv, callee: callee, name: name})
	}
	if callee >= 0 {
		s.watch(callee, s.newCons(c))
	}
	return t
}

// superOf is the class and self node for super() in the scope: the
// method's class and its first parameter (a closure's enclosing method).
func (s *solver) superOf(sc scope) (*index.Class, NID) {
	for f := sc.fn; f != nil && f.Kind != index.TopLevel; f = f.Outer {
		if f.Class != nil {
			if len(f.Params) == 0 {
				return f.Class, noNode
			}
			return f.Class, s.local(f, f.Params[0].Name)
		}
	}
	return nil, noNode
}

// A literal table, a list or tuple of more than contCap literal rows
// (`OPS = (("abs", abs), ("add", add), ...)`, an operator library's
// registration table), has one container for all its rows: each row's
// position i goes into the rows container's key i. Each row its own
// container, the table's elements would pass contCap and widen to the
// summary container (widen), and what a loop over the table reads
// (`for name, fn in OPS`) would be every widened container's elements,
// guesses by name strength that flood every node they reach; with one
// rows container it is the table's own values, resolved. The rows' keys
// mix (`OPS[0][1]` may be any row's function): the table is read row by
// row in a loop, rarely by a constant index.

// rowTable: n is a list or tuple with more than contCap plain rows.
func rowTable(n *Node) bool {
	rows := 0
	for _, e := range n.NamedChildren() {
		if plainRow(e) {
			rows++
		}
	}
	return rows > contCap
}

// plainRow: e is a list or tuple literal with no splat.
func plainRow(e *Node) bool {
	if e == nil || !e.Is("tuple", "list") {
		return false
	}
	for _, x := range e.NamedChildren() {
		if x.Kind() == "list_splat" || x.Kind() == "parenthesized_list_splat" {
			return false
		}
	}
	return true
}

// evalRow evaluates row e of table n into the table's rows container
// and returns a node that holds it.
func (s *solver) evalRow(sc scope, n, e *Node) NID {
	c := s.cont(n, tagRows)
	if s.keys[c] == nil {
		s.keys[c] = &keyInfo{keySet: map[string]bool{}}
	}
	i := 0
	for _, x := range e.NamedChildren() {
		if x.Kind() == "comment" {
			continue
		}
		s.putKey(c, strconv.Itoa(i), s.eval(sc, x), sResolved)
		i++
	}
	t := s.newNode()
	s.add(t, c, sResolved)
	return t
}
