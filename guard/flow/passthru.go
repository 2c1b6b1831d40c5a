package flow

import (
	"github.com/cudagraph-capguard/capguard/guard/device"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Pass-through returns. A function that returns one of its parameters as
// it was given
//
//	def attach_meta(wrapped, original, meta=None):
//	    wrapped.meta = meta
//	    return wrapped
//
//	def api(func=None, *, meta=None):
//	    if func is None:
//	        return lambda f: attach_meta(f, f, meta=meta)
//	    return attach_meta(func, func, meta=meta)
//
//	def to(self, device):
//	    ...
//	    return self
//
// returns, at each call, what that call passed: context-insensitive flow
// would send every argument of every call to every caller (one logging
// decorator shared by a kernel library's public APIs made a call through
// one API reach 229 others, each edge `resolved`; an identity helper used
// on two wrappers gave each the other's kernels). A parameter returned as
// it is (directly, as a branch of a conditional expression, or as the
// argument of a call whose callee returns it as it is, found while
// solving) goes from each call's argument to that call's result; it does
// not enter the function's return node. A parameter is returned as it is
// only if the function never rebinds it; *args and **kwargs never are.
// Readers of a return without a call's arguments (a property getter,
// __enter__, __iter__, __getitem__) read retFull, which has them all.

// invocation is one call of a function whose pass-through parameters may
// still grow (mayPass): kept so that a parameter found later reaches it.
type invocation struct {
	ci   int32
	off  int
	recv VID
	dst  NID
	st   uint8
}

// passState is the solver's pass-through bookkeeping.
type passState struct {
	passes  map[*index.Function][]passEntry // parameters returned as they are
	mayPass map[*index.Function]bool        // returns a call that passes a parameter
	invs    map[*index.Function][]invocation
	retCall map[*syntax.Node]retCallInfo // a returned call, by site: its function
	fulls   map[*index.Function]NID
	rebinds map[*index.Function]map[string]bool
	work    []passItem
	busy    bool
}

type passItem struct {
	f *index.Function
	e passEntry
}

// passEntry is a parameter returned as it is, by a return under guard g
// (nil: unguarded; a call the guard does not admit does not get it). With
// elem >= 0, parameter i is *args and what is returned is its element elem,
// which a returned call forwards (`def read(self, *args): return
// read_dict(self.d, *args)` returns read_dict's pass-through `default`,
// args[2]); inner and innerI are that call's callee and parameter, whose
// node (every call's value) stands for the element where a call's splat
// hides it, and whose default where a call gives no such element.
type passEntry struct {
	i      int
	g      *retGuard
	elem   int
	inner  *index.Function
	innerI int
}

// retCallInfo is a returned call's function and the guard of its return.
type retCallInfo struct {
	fn *index.Function
	g  *retGuard
}

// returnValue adds one returned expression e of sc.fn (already evaluated
// to v): what is not a pass-through parameter goes to the return node
// (prepass found the pass-throughs).
func (s *solver) returnValue(sc scope, e *Node, v, target NID) {
	fn := sc.fn
	if fn == nil || fn.Kind == index.TopLevel || fn.Generator || sc.cls != nil {
		s.copyTo(v, target, sResolved)
		return
	}
	u := syntax.Unparen(e)
	if u != nil && u.Kind() == "conditional_expression" {
		if kids := u.NamedChildren(); len(kids) == 3 {
			for _, k := range []*Node{kids[0], kids[2]} {
				s.returnValue(sc, k, s.eval(sc, k), target)
			}
			return
		}
	}
	if s.passParam(fn, u) >= 0 {
		return
	}
	s.copyTo(v, target, sResolved)
}

// prepass finds, before any constraint is built (a call may be solved
// while the rest is still being built), the parameters each function
// returns as it is and the returned calls that pass one on.
func (s *solver) prepass(fn *index.Function) {
	if fn.Kind == index.TopLevel || fn.Generator || fn.Body == nil {
		return
	}
	if fn.Kind == index.Lambda {
		s.prepassExpr(fn, fn.Body, nil)
		return
	}
	syntax.Walk(fn.Body, func(n *Node) bool {
		switch n.Kind() {
		case "function_definition", "class_definition", "lambda":
			return false
		case "return_statement":
			if device.Dead(n, fn.Body, fn.File.Src, s.device) {
				return false
			}
			var gp *retGuard
			if g, ok := returnGuard(fn, n); ok {
				gp = &g
			}
			for _, e := range n.NamedChildren() {
				s.prepassExpr(fn, e, gp)
			}
			return false
		}
		return true
	})
}

func (s *solver) prepassExpr(fn *index.Function, e *Node, g *retGuard) {
	u := syntax.Unparen(e)
	if u == nil {
		return
	}
	if u.Kind() == "conditional_expression" {
		if kids := u.NamedChildren(); len(kids) == 3 {
			s.prepassExpr(fn, kids[0], g)
			s.prepassExpr(fn, kids[2], g)
			return
		}
	}
	if i := s.passParam(fn, u); i >= 0 {
		s.addPass(fn, passEntry{i: i, g: g, elem: -1})
		return
	}
	if u.Kind() == "call" && s.passesParam(fn, u) {
		if s.pass.retCall == nil {
			s.pass.retCall = map[*syntax.Node]retCallInfo{}
			s.pass.mayPass = map[*index.Function]bool{}
		}
		s.pass.retCall[u] = retCallInfo{fn, g}
		s.pass.mayPass[fn] = true
	}
}

// passParam is the index of the parameter e names, if fn may return it as
// it is; -1 otherwise.
func (s *solver) passParam(fn *index.Function, e *Node) int {
	e = syntax.Unparen(e)
	if e == nil || e.Kind() != "identifier" {
		return -1
	}
	name := e.Text(fn.File.Src)
	for i, p := range fn.Params {
		if p.Name == name {
			if !s.eligible(fn, i) {
				return -1
			}
			return i
		}
	}
	return -1
}

// eligible: fn may return its parameter i as it is (not *args or
// **kwargs, never rebound).
func (s *solver) eligible(fn *index.Function, i int) bool {
	p := fn.Params[i]
	return p.Kind != index.VarArgs && p.Kind != index.VarKw && !s.rebound(fn)[p.Name]
}

// passesParam: call site c passes a parameter of fn, as it is, as an
// argument.
func (s *solver) passesParam(fn *index.Function, c *Node) bool {
	args := c.Get("arguments")
	if args == nil || args.Kind() != "argument_list" {
		return false
	}
	for _, a := range args.NamedChildren() {
		if a.Kind() == "keyword_argument" {
			a = a.Get("value")
		}
		if s.passParam(fn, a) >= 0 {
			return true
		}
	}
	// `return read_dict(self.d, *args)`: the function's own *args, which
	// may forward a pass-through of the callee (forwardsSplat).
	return s.ownVarArgs(fn, c) >= 0
}

// rebound is the set of names fn's body binds (assignments, loop, with and
// except targets, walrus, del, imports) or an inner function declares
// nonlocal, memoized.
func (s *solver) rebound(fn *index.Function) map[string]bool {
	if m, ok := s.pass.rebinds[fn]; ok {
		return m
	}
	m := map[string]bool{}
	src := fn.File.Src
	names := func(n *Node) {
		for _, name := range index.TargetNames(n, src) {
			m[name] = true
		}
	}
	if fn.Body != nil {
		syntax.Walk(fn.Body, func(n *Node) bool {
			switch n.Kind() {
			case "function_definition", "class_definition":
				if d := n.Get("name"); d != nil {
					m[d.Text(src)] = true
				}
				return false
			case "lambda":
				return false
			case "assignment", "augmented_assignment", "for_statement", "for_in_clause":
				names(n.Get("left"))
			case "named_expression":
				names(n.Get("name"))
			case "as_pattern_target":
				names(n)
			case "delete_statement":
				for _, c := range n.NamedChildren() {
					names(c)
				}
			case "import_statement", "import_from_statement":
				syntax.Walk(n, func(x *Node) bool {
					if x.Kind() == "identifier" {
						m[x.Text(src)] = true
					}
					return true
				})
				return false
			}
			return true
		})
	}
	for _, g := range fn.File.Funcs {
		for o := g.Outer; o != nil; o = o.Outer {
			if o == fn {
				for name := range g.Nonlocals {
					m[name] = true
				}
				break
			}
		}
	}
	if s.pass.rebinds == nil {
		s.pass.rebinds = map[*index.Function]map[string]bool{}
	}
	s.pass.rebinds[fn] = m
	return m
}

// addPass makes parameter i of f a pass-through, and sends it to the
// calls of f seen so far (a worklist: one found while solving may make
// the function that returns the call a pass-through too).
func (s *solver) addPass(f *index.Function, e passEntry) {
	for _, x := range s.pass.passes[f] {
		if x == e {
			return
		}
	}
	if s.pass.passes == nil {
		s.pass.passes = map[*index.Function][]passEntry{}
	}
	s.pass.passes[f] = append(s.pass.passes[f], e)
	if full, ok := s.pass.fulls[f]; ok {
		s.copyTo(s.entryNode(f, e), full, sResolved)
	}
	s.pass.work = append(s.pass.work, passItem{f, e})
	if s.pass.busy {
		return
	}
	s.pass.busy = true
	for len(s.pass.work) > 0 {
		w := s.pass.work[len(s.pass.work)-1]
		s.pass.work = s.pass.work[:len(s.pass.work)-1]
		for k := 0; k < len(s.pass.invs[w.f]); k++ {
			inv := s.pass.invs[w.f][k]
			if s.admits(s.cons.at(inv.ci), w.f, inv.off, w.e.g) {
				s.passArg(inv.ci, w.f, inv.off, inv.recv, w.e, inv.dst, inv.st)
			}
		}
	}
	s.pass.busy = false
}

// passesInto sends f's pass-through parameters, as call ci passed them,
// to dst; a call of a function whose pass-throughs may still grow is kept.
func (s *solver) passesInto(ci int32, f *index.Function, off int, recv VID, dst NID, st uint8) {
	if s.pass.mayPass[f] {
		if s.pass.invs == nil {
			s.pass.invs = map[*index.Function][]invocation{}
		}
		s.pass.invs[f] = append(s.pass.invs[f], invocation{ci, off, recv, dst, st})
	}
	for _, e := range s.pass.passes[f] {
		if s.admits(s.cons.at(ci), f, off, e.g) {
			s.passArg(ci, f, off, recv, e, dst, st)
		}
	}
}

// passArg sends what call ci passed for parameter i of f to dst: the
// receiver, the argument, or (a splat, a default) the parameter's node.
// Where the call is returned by a function and passes that function's own
// pass-through parameter, that function returns it as it is too.
func (s *solver) passArg(ci int32, f *index.Function, off int, recv VID, e passEntry, dst NID, st uint8) {
	c := s.cons.at(ci)
	i := e.i
	if e.elem >= 0 {
		s.passElem(c, f, off, e, dst, st)
		return
	}
	if i < off {
		if recv != noVID {
			s.add(dst, recv, st)
		}
		return
	}
	n, how := s.argFor(c, f, off, i)
	switch how {
	case argUnknown:
		if s.forwardsSplat(c, f, off, i, dst) {
			return
		}
		s.copyTo(s.paramNodes(f)[i], dst, st)
		return
	case argAbsent:
		s.defaultInto(f, i, dst, st)
		return
	}
	s.passOn(c, n, dst, st)
}

// entryNode is the node that holds every value pass-through entry e of f
// returns: its parameter's, or for an element of *args, the forwarded
// callee parameter's.
func (s *solver) entryNode(f *index.Function, e passEntry) NID {
	if e.elem >= 0 {
		return s.paramNodes(e.inner)[e.innerI]
	}
	return s.paramNodes(f)[e.i]
}

// passElem sends what call c passed as element e.elem of f's *args (its
// parameter e.i) to dst: the argument, or where a splat hides it the
// forwarded callee parameter's node, or where the call has no such element
// that parameter's default.
func (s *solver) passElem(c *constraint, f *index.Function, off int, e passEntry, dst NID, st uint8) {
	j := e.i - off + e.elem
	if j < 0 {
		s.copyTo(s.entryNode(f, e), dst, st)
		return
	}
	switch n, how := posAt(c, j); how {
	case argFound:
		s.passOn(c, n, dst, st)
	case argUnknown:
		s.copyTo(s.entryNode(f, e), dst, st)
	default:
		s.defaultInto(e.inner, e.innerI, dst, st)
	}
}

// defaultInto sends parameter i of f's default, evaluated where f is
// defined, to dst (a call that gives the parameter nothing); none: the call
// raises.
func (s *solver) defaultInto(f *index.Function, i int, dst NID, st uint8) {
	if d := f.Params[i].Default; d != nil {
		outer := scope{fn: f.Outer}
		if f.Outer == nil {
			outer = scope{fn: f.File.Top}
		}
		s.copyTo(s.eval(outer, d), dst, st)
	}
}

// posAt is the node call c passes at index j of its prepended and
// positional arguments: found, absent (past its last), or unknown (a splat
// at or before it may give it).
func posAt(c *constraint, j int) (NID, argStatus) {
	if j < len(c.prepended()) {
		return c.prepended()[j], argFound
	}
	a := c.args
	if a == nil {
		a = &callArgs{}
	}
	k := j - len(c.prepended())
	for x := 0; x < len(a.pos) && x <= k; x++ {
		if a.splat(x) {
			return noNode, argUnknown
		}
	}
	if k >= len(a.pos) {
		return noNode, argAbsent
	}
	return a.pos[k], argFound
}

// forwardsSplat: call c, which the function it is in returns, passes f's
// parameter i (a pass-through of f) inside a splat of that function's own
// *args (`return read_dict(self.d, *args)`), the call's one splat: that
// function returns the element of its *args that lands on parameter i, as
// it is, and becomes a pass-through of it (addPass), instead of every
// call's value going to every caller.
func (s *solver) forwardsSplat(c *constraint, f *index.Function, off, i int, dst NID) bool {
	rc, ok := s.pass.retCall[c.site]
	if !ok || rc.fn != c.owner || dst != c.dst || c.args == nil || len(c.args.kwSplat) > 0 {
		return false
	}
	h := rc.fn
	p := f.Params[i]
	if p.Kind == index.KwOnly || p.Kind == index.VarArgs || p.Kind == index.VarKw {
		return false
	}
	for k := range c.args.kw {
		if c.args.kw[k].name == p.Name {
			return false
		}
	}
	splat := -1
	for x := range c.args.pos {
		if c.args.splat(x) {
			if splat >= 0 {
				return false
			}
			splat = x
		}
	}
	k := i - off - len(c.prepended())
	if splat < 0 || k < splat {
		return false
	}
	vi := s.ownVarArgs(h, c.site)
	if vi < 0 {
		return false
	}
	s.addPass(h, passEntry{i: vi, g: rc.g, elem: k - splat, inner: f, innerI: i})
	return true
}

// ownVarArgs is the index of h's *args parameter when call site's one
// positional splat is `*args` itself and h never rebinds it; -1 otherwise.
func (s *solver) ownVarArgs(h *index.Function, site *Node) int {
	args := site.Get("arguments")
	if args == nil {
		return -1
	}
	src := h.File.Src
	for _, a := range args.NamedChildren() {
		if a.Kind() != "list_splat" {
			continue
		}
		var id *Node
		for _, ch := range a.NamedChildren() {
			id = syntax.Unparen(ch)
		}
		if id == nil || id.Kind() != "identifier" {
			return -1
		}
		for j, p := range h.Params {
			if p.Kind == index.VarArgs && p.Name == id.Text(src) && !s.rebound(h)[p.Name] {
				return j
			}
		}
		return -1
	}
	return -1
}

// passOn sends argument node n of call c to dst, c's result. Where c is
// returned by the function it is in and n is that function's own
// pass-through parameter, that function returns it as it is too.
func (s *solver) passOn(c *constraint, n, dst NID, st uint8) {
	if rc, ok := s.pass.retCall[c.site]; ok && rc.fn == c.owner && dst == c.dst {
		h := rc.fn
		ps := s.paramNodes(h)
		for j := range ps {
			if ps[j] == n && s.eligible(h, j) {
				s.addPass(h, passEntry{i: j, g: rc.g, elem: -1})
				return
			}
		}
	}
	s.copyTo(n, dst, st)
}

// argFor is the node call c passes for parameter i of f (off parameters
// taken by the receiver): found, absent (the call gives it no value: its
// default), or unknown (a splat may give it).
func (s *solver) argFor(c *constraint, f *index.Function, off, i int) (NID, argStatus) {
	kw, j, how := argOf(c, f, off, i)
	switch {
	case how != argFound:
		return noNode, how
	case kw != nil:
		return kw.n, argFound
	case j < len(c.prepended()):
		return c.prepended()[j], argFound
	}
	return c.args.pos[j-len(c.prepended())], argFound
}

// argOf finds what call c passes for parameter i of f: a keyword argument,
// or the argument at index j of its prepended and positional arguments;
// how is argAbsent where it passes none, argUnknown where a splat may.
func argOf(c *constraint, f *index.Function, off, i int) (kw *kwArg, j int, how argStatus) {
	a := c.args
	if a == nil {
		a = &callArgs{}
	}
	p := f.Params[i]
	for k := range a.kw {
		if a.kw[k].name == p.Name && p.Kind != index.PosOnly {
			return &a.kw[k], -1, argFound
		}
	}
	if len(a.kwSplat) > 0 && p.Kind != index.PosOnly {
		return nil, -1, argUnknown
	}
	if p.Kind == index.KwOnly {
		return nil, -1, argAbsent
	}
	j = i - off
	if j < len(c.prepended()) {
		return nil, j, argFound
	}
	if _, how := posAt(c, j); how != argFound {
		return nil, -1, how
	}
	return nil, j, argFound
}

type argStatus uint8

const (
	argFound argStatus = iota
	argAbsent
	argUnknown
)

// retFull is f's return node with its pass-through parameters' nodes: for
// readers that have no call's arguments.
func (s *solver) retFull(f *index.Function) NID {
	if len(s.pass.passes[f]) == 0 && !s.pass.mayPass[f] {
		return s.ret(f)
	}
	if n, ok := s.pass.fulls[f]; ok {
		return n
	}
	n := s.newNode()
	if s.pass.fulls == nil {
		s.pass.fulls = map[*index.Function]NID{}
	}
	s.pass.fulls[f] = n
	s.copyTo(s.ret(f), n, sResolved)
	for _, e := range s.pass.passes[f] {
		s.copyTo(s.entryNode(f, e), n, sResolved)
	}
	return n
}
