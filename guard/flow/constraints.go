package flow

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

type consKind uint8

const (
	cLoad      consKind = iota // dst = base.attr
	cStore                     // base.attr = src
	cCall                      // dst = callee(args)
	cElemLoad                  // dst = base[i]
	cElemStore                 // base[i] = src
	cIter                      // dst = the elements an iteration over base gives
	cMethod                    // a container method: base.name(args) -> dst
	cSuper                     // dst = super() for the self values of the watched node
	cType                      // dst = type(x)
	cEnter                     // with base as dst: base.__enter__()
	cInstOf                    // dst = an instance of the watched classes (except E as e)
	cSlice                     // dst = base[lo:hi]
	cSelfRet                   // dst = base, for nn.Module methods that return the module
	cKwSplat                   // f(**base): by key into f's parameters (kwspread.go); dst: every element's
)

// callArgs are a call site's evaluated arguments.
type callArgs struct {
	pos     []NID
	kw      []kwArg
	kwSplat []NID
	// more holds what only some positional arguments have (a splat, a
	// string literal, a constant's text), nil where none has any: most
	// calls, whose four more slices were a tenth of a large engine's
	// constraint memory. Read it through splat, lit and konst.
	more *posMore
}

// posMore is, by positional argument, whether it is a splat (`*xs`), its
// string literal's value with whether it is one, and its constText ("").
type posMore struct {
	splat  []bool
	lits   []string
	litOK  []bool
	consts []string
}

// splat says whether positional argument i is a splat (`*xs`).
func (a *callArgs) splat(i int) bool {
	return a.more != nil && i < len(a.more.splat) && a.more.splat[i]
}

// lit is positional argument i's string literal value, ok false when it
// is none.
func (a *callArgs) lit(i int) (string, bool) {
	if a.more == nil || i < 0 || i >= len(a.more.litOK) || !a.more.litOK[i] {
		return "", false
	}
	return a.more.lits[i], true
}

// konst is positional argument i's constText, "" for none.
func (a *callArgs) konst(i int) string {
	if a.more == nil || i < 0 || i >= len(a.more.consts) {
		return ""
	}
	return a.more.consts[i]
}

// addPos appends a positional argument: node n, whether it is a splat, its
// string literal value (ok) and its constText; more is made at the first
// argument that has any of them.
func (a *callArgs) addPos(n NID, splat bool, lit string, ok bool, konst string) {
	if a.more == nil && (splat || ok || konst != "") {
		k := len(a.pos)
		a.more = &posMore{splat: make([]bool, k, k+1), lits: make([]string, k, k+1), litOK: make([]bool, k, k+1), consts: make([]string, k, k+1)}
	}
	a.pos = append(a.pos, n)
	if m := a.more; m != nil {
		m.splat = append(m.splat, splat)
		m.lits = append(m.lits, lit)
		m.litOK = append(m.litOK, ok)
		m.consts = append(m.consts, konst)
	}
}

type kwArg struct {
	name  string
	n     NID
	konst string // constText of the value, or ""
}

type constraint struct {
	owner *index.Function // the function the code runs in (the caller)
	site  *syntax.Node
	attr  string
	args  *callArgs
	cls   *index.Class // cSuper: the class whose method calls super()
	// pre are arguments put before args (a partial's bound ones; nil for
	// none, as on most calls: prepended).
	pre      *[]NID
	src, dst NID
	// recvNode is a method call's receiver node (for the name fallback).
	recvNode NID
	// lo, hi: cSlice's bounds (hi < 0: open).
	lo, hi int32
	// attrID is attr's interned id plus one, 0 until asked (solver.attrID).
	attrID int32
	// root is the constraint a derived constraint (a call through a
	// partial or an nn.Sequential, an except clause's tuple) came from,
	// plus one (0: none): each value is expanded once a root. A partial of
	// itself (`fn = partial(fn, x)` in a loop) would otherwise derive
	// constraints without end.
	root int32
	kind consKind
	// raise: `raise E` calls E only when it is a class.
	raise bool
	// fnOnly: only functions and bound methods are called (map's
	// arguments: a list is not a callable).
	fnOnly bool
	// deco: the call applies a decorator at a decoration site (a
	// summarized project decorator is applied, not called: wrapdeco.go).
	deco bool
}

// prepended are the arguments put before c's own (a partial's bound
// ones), nil for none.
func (c *constraint) prepended() []NID {
	if c.pre == nil {
		return nil
	}
	return *c.pre
}

// rootOf is the constraint ci's derived chain started from.
func (s *solver) rootOf(ci int32) int32 {
	if r := s.cons.at(ci).root; r > 0 {
		return r - 1
	}
	return ci
}

// fire runs constraint ci for a value that arrived at its node.
func (s *solver) fire(ci int32, v VID, st uint8) {
	c := s.cons.at(ci)
	switch c.kind {
	case cLoad:
		s.load(c, v, st)
	case cStore:
		s.store(c, v, st)
	case cCall:
		s.call(ci, v, st)
	case cElemLoad:
		s.elemLoad(c, v, st)
	case cElemStore:
		val := s.values[v]
		switch val.Kind {
		case VCont:
			s.storeElem(v, c.attr, c.src, st)
		case VInst:
			if m := s.h.Lookup(val.Cls, "__setitem__"); m != nil {
				s.recordCall(c.site, c.owner, m, st)
				s.bindReceiver(m, v, st)
				if ps := s.paramNodes(m); len(ps) >= 3 {
					s.copyTo(c.src, ps[2], st)
				}
			} else if sv, ok := s.storageOf(v, "__setitem__"); ok {
				s.storeElem(sv, c.attr, c.src, st)
			}
		}
	case cIter:
		s.iter(c, v, st)
	case cKwSplat:
		s.kwSpread(ci, v, st)
	case cMethod:
		s.contMethod(c, v, st)
	case cSuper:
		val := s.values[v]
		if val.Kind == VInst || val.Kind == VClass {
			s.add(c.dst, s.intern(Value{Kind: VSuper, Cls: c.cls, Recv: v}), st)
		}
	case cType:
		if val := s.values[v]; val.Kind == VInst {
			s.add(c.dst, s.class(val.Cls), st)
		}
	case cSelfRet:
		if val := s.values[v]; val.Kind == VInst && s.h.IsModule(val.Cls) && s.h.Lookup(val.Cls, c.attr) == nil {
			s.add(c.dst, v, st)
		}
	case cSlice:
		switch val := s.values[v]; val.Kind {
		case VCont:
			s.slice(c.site, v, int(c.lo), int(c.hi), c.dst, st)
		case VTensor:
			s.add(c.dst, v, st)
		case VInst:
			s.elemLoad(c, v, st)
		}
	case cInstOf:
		if val := s.values[v]; val.Kind == VClass {
			s.add(c.dst, s.inst(val.Cls), st)
		} else if val.Kind == VCont {
			// except (A, B) as e
			if !s.derive(bindKey{s.rootOf(ci), v}, st) {
				return
			}
			nc := s.newCons(constraint{kind: cInstOf, owner: c.owner, site: c.site, dst: c.dst, root: s.rootOf(ci) + 1})
			s.watchCapped(val.Elems, nc, st)
		}
	case cEnter:
		val := s.values[v]
		s.add(c.dst, v, st)
		if val.Kind == VInst {
			for _, name := range []string{"__enter__", "__exit__"} {
				if m := s.h.Lookup(val.Cls, name); m != nil {
					s.recordCall(c.site, c.owner, m, st)
					s.bindReceiver(m, v, st)
					if name == "__enter__" {
						s.copyTo(s.retFull(m), c.dst, st)
					}
				}
			}
		}
	}
}

// classHas: the class cls (or a class on its MRO) defines attr, or cls is
// a torch module and attr is one of nn.Module's own methods and tensors
// (torchapi.ModuleTensorAttrs).
func (s *solver) classHas(cls *index.Class, attr string) bool {
	if cls == nil {
		return false
	}
	return s.h.Has(cls, attr) || torchapi.ModuleTensorAttrs[attr] && s.h.IsModule(cls)
}

// load: dst = base.attr for one value of base.
func (s *solver) load(c *constraint, v VID, st uint8) {
	val := &s.values[v]
	attr := c.attr
	switch val.Kind {
	case VModule:
		if attr != "*" {
			if ch := val.Mod.Child(attr); ch != nil {
				s.add(c.dst, s.mod(ch), st)
			}
			s.copyTo(s.fieldID(v, s.attrID(c)), c.dst, st)
		} else {
			// getattr(module, name) of a name the analysis cannot read:
			// a guess among what was stored under computed names (as for
			// an instance, below), and among the members that the
			// project's dotted-name strings name (importstr.go).
			s.copyTo(s.fieldID(v, s.attrID(c)), c.dst, min(st, sName))
			s.namedMembers(val.Mod, c.dst, st)
		}
	case VClass:
		if attr == "*" {
			// getattr(cls, name) of a name the analysis cannot read: a
			// guess among what setattr(cls, name, v) stored.
			s.classAttr(val.Cls, s.attrID(c), attr, v, trClassBind, c, min(st, sName))
		} else {
			s.classAttr(val.Cls, s.attrID(c), attr, v, trClassBind, c, st)
		}
		if attr == "apply" && s.h.Lookup(val.Cls, "apply") == nil && s.h.Derives(val.Cls, "autograd.Function", "torch.autograd.function.Function") {
			// `Fn.apply(*args)` of a torch.autograd.Function runs
			// Fn.forward(ctx, *args): forward bound to a context object,
			// even though it is a static method.
			if fwd := s.h.Lookup(val.Cls, "forward"); fwd != nil {
				s.add(c.dst, s.intern(Value{Kind: VBound, Fn: fwd, Recv: s.extInst("torch.autograd.function.FunctionCtx"), Tag: tagApply}), st)
			}
		}
	case VInst:
		cls := val.Cls
		if attr == "*" {
			// getattr(obj, name) of a name the analysis cannot read: which
			// attribute it is, is a guess.
			s.copyTo(s.fieldID(v, s.attrID(c)), c.dst, min(st, sName))
		} else {
			s.copyTo(s.fieldID(v, s.attrID(c)), c.dst, st)
		}
		if attr != "*" && !s.classHas(cls, attr) {
			// What a store under a name the analysis cannot read put
			// there (setattr(obj, name, v), add_module(name, m)) may be
			// this attribute or any other: a guess, at name strength.
			// Not where the class itself defines the name (a method, a
			// class attribute, nn.Module's `to` or `forward`): the name
			// reads that, and a computed store that shadows it is a
			// guess against what resolves.
			s.copyTo(s.field(v, "*"), c.dst, min(st, sName))
		}
		s.classAttr(cls, s.attrID(c), attr, v, trInstBind, c, st)
	case VSuper:
		recv := s.values[val.Recv]
		tr := trInstBind
		if recv.Kind == VClass {
			tr = trClassBind
		}
		mro := s.h.MRO(recv.Cls)
		for i, k := range mro {
			if k == val.Cls {
				for _, after := range mro[i+1:] {
					s.addEdgeAt(s.fieldID(s.class(after), s.attrID(c)), c.dst, edge{tr: tr, cap: st, recv: val.Recv}, c.owner, nil)
					if after.Defines[attr] {
						break
					}
				}
				break
			}
		}
	case VExt:
		if strings.HasSuffix(val.Ext, ".*") {
			// A summary's attributes are its own (extSummary).
			s.add(c.dst, v, st)
		} else if !torchapi.NoSuchAttr(val.Ext, attr) && s.deriveExt(c, val.Ext, attr) {
			// A dtype's attributes are known: `torch.float32.submodules`
			// (a dtype where a config was expected, by mixing) is nothing.
			s.add(c.dst, s.ext(val.Ext+"."+attr), st)
		}
	case VTensor:
		// A tensor's metadata (`x.shape`, `x.dtype`, and what `x.size()`
		// or `x.numel()` returns) is host data, no tensor: a size
		// unpacked from it (`rows, _ = x.size()`) reads no device memory.
		if !torchapi.MetaAttrs[attr] && !torchapi.MetaMethods[attr] {
			s.add(c.dst, v, st)
		}
	case VFunc, VBound:
		s.copyTo(s.field(v, attr), c.dst, st)
	case VExtInst:
		if _, ok := torchapi.OpRegistration[val.Ext+"."+attr]; ok {
			s.add(c.dst, s.ext(val.Ext+"."+attr), st) // lib.impl(name, fn, key)
		}
		if strings.HasPrefix(val.Ext, "torch.nn.") && torchapi.ModuleTensorAttrs[attr] {
			// A torch module's weights and the methods that compute or
			// give tensors.
			s.add(c.dst, s.tensor, st)
		}
	}
}

// classAttr reads attr along class k's MRO, stopping at the class that
// defines it.
func (s *solver) classAttr(k *index.Class, id int32, attr string, recv VID, tr transform, c *constraint, st uint8) {
	dst, owner, site := c.dst, c.owner, c.site
	for _, m := range s.h.MRO(k) {
		s.addEdgeAt(s.fieldID(s.class(m), id), dst, edge{tr: tr, cap: st, recv: recv}, owner, site)
		if m.Defines[attr] {
			return
		}
	}
}

func (s *solver) store(c *constraint, v VID, st uint8) {
	switch s.values[v].Kind {
	case VInst, VClass, VModule, VFunc:
		s.copyTo(c.src, s.fieldID(v, s.attrID(c)), st)
	}
}

func (s *solver) elemLoad(c *constraint, v VID, st uint8) {
	val := s.values[v]
	switch val.Kind {
	case VCont:
		s.readKey(v, c.attr, c.dst, st)
	case VInst:
		if m := s.h.Lookup(val.Cls, "__getitem__"); m != nil {
			s.recordCall(c.site, c.owner, m, st)
			s.bindReceiver(m, v, st)
			s.copyTo(s.retFull(m), c.dst, st)
			s.getterKey(c, m, v, st)
		} else if sv, ok := s.storageOf(v, "__getitem__"); ok {
			s.readKey(sv, c.attr, c.dst, st)
		}
	case VTensor, VKernel:
		s.add(c.dst, v, st)
	}
}

// iter: the elements an iteration over one value gives (__iter__ and
// __next__ for project classes).
func (s *solver) iter(c *constraint, v VID, st uint8) {
	val := s.values[v]
	switch val.Kind {
	case VCont:
		s.copyTo(val.Elems, c.dst, st)
	case VTensor:
		s.add(c.dst, v, st)
	case VInst:
		iterM, nextM, getM := s.h.Lookup(val.Cls, "__iter__"), s.h.Lookup(val.Cls, "__next__"), s.h.Lookup(val.Cls, "__getitem__")
		first := c.attr != "next" // an iteration, not __next__ on what __iter__ returned
		if iterM != nil && first {
			s.recordCall(c.site, c.owner, iterM, st)
			s.bindReceiver(iterM, v, st)
			// What __iter__ returns is iterated with __next__ (or is a
			// generator's container), no more strongly than the
			// iterated value is known.
			nc := s.newCons(constraint{kind: cIter, owner: c.owner, site: c.site, dst: c.dst, attr: "next"})
			s.watchCapped(s.retFull(iterM), nc, st)
		}
		if nextM != nil && (!first || iterM == nil) {
			s.recordCall(c.site, c.owner, nextM, st)
			s.bindReceiver(nextM, v, st)
			s.copyTo(s.retFull(nextM), c.dst, st)
		}
		if !first || iterM != nil || nextM != nil {
			return
		}
		if getM != nil {
			s.recordCall(c.site, c.owner, getM, st)
			s.bindReceiver(getM, v, st)
			s.copyTo(s.retFull(getM), c.dst, st)
		} else if sv, ok := s.storage(val.Cls); ok {
			// A builtin container's project subclass (storage.go).
			s.copyTo(s.values[sv].Elems, c.dst, st)
		}
	}
}

// contMethod: a container method called on one value of the receiver.
func (s *solver) contMethod(c *constraint, v VID, st uint8) {
	if sv, ok := s.storageOf(v, c.attr); ok {
		// The builtin's method on an instance of a project subclass
		// (storage.go), or through super() in an override.
		v = sv
	}
	val := s.values[v]
	if val.Kind != VCont {
		return
	}
	a := c.args
	arg := func(i int) NID {
		if i < len(a.pos) {
			return a.pos[i]
		}
		return noNode
	}
	litKey := ""
	if l, ok := a.lit(0); ok {
		litKey = "'" + l
	}
	switch c.attr {
	case "__setitem__":
		// d.__setitem__(k, v), super().__setitem__(k, v) in an override.
		key := a.konst(0) // the key's constant (constText), or none
		s.storeElem(v, key, arg(1), st)
		return
	case "setdefault":
		if litKey != "" {
			// d.setdefault("k", v): under that key (kwspread.go).
			s.putKey(v, litKey, arg(1), st)
			s.readKey(v, litKey, c.dst, st)
			return
		}
	case "update":
		if s.keys[v] != nil && s.keys[v].dict {
			// d.update(e, k=v): key by key (kwspread.go).
			for _, p := range a.pos {
				s.spreadInto(c.owner, c.site, v, p, st)
			}
			for _, k := range a.kw {
				s.putKey(v, "'"+k.name, k.n, st)
			}
			return
		}
	}
	var w NID // where the call puts elements in: under no constant key
	switch c.attr {
	case "append", "add", "appendleft", "put", "put_nowait", "insert", "extend", "update", "extendleft", "union", "__ior__", "setdefault":
		w = s.looseElems(v)
	}
	switch c.attr {
	case "append", "add", "appendleft", "put", "put_nowait":
		if len(a.pos) > 0 {
			s.copyTo(a.pos[len(a.pos)-1], w, st)
		}
	case "insert":
		s.copyTo(arg(1), w, st)
	case "extend", "update", "extendleft", "union", "__ior__":
		for _, p := range a.pos {
			s.elemsInto(c, p, w, st)
		}
		for _, k := range a.kw {
			s.copyTo(k.n, w, st)
		}
	case "setdefault":
		s.copyTo(arg(1), w, st)
		s.copyTo(val.Elems, c.dst, st)
	case "get", "pop", "popitem", "popleft", "get_nowait", "__getitem__":
		if (c.attr == "get" || c.attr == "pop" || c.attr == "__getitem__") && litKey != "" {
			// d.get("k"): that key only, while d is key-sensitive.
			s.readKey(v, litKey, c.dst, st)
		} else {
			s.copyTo(val.Elems, c.dst, st)
		}
		if c.attr == "get" || c.attr == "pop" {
			// The default comes back as it is: a function that returns
			// `self._dict.get(key, default)` passes its parameter through
			// (passthru.go), each call getting its own default.
			s.passOn(c, arg(1), c.dst, st)
		}
	case "values", "copy", "__iter__":
		s.add(c.dst, v, st)
	case "items":
		it := s.cont(c.site, tagPlain)
		tup := s.cont(c.site.Parent(), tagPlain)
		s.copyTo(val.Elems, s.values[tup].Elems, st)
		s.add(s.values[it].Elems, tup, st)
		s.add(c.dst, it, st)
	}
}

// elemsInto sends the elements of what node n holds into dst, no more
// strongly than st (the strength the container written into is known at).
func (s *solver) elemsInto(c *constraint, n, dst NID, st uint8) {
	if n < 0 {
		return
	}
	nc := s.newCons(constraint{kind: cIter, owner: c.owner, site: c.site, dst: dst})
	s.watchCapped(n, nc, st)
}

// call: one callee value arrived at a call site.
func (s *solver) call(ci int32, v VID, st uint8) {
	c := s.cons.at(ci)
	val := s.values[v]
	if s.wrapperCall(c) {
		// Its edges only: a capture region in the wrapper captures every
		// function it wraps (contexts reads Callees), but no context or
		// value flows through it (Out, In and the return leave it out).
		switch val.Kind {
		case VFunc, VBound:
			s.recordCall(c.site, c.owner, val.Fn, st)
		case VInst:
			m := s.h.Lookup(val.Cls, "__call__")
			if m == nil && s.h.IsModule(val.Cls) {
				m = s.h.Lookup(val.Cls, "forward")
			}
			s.recordCall(c.site, c.owner, m, st)
		}
		return
	}
	if c.raise && val.Kind != VClass || c.fnOnly && val.Kind != VFunc && val.Kind != VBound && val.Kind != VPartial {
		return
	}
	switch val.Kind {
	case VFunc:
		if c.applies() {
			if sum := s.decoratorSummary(val.Fn); sum.ok && sum.param == 0 {
				s.applyDecorator(ci, val.Fn, sum, noVID, st)
				return
			}
		}
		if s.refuses(c, val.Fn, 0) {
			return
		}
		s.invoke(ci, val.Fn, noVID, v, st)
	case VBound:
		recv := val.Recv
		if val.Fn.Static && val.Tag != tagApply {
			recv = noVID
		}
		if recv != noVID && c.deco {
			// `@registry.register`: a method applied as a decorator, at a
			// decoration site only (an ordinary call of a method that
			// returns its argument is invoked).
			if sum := s.decoratorSummary(val.Fn); sum.ok && sum.param == 1 {
				s.applyDecorator(ci, val.Fn, sum, recv, st)
				return
			}
		}
		off := 0
		if recv != noVID {
			off = 1
		}
		if s.refuses(c, val.Fn, off) {
			return
		}
		s.invoke(ci, val.Fn, recv, v, st)
	case VClass:
		k := val.Cls
		if nw := s.h.Lookup(k, "__new__"); nw != nil {
			// C(...) runs C.__new__(C, ...), a static method taking the
			// class: its result is what __new__ returns. Only a __new__
			// that makes its own instance (super().__new__(cls)) gives a C,
			// which Python then passes to __init__.
			s.invoke(ci, nw, v, v, st)
			if !s.newMakesInstance(nw) {
				return
			}
		}
		i := s.inst(k)
		s.made[k] = true
		s.add(c.dst, i, st)
		if m := s.h.Lookup(k, "__init__"); m != nil {
			s.invoke(ci, m, i, v, st)
		} else {
			s.recordSynthetic(c, k, i, st)
			s.fillStorage(c, i, st)
		}
	case VInst:
		k := val.Cls
		m := s.h.Lookup(k, "__call__")
		if m == nil && s.h.IsModule(k) {
			m = s.h.Lookup(k, "forward")
		}
		if m != nil {
			if c.deco {
				// `@Profile("step")`: a decorator object's __call__.
				if sum := s.decoratorSummary(m); sum.ok && sum.param == 1 {
					s.applyDecorator(ci, m, sum, v, st)
					return
				}
			}
			if !s.refuses(c, m, 1) {
				s.invoke(ci, m, v, v, st)
			}
		}
	case VPartial:
		if !s.derive(bindKey{s.rootOf(ci), v}, st) {
			return
		}
		pre := append(append([]NID{}, val.Args...), c.prepended()...)
		nc := s.newCons(constraint{kind: cCall, owner: c.owner, site: c.site, dst: c.dst, args: c.args, pre: &pre, recvNode: noNode, root: s.rootOf(ci) + 1})
		s.watchCapped(val.Elems, nc, st)
	case VCont:
		if val.Tag == tagSequential {
			if !s.derive(bindKey{s.rootOf(ci), v}, st) {
				return
			}
			nc := s.newCons(constraint{kind: cCall, owner: c.owner, site: c.site, dst: c.dst, args: c.args, pre: c.pre, recvNode: noNode, root: s.rootOf(ci) + 1})
			s.watchCapped(val.Elems, nc, st)
		}
	case VExt:
		s.external(ci, val.Ext, st)
	case VTensor:
		s.add(c.dst, s.tensor, st)
	case VExtInst:
		if strings.HasPrefix(val.Ext, "torch.nn.") {
			s.add(c.dst, s.tensor, st)
		}
	}
}

// derive says whether a constraint derived from constraint key.c for
// value key.callee (a call through a partial or an nn.Sequential, an
// except clause's tuple: the watch of its function node or its elements)
// is to be made at strength st: when none was, or only at a weaker one.
// The first firing's was kept, so a value that reached the call weakly
// first (through a receiver seeded from the class hierarchy) and strongly
// later stayed weak, and which came first followed the order the files
// were built in. The weaker watch stays; the stronger one's facts win.
func (s *solver) derive(key bindKey, st uint8) bool { return stronger(s.bound, key, st) }

// stronger records st for key in made and says whether it is stronger
// than what was recorded there (nothing: 0): whether a derived constraint
// is to be made (again) at st.
func stronger[K comparable](made map[K]uint8, key K, st uint8) bool {
	if made[key] >= st {
		return false
	}
	made[key] = st
	return true
}

// watchCapped watches node n with constraint c, the values it sees capped
// at st (a call through a weakly known partial is no stronger).
func (s *solver) watchCapped(n NID, c int32, st uint8) {
	if st >= sResolved {
		s.watch(n, c)
		return
	}
	m := s.newNode()
	s.copyTo(n, m, st)
	s.watch(m, c)
}

const noVID VID = -1

// invoke calls function f from constraint ci: records the edge, binds the
// receiver (when recv is set) and the arguments, and returns its result.
func (s *solver) invoke(ci int32, f *index.Function, recv VID, callee VID, st uint8) {
	c := s.cons.at(ci)
	s.recordCall(c.site, c.owner, f, st)
	// Invoked again at a stronger strength, it re-sends through the capped
	// edges below, which addEdge upgrades.
	ps := s.paramNodes(f)
	off := 0
	if recv != noVID && len(ps) > 0 {
		s.add(ps[0], recv, st)
		off = 1
	}
	s.bindArgs(c, f, ps, off, st)
	s.returnsInto(c, f, off, c.dst, st)
	s.passesInto(ci, f, off, recv, c.dst, st)
	s.settersInto(ci, f, off, recv, st)
}

// bindArgs sends a call's arguments into f's parameters from index off.
func (s *solver) bindArgs(c *constraint, f *index.Function, ps []NID, off int, st uint8) {
	a := c.args
	if a == nil {
		a = &callArgs{}
	}
	var varargs, varkw NID = noNode, noNode
	var positional []int // parameter indexes that take positional arguments
	byName := map[string]int{}
	for i, p := range f.Params {
		if i < off {
			continue
		}
		switch p.Kind {
		case index.VarArgs:
			varargs = ps[i]
		case index.VarKw:
			varkw = ps[i]
		case index.KwOnly:
			byName[p.Name] = i
		case index.PosOnly:
			positional = append(positional, i)
		default:
			positional = append(positional, i)
			byName[p.Name] = i
		}
	}
	args := append(append([]NID{}, c.prepended()...), a.pos...)
	pre := len(c.prepended())
	pi := 0
	for i, n := range args {
		if i >= pre && a.splat(i-pre) {
			// f(*xs): its elements may go to every remaining positional
			// parameter and to *args.
			for _, j := range positional[min(pi, len(positional)):] {
				s.elemsIntoCapped(c, n, s.argDst(f, ps, j), st)
			}
			if varargs >= 0 {
				s.elemsIntoCapped(c, n, s.elems(varargs), st)
			}
			pi = len(positional)
			continue
		}
		if pi < len(positional) {
			s.copyTo(n, s.argDst(f, ps, positional[pi]), st)
			pi++
		} else if varargs >= 0 {
			s.copyTo(n, s.elems(varargs), st)
		}
	}
	for _, k := range a.kw {
		if j, ok := byName[k.name]; ok {
			s.copyTo(k.n, s.argDst(f, ps, j), st)
		} else if varkw >= 0 {
			// Under its name (kwspread.go).
			if kw := s.contOf(varkw); kw != noVID {
				s.putKey(kw, "'"+k.name, k.n, st)
			}
		}
	}
	for _, n := range a.kwSplat {
		s.spreadKw(c, f, ps, byName, varkw, n, st)
	}
}

// argDst is the node an argument for f's parameter j goes to: the
// parameter's, or for a method's self (`C.m(x)`, `fn = C.m; fn(x)`,
// `fn(*xs)`) a node whose values pass into self only when they can be
// one (selfOK).
func (s *solver) argDst(f *index.Function, ps []NID, j int) NID {
	if j != 0 || !selfParam(f) {
		return ps[j]
	}
	if n, ok := s.selfIn[f]; ok {
		return n
	}
	n := s.newNode()
	if s.selfIn == nil {
		s.selfIn = map[*index.Function]NID{}
	}
	s.selfIn[f] = n
	s.addEdge(n, ps[0], edge{tr: trSelf, recv: s.class(f.Class)})
	return n
}

// selfParam says whether f's first parameter is the receiver of a
// method (self, or cls for a classmethod).
func selfParam(f *index.Function) bool {
	return f.Class != nil && !f.Static && len(f.Params) > 0 && f.Params[0].Kind != index.VarArgs && f.Kind != index.Lambda
}

// selfOK says whether value v can be the receiver of a method of class k
// passed as an ordinary argument (an unbound method called with its
// receiver first): an instance of k or of a subclass, such a class (a
// classmethod's cls, or any class when k is a metaclass), a tensor for a
// tensor subclass. Anything else reaches the method's self only when a
// call through a node that mixes unrelated functions (a registry of
// classes, a callee every implementation of one name shares) passes its
// first argument to each of them: letting it through made every such
// method's self, and from there every attribute read on self, hold the
// values of the whole program (on an engine of 190k lines, 600 values in
// 15,000 nodes, past the fact budget).
func (s *solver) selfOK(k *index.Class, v VID) bool {
	val := &s.values[v]
	switch val.Kind {
	case VInst:
		return s.isSubclass(val.Cls, k)
	case VClass:
		return s.isSubclass(val.Cls, k) || s.h.Derives(k, "type")
	case VTensor:
		return s.h.Derives(k, "Tensor")
	}
	return false
}

func (s *solver) elemsIntoCapped(c *constraint, n, dst NID, st uint8) {
	if n < 0 {
		return
	}
	nc := s.newCons(constraint{kind: cIter, owner: c.owner, site: c.site, dst: dst})
	s.watchCapped(n, nc, st)
}

// elems is the elements node of the container a *args or **kwargs
// parameter holds (contOf), or noNode.
func (s *solver) elems(param NID) NID {
	if v := s.contOf(param); v != noVID {
		return s.values[v].Elems
	}
	return noNode
}

// contOf is the container a `*args` or `**kwargs` parameter holds, or
// noVID.
func (s *solver) contOf(param NID) VID {
	out := noVID
	s.nodes.at(param).pts.each(func(v VID, _ uint8) {
		if out == noVID && s.values[v].Kind == VCont {
			out = v
		}
	})
	return out
}

// recordSynthetic handles a constructor call of a class without a project
// __init__ (a dataclass, a NamedTuple): keyword arguments set the fields
// of the same names, positional ones the annotated fields in order.
func (s *solver) recordSynthetic(c *constraint, k *index.Class, inst VID, st uint8) {
	if c.args == nil {
		return
	}
	for _, kw := range c.args.kw {
		s.copyTo(kw.n, s.field(inst, kw.name), st)
	}
	fields := classFields(k)
	for i, n := range c.args.pos {
		if i < len(fields) && !c.args.splat(i) {
			s.copyTo(n, s.field(inst, fields[i]), st)
		}
	}
	for _, n := range c.args.kwSplat {
		s.spreadFields(c.owner, c.site, inst, fields, n, st)
	}
}

// classFields are the annotated class-level names of k and its bases, in
// definition order (a dataclass's fields).
func classFields(k *index.Class) []string {
	var out []string
	if k.Node == nil {
		return nil
	}
	body := k.Node.Get("body")
	if body == nil {
		return nil
	}
	for _, st := range body.NamedChildren() {
		if st.Kind() != "expression_statement" {
			continue
		}
		for _, a := range st.NamedChildren() {
			if a.Kind() == "assignment" && a.Get("type") != nil {
				if l := a.Get("left"); l != nil && l.Kind() == "identifier" {
					out = append(out, l.Text(k.File.Src))
				}
			}
		}
	}
	return out
}

// newMakesInstance says whether a __new__ makes an instance of the class
// it is given: it calls some `__new__` itself (`super().__new__(cls)`,
// `object.__new__(cls)`). One that only returns what a factory made
// (`return impl_cls(**kw)`) does not.
func (s *solver) newMakesInstance(f *index.Function) bool {
	if v, ok := s.newMakes[f]; ok {
		return v
	}
	src := f.File.Src
	found := false
	syntax.Walk(f.Body, func(n *Node) bool {
		if found {
			return false
		}
		if n.Kind() == "call" {
			if fn := syntax.Unparen(n.Get("function")); fn != nil && fn.Kind() == "attribute" && fn.Get("attribute").Text(src) == "__new__" {
				found = true
				return false
			}
		}
		return true
	})
	s.newMakes[f] = found
	return found
}

// maxExtPerSite bounds the external names one attribute read derives. A
// read whose receiver holds many external values (a test's dispatcher over
// every torch op, a config value that a computed setattr mixed into every
// field) would otherwise make a new name of each, and reads in a loop a new
// name of each of those (`torch.float32.dtype.device.dtype...`): on whole
// repositories that grew the points-to facts without bound.
const maxExtPerSite = 16

// deriveExt says whether the read of attr at c's site makes the external
// name ext.attr: not past 8 parts, not when attr is already in ext's
// attribute path (x.dtype.dtype, x.dtype.device.dtype), and not past
// maxExtPerSite names at one site.
func (s *solver) deriveExt(c *constraint, ext, attr string) bool {
	if strings.Count(ext, ".") >= 8 {
		return false
	}
	for rest := ext; ; {
		i := strings.LastIndexByte(rest, '.')
		if i < 0 {
			break
		}
		if rest[i+1:] == attr {
			return false
		}
		rest = rest[:i]
	}
	if n := s.extPerSite[c.site]; n >= maxExtPerSite {
		return false
	}
	s.extPerSite[c.site]++
	return true
}
