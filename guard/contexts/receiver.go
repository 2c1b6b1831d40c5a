package contexts

import (
	"slices"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Receivers along a chain. The call graph has one set of edges a function,
// whatever object it runs on: an inherited method that two subclasses call
// (`ImplBase.prepare`, reached from the decode wrapper's replay prep and
// from the prefill wrapper's constructor) has, at its call through
// `self.impl.plan(...)`, an edge to each op any subclass keeps there. On a
// chain that entered the method through `self.prepare()` in the decode
// wrapper, self is a decode wrapper, whose `impl` (one abstract object a
// class: flow.Graph.InstanceField) holds the decode op only, so the edge to
// the prefill op's `plan` is no step of that chain.
//
// An item carries the classes its method's self may be of (item.recv; nil
// when nothing narrows them: the method's class and every subclass). A
// call through `self.m(...)` keeps the classes that run the callee as m
// (runsAs: their MRO finds it, or a class on it holds it in its class
// field, patched in from outside), and drops the edge when none does (an
// override of a subclass the receiver is not); `super().m(...)` keeps the
// same object; a call through `self.a.m(...)` on a resolved edge takes
// the classes of the instances the receivers' `a` holds whose m is the
// callee, and drops the edge when none is (where every receiver's `a` is
// an instance field made of project instances only: a class attribute, a
// property, an outside object or an empty field narrows nothing). A solve
// past its fact budget narrows nothing through fields: a field may have
// been cut short.

// maxRecvKeys bounds how many receiver sets a function is expanded with in
// one context; past it a chain goes on unnarrowed.
const maxRecvKeys = 8

// methodRecv are the classes self may be of in method fn, unnarrowed: its
// class and every subclass (nil for a function with no self). A subclass
// whose MRO resolves fn's name to an override still runs fn, through
// `super().name(...)`.
func (a *analyser) methodRecv(fn *index.Function) []*index.Class {
	if fn == nil || fn.Class == nil || fn.Self() == "" || fn.ClassMethod || fn.Kind != index.Def {
		return nil
	}
	if r, ok := a.recvMemo[fn]; ok {
		return r
	}
	h := a.g.H
	out := []*index.Class{fn.Class}
	out = append(out, h.Subclasses(fn.Class)...)
	if a.recvMemo == nil {
		a.recvMemo = map[*index.Function][]*index.Class{}
	}
	a.recvMemo[fn] = out
	return out
}

// recvSet is a narrowed receiver set and its name for the propagation's
// seen set, made once (canonRecv); the zero value is unnarrowed.
type recvSet struct {
	cls []*index.Class
	key string
}

// recvKey names a receiver set for the propagation's seen set ("" for
// unnarrowed).
func recvKey(r []*index.Class) string {
	if r == nil {
		return ""
	}
	names := make([]string, len(r))
	for i, c := range r {
		names[i] = c.File.Path + ":" + c.Qual
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

// selfRebound: fn binds its self parameter again somewhere in its body.
func (a *analyser) selfRebound(fn *index.Function) bool {
	if v, ok := a.selfMemo[fn]; ok {
		return v
	}
	self, src := fn.Self(), fn.File.Src
	rebound := false
	if fn.Body != nil {
		syntax.Walk(fn.Body, func(n *Node) bool {
			if rebound || n.Kind() == "function_definition" || n.Kind() == "class_definition" || n.Kind() == "lambda" {
				return false
			}
			switch n.Kind() {
			case "assignment", "augmented_assignment", "for_statement", "named_expression":
				for _, f := range []string{"left", "name"} {
					if l := n.Get(f); l != nil && bindsName(l, self, src) {
						rebound = true
					}
				}
			case "as_pattern":
				if l := n.Get("alias"); l != nil && bindsName(l, self, src) {
					rebound = true
				}
			}
			return !rebound
		})
	}
	if a.selfMemo == nil {
		a.selfMemo = map[*index.Function]bool{}
	}
	a.selfMemo[fn] = rebound
	return rebound
}

// bindsName: binding target t binds the name itself (`self = ...`,
// `a, self = ...`), not an attribute or item of what it holds.
func bindsName(t *Node, name string, src []byte) bool {
	t = syntax.Unparen(t)
	switch {
	case t == nil:
		return false
	case t.Kind() == "identifier":
		return t.Text(src) == name
	case t.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list", "list_splat_pattern", "as_pattern_target"):
		for _, c := range t.NamedChildren() {
			if bindsName(c, name, src) {
				return true
			}
		}
	}
	return false
}

// calleeRecv is what the chain of item it knows of e.Callee's self, and
// whether e is a step of that chain at all (false: the edge runs only for
// receivers the chain's self is not).
func (a *analyser) calleeRecv(it *item, e flow.Edge) (recvSet, bool) {
	if it.recv.cls != nil {
		return a.calleeRecv1(it, e)
	}
	// Unnarrowed chains ask the same edges again and again.
	k := recvEdge{e.Site, it.fn, e.Callee}
	if r, ok := a.recvEdges[k]; ok {
		return r.recv, r.ok
	}
	recv, ok := a.calleeRecv1(it, e)
	if a.recvEdges == nil {
		a.recvEdges = map[recvEdge]recvAnswer{}
	}
	a.recvEdges[k] = recvAnswer{recv, ok}
	return recv, ok
}

type recvEdge struct {
	site           *Node
	caller, callee *index.Function
}

type recvAnswer struct {
	recv recvSet
	ok   bool
}

func (a *analyser) calleeRecv1(it *item, e flow.Edge) (recvSet, bool) {
	caller := it.fn
	if e.Site == nil || e.Site.Kind() != "call" || e.Kind == flow.Traced || e.Kind == flow.ByName {
		return recvSet{}, true
	}
	r := it.recv.cls
	if r == nil {
		r = a.methodRecv(caller)
	}
	if r == nil || a.selfRebound(caller) {
		return recvSet{}, true
	}
	fexpr := syntax.Unparen(e.Site.Get("function"))
	if fexpr == nil || fexpr.Kind() != "attribute" {
		return recvSet{}, true
	}
	src, self := caller.File.Src, caller.Self()
	m := fexpr.Get("attribute").Text(src)
	obj := syntax.Unparen(fexpr.Get("object"))
	callee := e.Callee
	h := a.g.H
	switch {
	case obj != nil && obj.Kind() == "call" && isSuperCall(obj, caller):
		// super().m(...): the same object, of the classes of r that
		// derive from the callee's.
		if callee.Class == nil || callee.Name != m {
			return recvSet{}, true
		}
		var out []*index.Class
		subs := h.Subclasses(callee.Class)
		for _, c := range r {
			if c == callee.Class || slices.Contains(subs, c) {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return recvSet{}, true
		}
		return a.canonRecv(callee, out), true
	case obj != nil && obj.Kind() == "identifier" && obj.Text(src) == self:
		// self.m(...): the classes of r whose m is the callee.
		if callee.Class == nil || callee.Name != m {
			return recvSet{}, true
		}
		var out []*index.Class
		for _, c := range r {
			if h.Lookup(c, m) == nil {
				return recvSet{}, true // an attribute the instance binds, not a method of its class
			}
			if a.runsAs(c, m, callee) {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return recvSet{}, false
		}
		return a.canonRecv(callee, out), true
	case obj != nil && obj.Kind() == "attribute" && e.Kind == flow.Resolved && a.g.Saturated == 0:
		base := syntax.Unparen(obj.Get("object"))
		if base == nil || base.Kind() != "identifier" || base.Text(src) != self || callee.Class == nil || callee.Name != m {
			return recvSet{}, true
		}
		attr := obj.Get("attribute").Text(src)
		held := map[*index.Class]bool{}
		for _, c := range r {
			if h.Has(c, attr) {
				return recvSet{}, true // a class attribute or property: read besides the instance's field
			}
			vals, ok := a.g.InstanceField(c, attr)
			if !ok || len(vals) == 0 {
				return recvSet{}, true
			}
			for _, v := range vals {
				if v.Kind != flow.VInst || v.Cls == nil {
					return recvSet{}, true
				}
				held[v.Cls] = true
			}
		}
		var out []*index.Class
		for c := range held {
			if a.runsAs(c, m, callee) {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return recvSet{}, false
		}
		return a.canonRecv(callee, out), true
	}
	return recvSet{}, true
}

// isSuperCall: call is `super()` or `super(C, self)` in fn.
func isSuperCall(call *Node, fn *index.Function) bool {
	f := syntax.Unparen(call.Get("function"))
	return f != nil && f.Kind() == "identifier" && f.Text(fn.File.Src) == "super" && !fn.File.Top.Locals["super"]
}

// runsAs: calling method m on an instance of c may run callee: c's MRO
// finds it, or a class on c's MRO had it stored under m from outside its
// body (`Base.step = patched_step`, a platform patch), which the solve
// keeps in the class object's field.
func (a *analyser) runsAs(c *index.Class, m string, callee *index.Function) bool {
	h := a.g.H
	if h.Lookup(c, m) == callee {
		return true
	}
	for _, k := range h.MRO(c) {
		vals, _ := a.g.ClassField(k, m)
		for _, v := range vals {
			if v.Fn == callee {
				return true
			}
		}
		if k.Methods[m] != nil || k.Defines[m] {
			return false // what the classes after it hold is shadowed
		}
	}
	return false
}

// canonRecv is r as a receiver set, unnarrowed where r is every class
// callee's self may be of (methodRecv).
func (a *analyser) canonRecv(callee *index.Function, r []*index.Class) recvSet {
	if all := a.methodRecv(callee); len(all) == len(r) {
		in := map[*index.Class]bool{}
		for _, c := range all {
			in[c] = true
		}
		same := true
		for _, c := range r {
			same = same && in[c]
		}
		if same {
			return recvSet{}
		}
	}
	return recvSet{cls: r, key: recvKey(r)}
}
