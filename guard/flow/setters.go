package flow

import (
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// Stores under a caller's name. A helper that stores what it is given
// under a name its caller gives
//
//	class WeightModule:
//	    def add_module(self, name, module):
//	        self._modules[name] = module
//	        setattr(self, name, module)
//
//	def set_param(module, name, weights):
//	    setattr(module, name, weights)
//
// is called with a literal name at nearly every call (`self.add_module("attn",
// Attention())`). Read context-insensitively, its one `setattr` stores every
// call's value into every object any call passed, under a name the analysis
// cannot read: and what a store under a computed name put in an object is
// what every attribute read of that object may get (load). One such helper
// shared by a model's weight classes put every module of every class in
// every attribute read of every instance: 9% of the nodes of a 275k-line
// video model held each of its weight classes' instances and the solve
// passed the fact budget.
//
// So a `setattr(obj, name, value)` whose object and name are parameters of
// the function it is in, never rebound there, is made at each call instead
// of once in the body: into what that call passed for the object (its
// receiver, for self), under the name that call passed when it is a string
// literal (else a computed name, as before), of what that call passed for
// the value when the value is a parameter too (else the body's value node,
// which every call shares). Each call's store is one of the stores the body
// makes for that call, so nothing a run can store is lost; what goes is only
// the mixing of one call's object, name and value with another's.
//
// The site counts only once its callee is known to be the builtin setattr
// (external): a call of the function before that is kept and replayed then.
// Where the function's parameters take values other than through a call's
// arguments (a receiver bound for a dunder method or a property, a
// decorator applied, a declared type seeded into a function nothing calls),
// the store is also made in the body, on the parameters' nodes, as before.
//
// The same holds for a helper that returns what an object holds under a
// name its caller gives (`def get(self, key, default=None): return
// getattr(self, key, default)`): read once in the body, its getattr of a
// name the analysis cannot read gets only what computed-name stores put
// there, never `self.sampler = Sampler()`, so `cfg.get("sampler")` held
// nothing it could call. Each call whose name is a string literal also
// reads that attribute of what the call passed, into the call's result;
// the body's own read stays. So does a subscript with a literal key of an
// object whose `__getitem__(self, key)` is such a getter (`cfg["sampler"]`).
type setterState struct {
	// sites are the candidate setattr calls and returned getattr calls,
	// by call node (prepassSetters).
	sites map[*syntax.Node]*setterSite
	// cands are the functions with candidate sites; armed the sites of
	// each function whose callee is known to be the builtin (external).
	cands map[*index.Function]bool
	armed map[*index.Function][]*setterSite
	// invs are each candidate function's calls, for sites armed later.
	invs map[*index.Function][]invocation
	// generic: the function's parameters took values that no call's
	// arguments hold (setterGeneric); its sites store on them too.
	generic map[*index.Function]bool
	// subs are the subscripts made calls of a getter (getterKey), with
	// the strongest strength each was made at.
	subs map[subscriptKey]uint8
	// fieldArgs are the field sites by the parameter node they store
	// (prepassField); seeded those that store it in the body as well
	// (fieldSeeded).
	fieldArgs map[NID][]*setterSite
	seeded    map[*setterSite]bool
}

type subscriptKey struct {
	site *Node
	recv VID
}

// setterSite is one `setattr(obj, name, value)` of fn, or one returned
// `getattr(obj, name[, default])` (get): the parameter indexes of its
// object and name, and of a setattr's value (-1: not a parameter; val, the
// body's node for it, is known once armed).
type setterSite struct {
	fn             *index.Function
	call           *Node
	obj, name, arg int
	val            NID
	st             uint8
	isArmed        bool
	// get: a returned `getattr(obj, name[, default])`, not a setattr.
	get bool
	// attr: a field site (`self.attr = param`, prepassField), of this
	// attribute; its name is no parameter.
	attr string
}

// prepassSetters finds fn's candidate setattr sites (before any
// constraint is built).
func (s *solver) prepassSetters(fn *index.Function) {
	if fn.Kind == index.TopLevel || fn.Body == nil {
		return
	}
	src := fn.File.Src
	syntax.Walk(fn.Body, func(n *Node) bool {
		switch n.Kind() {
		case "function_definition", "class_definition":
			return false
		case "lambda":
			if n != fn.Body && n != fn.Def {
				return false
			}
		case "return_statement":
			if kids := n.NamedChildren(); len(kids) == 1 {
				s.prepassGetter(fn, syntax.Unparen(kids[0]))
			}
		case "assignment":
			s.prepassField(fn, n)
		case "call":
			f := n.Get("function")
			if f == nil || f.Kind() != "identifier" || f.Text(src) != "setattr" {
				return true
			}
			args := n.Get("arguments")
			if args == nil || args.Kind() != "argument_list" {
				return true
			}
			as := args.NamedChildren()
			if len(as) != 3 {
				return true
			}
			for _, a := range as {
				if !isPlainExpr(a) {
					return true
				}
			}
			obj, name := s.passParam(fn, as[0]), s.passParam(fn, as[1])
			if obj < 0 || name < 0 {
				return true
			}
			s.addSetterSite(&setterSite{fn: fn, call: n, obj: obj, name: name, arg: s.passParam(fn, as[2]), val: noNode})
		}
		return true
	})
}

// prepassField: `self.attr = param` (or `param.eval()`, or annotated,
// `self.attr: T = param`) in a method, where
// self and param are parameters it never rebinds, is a candidate field
// site: stored at each call into the receiver that call binds, of what
// that call passes (setterAt), instead of once in the body. Read once in
// the body, a base class's `__init__(self, model)` that its subclasses
// reach through `super().__init__(model=...)` stored every subclass's
// model into every subclass's instances (one `self` for all): an engine's
// graph runner called the forward of a model that only its eager runner
// holds.
func (s *solver) prepassField(fn *index.Function, n *Node) {
	if fn.Class == nil || fn.Static || fn.ClassMethod || len(fn.Params) < 2 {
		return
	}
	l, r := syntax.Unparen(n.Get("left")), syntax.Unparen(n.Get("right"))
	if l == nil || r == nil || l.Kind() != "attribute" {
		return // an annotation (`self.impl: Any = impl`) changes no value: a field site too
	}
	src := fn.File.Src
	obj := syntax.Unparen(l.Get("object"))
	if obj == nil || obj.Kind() != "identifier" || s.passParam(fn, obj) != 0 {
		return
	}
	if r.Kind() == "call" {
		callee := syntax.Unparen(r.Get("function"))
		args := r.Get("arguments")
		if callee == nil || callee.Kind() != "attribute" || !torchapi.ReturnsReceiver[callee.Get("attribute").Text(src)] ||
			args == nil || len(args.NamedChildren()) > 1 {
			return
		}
		r = syntax.Unparen(callee.Get("object"))
	}
	arg := s.passParam(fn, r)
	if arg < 1 {
		return
	}
	site := &setterSite{fn: fn, call: l, obj: 0, name: -1, arg: arg, val: noNode, st: sResolved, attr: l.Get("attribute").Text(src)}
	s.addSetterSite(site)
	site.isArmed, site.val = true, s.paramNodes(fn)[arg]
	if s.setters.armed == nil {
		s.setters.armed = map[*index.Function][]*setterSite{}
	}
	s.setters.armed[fn] = append(s.setters.armed[fn], site)
	if s.setters.fieldArgs == nil {
		s.setters.fieldArgs = map[NID][]*setterSite{}
	}
	s.setters.fieldArgs[site.val] = append(s.setters.fieldArgs[site.val], site)
}

// fieldSeeded: a declared type seeded parameter node n (seedDeclared),
// which no call filled: the field sites that store n store it in the body
// too, on every receiver, as before them (a value no call passes reaches
// no call's store).
func (s *solver) fieldSeeded(n NID) {
	for _, site := range s.setters.fieldArgs[n] {
		if !s.setters.seeded[site] {
			if s.setters.seeded == nil {
				s.setters.seeded = map[*setterSite]bool{}
			}
			s.setters.seeded[site] = true
			s.setterInBody(site)
		}
	}
}

// fieldSite: the attribute target t is a field site (prepassField): the
// body makes no store of its own unless its function is generic.
func (s *solver) fieldSite(t *Node) bool {
	site := s.setters.sites[t]
	return site != nil && site.attr != ""
}

// prepassGetter: a returned `getattr(obj, name[, default])` whose object
// and name are fn's parameters is a candidate getter site.
func (s *solver) prepassGetter(fn *index.Function, e *Node) {
	if e == nil || e.Kind() != "call" {
		return
	}
	f := e.Get("function")
	if f == nil || f.Kind() != "identifier" || f.Text(fn.File.Src) != "getattr" {
		return
	}
	args := e.Get("arguments")
	if args == nil || args.Kind() != "argument_list" {
		return
	}
	as := args.NamedChildren()
	if len(as) < 2 || len(as) > 3 {
		return
	}
	for _, a := range as {
		if !isPlainExpr(a) {
			return
		}
	}
	obj, name := s.passParam(fn, as[0]), s.passParam(fn, as[1])
	if obj < 0 || name < 0 {
		return
	}
	s.addSetterSite(&setterSite{fn: fn, call: e, obj: obj, name: name, arg: -1, val: noNode, get: true})
}

func (s *solver) addSetterSite(site *setterSite) {
	if s.setters.sites == nil {
		s.setters.sites = map[*syntax.Node]*setterSite{}
		s.setters.cands = map[*index.Function]bool{}
	}
	s.setters.sites[site.call] = site
	s.setters.cands[site.fn] = true
}

// isPlainExpr: an argument that is not a splat or a keyword (those make a
// call whose parameters the site cannot name).
func isPlainExpr(a *Node) bool {
	switch a.Kind() {
	case "list_splat", "dictionary_splat", "keyword_argument":
		return false
	}
	return true
}

// armSetter: the candidate site of call constraint c calls the builtin
// setattr (get: getattr), with val the body's node of its value. It
// reports whether the site is a candidate (for setattr, the caller then
// makes no store of its own; a getattr's read in the body stays).
func (s *solver) armSetter(c *constraint, val NID, st uint8, get bool) bool {
	site := s.setters.sites[c.site]
	if site == nil || site.fn != c.owner || site.get != get {
		return false
	}
	if site.isArmed {
		return true
	}
	site.isArmed, site.val, site.st = true, val, st
	f := site.fn
	if s.setters.armed == nil {
		s.setters.armed = map[*index.Function][]*setterSite{}
	}
	s.setters.armed[f] = append(s.setters.armed[f], site)
	for _, inv := range s.setters.invs[f] {
		s.setterAt(site, inv)
	}
	if s.setters.generic[f] {
		s.setterInBody(site)
	}
	return true
}

// settersInto makes f's armed stores for one call (invoke), and keeps the
// call for the sites armed later.
func (s *solver) settersInto(ci int32, f *index.Function, off int, recv VID, st uint8) {
	if !s.setters.cands[f] {
		return
	}
	inv := invocation{ci: ci, off: off, recv: recv, st: st}
	if s.setters.invs == nil {
		s.setters.invs = map[*index.Function][]invocation{}
	}
	s.setters.invs[f] = append(s.setters.invs[f], inv)
	for _, site := range s.setters.armed[f] {
		s.setterAt(site, inv)
	}
}

// getterKey: the subscript c (its literal key in c.attr) of instance recv,
// whose class's __getitem__ is m, as a call m(recv, key): a getter of m
// reads that attribute (setterAt).
func (s *solver) getterKey(c *constraint, m *index.Function, recv VID, st uint8) {
	if !s.setters.cands[m] || !strings.HasPrefix(c.attr, "'") || c.dst < 0 || len(m.Params) < 2 {
		return
	}
	// Made again when the object comes stronger: the first firing's
	// strength was kept, and which firing came first follows the order
	// the files were built in.
	if s.setters.subs == nil {
		s.setters.subs = map[subscriptKey]uint8{}
	}
	if !stronger(s.setters.subs, subscriptKey{c.site, recv}, st) {
		return
	}
	args := &callArgs{}
	args.addPos(s.newNode(), false, c.attr[1:], true, c.attr)
	nc := s.newCons(constraint{kind: cCall, owner: c.owner, site: c.site, dst: c.dst, args: args})
	s.settersInto(nc, m, 1, recv, st)
}

// setterAt makes one site's store for one call.
func (s *solver) setterAt(site *setterSite, inv invocation) {
	c := s.cons.at(inv.ci)
	f := site.fn
	ps := s.paramNodes(f)
	name := "*"
	if site.attr != "" {
		name = site.attr
	} else if k, ok := s.argConst(c, f, inv.off, site.name); ok && strings.HasPrefix(k, "'") {
		name = k[1:]
	}
	if site.get {
		// The body reads the computed name already; a literal one is
		// read here, of this call's object, into this call's result.
		if name == "*" || c.dst < 0 {
			return
		}
		nc := s.newCons(constraint{kind: cLoad, owner: f, site: site.call, attr: name, dst: c.dst})
		s.setterObj(site, inv, c, ps, nc, min(inv.st, site.st))
		return
	}
	val := site.val
	if site.arg >= 0 {
		val = s.callArg(c, f, inv.off, site.arg, ps)
	}
	nc := s.newCons(constraint{kind: cStore, owner: f, site: site.call, attr: name, src: val})
	s.setterObj(site, inv, c, ps, nc, min(inv.st, site.st))
}

// setterObj applies constraint nc to what call inv passed for the site's
// object: its receiver, or the argument's node.
func (s *solver) setterObj(site *setterSite, inv invocation, c *constraint, ps []NID, nc int32, st uint8) {
	if site.obj < inv.off {
		if inv.recv != noVID {
			s.fire(nc, inv.recv, st)
		}
		return
	}
	s.watchCapped(s.callArg(c, site.fn, inv.off, site.obj, ps), nc, st)
}

// callArg is the node a call passes for parameter i (i >= off), or the
// parameter's node where a splat or a default gives it.
func (s *solver) callArg(c *constraint, f *index.Function, off, i int, ps []NID) NID {
	if i >= off {
		if n, how := s.argFor(c, f, off, i); how == argFound {
			return n
		}
	}
	return ps[i]
}

// setterInBody makes a site's store once in the body, on the parameters'
// nodes under a computed name (the store before this summary).
func (s *solver) setterInBody(site *setterSite) {
	if site.get {
		return // the body's read is made as it is
	}
	ps := s.paramNodes(site.fn)
	val := site.val
	if site.arg >= 0 {
		val = ps[site.arg]
	}
	attr := "*"
	if site.attr != "" {
		attr = site.attr
	}
	nc := s.newCons(constraint{kind: cStore, owner: site.fn, site: site.call, attr: attr, src: val})
	s.watchCapped(ps[site.obj], nc, site.st)
}

// setterGeneric: f's parameters take values that no call's arguments hold;
// its setattr sites store on its parameters' nodes too.
func (s *solver) setterGeneric(f *index.Function) {
	if !s.setters.cands[f] || s.setters.generic[f] {
		return
	}
	if s.setters.generic == nil {
		s.setters.generic = map[*index.Function]bool{}
	}
	s.setters.generic[f] = true
	for _, site := range s.setters.armed[f] {
		s.setterInBody(site)
	}
}

// setterSeeds is a seeding step (Analyze): a candidate function that no
// call reached, whose parameters only seeds can fill, stores in its body.
// It reports how many functions it turned.
func (s *solver) setterSeeds() int {
	var fs []*index.Function
	for f, sites := range s.setters.armed {
		if len(s.setters.invs[f]) > 0 || s.setters.generic[f] {
			continue
		}
		for _, site := range sites {
			if !site.get {
				fs = append(fs, f)
				break
			}
		}
	}
	// In source order: the order constraints are made in is the order
	// values reach nodes, which the widening depends on.
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].File.Path != fs[j].File.Path {
			return fs[i].File.Path < fs[j].File.Path
		}
		return fs[i].Def.Start < fs[j].Def.Start
	})
	for _, f := range fs {
		s.setterGeneric(f)
	}
	return len(fs)
}
