package contexts

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Pruning the captured path before propagation (prune): code the captured
// calls provably never run is Excluded, like the negation of a capture
// guard, so it is not captured and its calls carry no captured context.
// The launchers' context (library mode) is pruned the same way with the
// constants its own roots' calls pass (Result.launcherExcl).
//
// Constant arguments. The capture call's own arguments switch branches
// off: `model(input_ids, cu_seqlen_prefill=None)`, or no `adapter_data`
// keyword so its default None applies, makes `if cu_seqlen_prefill is not
// None:` false in the captured forward. Each parameter of a captured
// function gets the join, over every captured call of it, of the constant
// the call passes (a literal, None, True/False, the parameter's literal
// default where the call leaves it out, or a caller's parameter that is
// itself constant): one constant where all agree, unknown where any call
// passes something else, where a root has no call site (a convention,
// an entry point), or where the call cannot be matched to the parameters
// (splats, a decorated or aliased callee). A condition over constant
// parameters (`p is None`, `p is not None`, `p`, `not p`, `p == K`, `and`,
// `or`) that is false makes its branch dead under capture; an early exit
// under a true one (`if p is None: return ...`) makes the rest dead, and
// the right operand of an `and` whose left is false (or of an `or` whose
// left is true) is never evaluated (`if debug and x.any():`). The
// constants are re-joined as dead branches turn live (a worklist to a
// fixpoint), and a parameter the function reassigns is unknown. Where only
// some captures skip a branch the parameter is unknown and the branch
// keeps its conditional warning (Conditional's optional input).
//
// Proved warm-up. Where the capturing function calls the captured
// function before the capture region with the same arguments (`model(x)`
// then `with torch.cuda.graph(g): model(x)`), the one-time set-up of the functions
// it reaches (Conditional's cache misses, first calls, lazy set-up,
// `@lru_cache` bodies) ran before capture: in a function captured only
// through such warmed calls that set-up is dead under capture.

// cval is a parameter's constant under capture: "" none seen yet, top
// unknown, else constText's form.
const top = "\x00top"

type pruneState struct {
	a       *analyser
	params  map[*index.Function]map[string]string
	reached map[*index.Function]bool
	dead    map[*index.Function][]*Node
	prefill map[*index.Function][]*Node
	queue   []*index.Function
	queued  map[*index.Function]bool
	// launchers: the state joins the launcher roots' calls (no decode
	// values: bindArgsAs).
	launchers bool
	// explicit: the parameters every captured call of a function passes
	// explicitly by an expression that is not a literal (false once one
	// call leaves it out, passes a literal, or cannot be matched).
	explicit map[*index.Function]map[string]bool
}

// prune runs before propagate: it adds the dead code of captured functions
// to Excluded.
func (a *analyser) prune() {
	st := a.pruneFrom(Captured)
	for fn, d := range st.dead {
		a.res.Excluded[fn] = append(a.res.Excluded[fn], d...)
	}
	// The same for the launchers' context (library mode), with the
	// constants the launchers' calls pass: a call that passes one makes a
	// branch dead there as under capture (`build(m, shell_only=True)`
	// never reaches what follows `if shell_only: return`).
	if lt := a.pruneFrom(Launcher); lt != nil {
		for fn, d := range lt.dead {
			if len(d) > 0 {
				if a.res.launcherExcl == nil {
					a.res.launcherExcl = map[*index.Function][]*Node{}
				}
				a.res.launcherExcl[fn] = append(slices.Clone(a.res.Guarded[fn]), d...)
			}
		}
	}
	a.warmed(st.reached)
	a.captureEnv = st.params
	a.prefillSites = st.prefill
	a.res.passed = map[*index.Function]map[string]bool{}
	for fn, ex := range st.explicit {
		for name, ok := range ex {
			if ok {
				if a.res.passed[fn] == nil {
					a.res.passed[fn] = map[string]bool{}
				}
				a.res.passed[fn][name] = true
			}
		}
	}
	a.prefillClasses(st)
}

// pruneFrom joins the constants from the roots of context ctx to a
// fixpoint and works out each reached function's dead code under them
// (nil where no root has that context).
func (a *analyser) pruneFrom(ctx Context) *pruneState {
	st := &pruneState{a: a, params: map[*index.Function]map[string]string{}, reached: map[*index.Function]bool{},
		dead: map[*index.Function][]*Node{}, prefill: map[*index.Function][]*Node{}, queued: map[*index.Function]bool{},
		explicit: map[*index.Function]map[string]bool{}, launchers: ctx == Launcher}
	// What propagate skips in this context, prune skips too: the code
	// excluded there (ExcludedIn), and under capture the classes that
	// declare no graph support (selection.go).
	unselected := func(c *index.Class) bool { return ctx == Captured && a.unselected[c] != "" }
	found := false
	for _, r := range a.roots {
		if r.ctx != ctx || unselected(r.fn.Class) {
			continue
		}
		found = true
		if r.site != nil {
			st.bind(r.via, nil, r.site, r.fn)
		} else {
			st.bind(nil, nil, nil, r.fn)
		}
	}
	if !found && ctx != Captured {
		return nil
	}
	for len(st.queue) > 0 {
		fn := st.queue[0]
		st.queue = st.queue[1:]
		st.queued[fn] = false
		env := st.params[fn]
		st.dead[fn], st.prefill[fn] = deadUnder(fn, env)
		for _, e := range a.g.Out[fn] {
			if e.Site == nil || e.Callee == fn || within(a.res.ExcludedIn(fn, ctx), e.Site) || within(st.dead[fn], e.Site) {
				continue
			}
			if unselected(e.Callee.Class) {
				continue
			}
			st.bind(fn, env, e.Site, e.Callee)
		}
	}
	return st
}

func within(nodes []*Node, n *Node) bool {
	for _, x := range nodes {
		if n.Start >= x.Start && n.End <= x.End {
			return true
		}
	}
	return false
}

// bind joins the constants call site passes into callee's parameters
// (every parameter unknown where site is nil), and queues callee when they
// change or it is new.
func (st *pruneState) bind(caller *index.Function, env map[string]string, site *Node, callee *index.Function) {
	vals, explicit := bindArgsAs(st.a, caller, env, site, callee, !st.launchers)
	ex := st.explicit[callee]
	if ex == nil {
		ex = map[string]bool{}
		for _, p := range callee.Params {
			ex[p.Name] = !st.reached[callee]
		}
		st.explicit[callee] = ex
	}
	for name := range ex {
		ex[name] = ex[name] && explicit[name]
	}
	cur := st.params[callee]
	changed := !st.reached[callee]
	st.reached[callee] = true
	if cur == nil {
		cur = map[string]string{}
		st.params[callee] = cur
	}
	for _, p := range callee.Params {
		v, ok := vals[p.Name]
		if !ok {
			v = top
		}
		old, seen := cur[p.Name]
		switch {
		case !seen:
			cur[p.Name] = v
			changed = true
		case old != v && old != top:
			cur[p.Name] = top
			changed = true
		}
	}
	if changed && !st.queued[callee] {
		st.queued[callee] = true
		st.queue = append(st.queue, callee)
	}
}

// keptSignature: decorators that leave a function's parameters as they are.
func keptSignature(fn *index.Function) bool {
	for _, d := range fn.Decorators {
		t := d.Text(fn.File.Src)
		ok := false
		for _, w := range []string{"staticmethod", "classmethod", "no_grad", "inference_mode", "cache", "torch.compile", "override"} {
			if strings.Contains(t, w) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// bindArgs maps the arguments of call site to callee's parameters: the
// constant each gets, top where it is not a constant; nil (all unknown)
// where the call cannot be matched to the parameters. explicit are the
// parameters the call passes by an expression that is not a literal.
func bindArgs(a *analyser, caller *index.Function, env map[string]string, site *Node, callee *index.Function) (out map[string]string, explicit map[string]bool) {
	return bindArgsAs(a, caller, env, site, callee, true)
}

// bindArgsAs is bindArgs; without decode, a decode test passed as an
// argument is not known (what the launchers' pruning asks: a decode
// value only ever marks prefill branches, never dead ones, and reading
// one walks the caller's body).
func bindArgsAs(a *analyser, caller *index.Function, env map[string]string, site *Node, callee *index.Function, decode bool) (out map[string]string, explicit map[string]bool) {
	args, ok := matchArgs(a.g, caller, site, callee)
	if !ok {
		return nil, nil
	}
	src := caller.File.Src
	value := func(n *Node) string {
		n = syntax.Unparen(n)
		if n == nil {
			return top
		}
		if n.Kind() == "identifier" && caller != nil && env != nil {
			if v, ok := env[n.Text(src)]; ok && v != "" && !Reassigned(caller, n.Text(src)) {
				return v
			}
		}
		if k := literal(n, src); k != "" {
			return k
		}
		if caller != nil && decode {
			if k := decodeValue(caller, n, 2); k != "" {
				return k
			}
		}
		return top
	}
	out = map[string]string{}
	explicit = map[string]bool{}
	for name, b := range args {
		switch {
		case b.node != nil:
			out[name] = value(b.node)
			explicit[name] = out[name] == top
		case b.dflt:
			out[name] = literal(syntax.Unparen(callee.Params[b.param].Default), callee.File.Src)
			if out[name] == "" {
				out[name] = top
			}
		default:
			out[name] = top
		}
	}
	return out, explicit
}

// argBinding is what one parameter gets at a call site: the argument
// expression, or its default, or (neither) something not known (a splat).
type argBinding struct {
	node  *Node
	dflt  bool
	param int // the parameter's index in callee.Params
}

// matchArgs matches the arguments of call site to callee's parameters
// (the receiver's excluded); false where the call cannot be matched: not a
// plain call of callee by its own name (an alias, a partial, a wrapper), or
// a decorator that may change the signature.
func matchArgs(g *flow.Graph, caller *index.Function, site *Node, callee *index.Function) (map[string]argBinding, bool) {
	if site == nil || caller == nil || site.Kind() != "call" || callee.Kind != index.Def || !keptSignature(callee) {
		return nil, false
	}
	f := syntax.Unparen(site.Get("function"))
	if f == nil {
		return nil, false
	}
	name := calleeName(site, caller)
	off := 0
	method := callee.Class != nil && !callee.Static
	switch {
	case name == callee.Name:
		if method {
			off = 1
			// `Base.method(self, x)`: the receiver is passed explicitly.
			if f.Kind() == "attribute" && !callee.ClassMethod {
				for v := range g.ValuesUnordered(f.Get("object")) {
					if v.Kind == flow.VClass {
						off = 0
					}
				}
			}
		}
	case method && (callee.Name == "__init__" || callee.Name == "__call__" || callee.Name == "forward"):
		off = 1 // `Cls(...)`, `obj(...)`, an nn.Module's call
	default:
		// An alias (`self.model.forward = self._model_forward`, `fn =
		// impl`): the callee's value at the call says how it binds — a
		// bound method takes its receiver, a plain function takes the
		// call's arguments; a partial, a wrapper or a name the values do
		// not hold cannot be matched.
		bound, plain := false, false
		for v := range g.ValuesUnordered(f) {
			if v.Fn != callee {
				continue
			}
			switch v.Kind {
			case flow.VBound:
				bound = true
			case flow.VFunc:
				plain = true
			}
		}
		switch {
		case bound && !plain && method:
			off = 1
		case plain && !bound && !method:
		default:
			return nil, false
		}
	}
	src := caller.File.Src
	args := site.Get("arguments")
	if args == nil || args.Kind() != "argument_list" {
		return nil, false
	}
	var pos []*Node
	kw := map[string]*Node{}
	posSplat, kwSplat := false, false
	for _, x := range args.NamedChildren() {
		switch x.Kind() {
		case "comment":
		case "list_splat":
			posSplat = true
		case "dictionary_splat":
			kwSplat = true
		case "keyword_argument":
			if n := x.Get("name"); n != nil {
				kw[n.Text(src)] = x.Get("value")
			}
		default:
			if posSplat {
				continue
			}
			pos = append(pos, x)
		}
	}
	out := map[string]argBinding{}
	j := 0
	for i, p := range callee.Params {
		if i < off {
			continue
		}
		switch p.Kind {
		case index.VarArgs, index.VarKw:
			continue
		}
		if p.Kind != index.KwOnly {
			if j < len(pos) {
				out[p.Name] = argBinding{node: pos[j], param: i}
				j++
				continue
			}
			j++
			if posSplat {
				out[p.Name] = argBinding{param: i}
				continue
			}
		}
		if p.Kind != index.PosOnly {
			if v, ok := kw[p.Name]; ok {
				out[p.Name] = argBinding{node: v, param: i}
				continue
			}
		}
		if kwSplat || p.Default == nil {
			out[p.Name] = argBinding{param: i}
			continue
		}
		out[p.Name] = argBinding{dflt: true, param: i}
	}
	return out, true
}

// ArgumentFor is what call site (in caller) passes for callee's parameter
// named param (matchArgs): the argument expression, or dflt where the
// parameter's default applies; ok false where the call cannot be matched
// or a splat may supply it.
func ArgumentFor(g *flow.Graph, caller *index.Function, site *Node, callee *index.Function, param string) (arg *Node, dflt, ok bool) {
	args, matched := matchArgs(g, caller, site, callee)
	b, found := args[param]
	if !matched || !found || b.node == nil && !b.dflt {
		return nil, false, false
	}
	return b.node, b.dflt, true
}

// literal is the canonical text of None, True, False, a number or a
// string literal, or "".
func literal(n *Node, src []byte) string {
	if n == nil {
		return ""
	}
	switch n.Kind() {
	case "none", "true", "false", "integer", "float":
		return n.Kind() + ":" + n.Text(src)
	case "string":
		if v, ok := index.StringLit(n, src); ok {
			return "str:" + v
		}
	}
	return ""
}

// Decode-graph values: a decode test passed as an argument
// (`build(low_latency=ctx.is_decoding())`) is true in a decode graph and
// false where prefill is captured: "decode:true" (its negation
// "decode:false"). A condition over it is neither true nor false: the
// branch it rules out runs only where prefill is captured (prefillOnly).
const (
	inDecode  truth = 10 + iota // true in a decode graph, false in a prefill one
	inPrefill                   // the opposite
)

// truthy is a literal's truth value.
func truthy(k string) truth {
	kind, text, _ := strings.Cut(k, ":")
	switch kind {
	case "decode":
		if text == "true" {
			return inDecode
		}
		return inPrefill
	case "none", "false":
		return isFalse
	case "true":
		return isTrue
	case "integer", "float":
		if strings.Trim(text, "0._xXoObBeE+-") == "" {
			return isFalse
		}
		return isTrue
	case "str":
		if text == "" {
			return isFalse
		}
		return isTrue
	}
	return unknown
}

// Reassigned: fn's own code binds name (an assignment, augmented
// assignment, for or with target, walrus, del, global).
func Reassigned(fn *index.Function, name string) bool {
	_, ok := boundAt(fn)[name]
	return ok
}

// boundBefore: fn's own code binds name somewhere before offset off.
func boundBefore(fn *index.Function, name string, off int) bool {
	at, ok := boundAt(fn)[name]
	return ok && at < off
}

// boundCache holds boundAt per function (a function's syntax never
// changes once indexed).
var boundCache sync.Map

// forgetBindings empties boundCache and nonlocalCache: Compute starts each analysis with it
// (a long-running process, `capguard server`, analyses new functions each
// time, and the old ones' entries would never be read again).
func forgetBindings() {
	boundCache.Range(func(k, _ any) bool {
		boundCache.Delete(k)
		return true
	})
	nonlocalCache.Range(func(k, _ any) bool {
		nonlocalCache.Delete(k)
		return true
	})
}

// CachedBindings is how many entries the per-function caches (boundCache,
// nonlocalCache) hold (for tests of memory that a long-running process
// keeps).
func CachedBindings() int {
	n := 0
	count := func(_, _ any) bool {
		n++
		return true
	}
	boundCache.Range(count)
	nonlocalCache.Range(count)
	return n
}

// boundAt maps the names fn's own code binds to the offset of the first
// binding.
func boundAt(fn *index.Function) map[string]int {
	if v, ok := boundCache.Load(fn); ok {
		return v.(bindings).first
	}
	return bindingsOf(fn).first
}

// bindings are where and how often fn's own code binds each name.
type bindings struct {
	first map[string]int
	count map[string]int
}

func bindingsOf(fn *index.Function) bindings {
	if v, ok := boundCache.Load(fn); ok {
		return v.(bindings)
	}
	src := fn.File.Src
	out := bindings{first: map[string]int{}, count: map[string]int{}}
	binds := func(t *Node) {
		syntax.Walk(t, func(n *Node) bool {
			if n.Kind() == "identifier" {
				name := n.Text(src)
				if at, ok := out.first[name]; !ok || int(n.Start) < at {
					out.first[name] = int(n.Start)
				}
				out.count[name]++
			}
			return !n.Is("attribute", "subscript")
		})
	}
	if fn.Body != nil {
		syntax.Walk(fn.Body, func(n *Node) bool {
			if n != fn.Body && n.Is("function_definition", "class_definition", "lambda") {
				return false
			}
			switch n.Kind() {
			case "assignment", "augmented_assignment", "for_statement", "for_in_clause":
				binds(n.Get("left"))
			case "named_expression":
				binds(n.Get("name"))
			case "as_pattern":
				binds(n.Get("alias"))
			case "delete_statement", "global_statement", "nonlocal_statement":
				binds(n)
			}
			return true
		})
	}
	boundCache.Store(fn, out)
	return out
}

// evalConst evaluates a condition over fn's constant parameters.
func evalConst(fn *index.Function, env map[string]string, cond *Node) truth {
	cond = syntax.Unparen(cond)
	if cond == nil || len(env) == 0 {
		return unknown
	}
	src := fn.File.Src
	param := func(n *Node) string {
		n = syntax.Unparen(n)
		if n == nil || n.Kind() != "identifier" {
			return ""
		}
		v := env[n.Text(src)]
		if v == "" || v == top || Reassigned(fn, n.Text(src)) {
			return ""
		}
		return v
	}
	switch cond.Kind() {
	case "identifier":
		if v := param(cond); v != "" {
			return truthy(v)
		}
		if t := flagTest(fn, cond, src); t != nil {
			// `with_ep = experts is not None` then `if with_ep:`.
			return evalConst(fn, env, t)
		}
	case "not_operator":
		switch evalConst(fn, env, cond.Get("argument")) {
		case isTrue:
			return isFalse
		case isFalse:
			return isTrue
		case inDecode:
			return inPrefill
		case inPrefill:
			return inDecode
		}
	case "boolean_operator":
		l, r := evalConst(fn, env, cond.Get("left")), evalConst(fn, env, cond.Get("right"))
		if cond.Operator(src) == "and" {
			switch {
			case l == isFalse || r == isFalse:
				return isFalse
			case l == isTrue:
				return r
			case r == isTrue || l == r:
				return l
			}
			return unknown
		}
		switch {
		case l == isTrue || r == isTrue:
			return isTrue
		case l == isFalse:
			return r
		case r == isFalse || l == r:
			return l
		}
	case "comparison_operator":
		kids := cond.NamedChildren()
		if len(kids) != 2 {
			return unknown
		}
		op := cond.Operator(src)
		v, k := param(kids[0]), literal(syntax.Unparen(kids[1]), src)
		if v == "" {
			v, k = param(kids[1]), literal(syntax.Unparen(kids[0]), src)
		}
		if strings.HasPrefix(v, "none:") && k == "" && (notNone(fn, kids[0], 0) || notNone(fn, kids[1], 0)) {
			// A parameter passed as None against a value that cannot be
			// None (`n == num_experts`, a size read).
			switch op {
			case "==", "is":
				return isFalse
			case "!=", "is not":
				return isTrue
			}
		}
		if v == "" || k == "" || strings.HasPrefix(v, "decode:") {
			return unknown
		}
		if x, ok := number(v); ok {
			if y, ok := number(k); ok {
				if param(kids[0]) == "" {
					x, y = y, x // `K < p`
				}
				switch op {
				case "<":
					return of(x < y)
				case "<=":
					return of(x <= y)
				case ">":
					return of(x > y)
				case ">=":
					return of(x >= y)
				}
			}
		}
		eq := v == k
		switch op {
		case "is", "==":
			if eq {
				return isTrue
			}
			if op == "is" || sameKind(v, k) {
				return isFalse
			}
		case "is not", "!=":
			if eq {
				return isFalse
			}
			if op == "is not" || sameKind(v, k) {
				return isTrue
			}
		}
	}
	return unknown
}

func sameKind(a, b string) bool {
	ka, _, _ := strings.Cut(a, ":")
	kb, _, _ := strings.Cut(b, ":")
	return ka == kb && ka != "float" && ka != "integer" || ka == "none" || kb == "none"
}

type deadKey struct {
	fn     *index.Function
	consts string
}

// deadIn is deadUnder's dead list, worked out once per function and
// constants: the calling contexts ask it for a caller's every context at
// each of its call edges, and most edges share their caller's contexts
// (about a quarter of Megatron-LM's contexts stage walked the same bodies
// again).
// The key of the constants is the context's own, made once (callCtx.keyOf).
func (a *analyser) deadIn(fn *index.Function, cc *callCtx) []*Node {
	env := cc.consts
	if fn.Body == nil || fn.Kind == index.TopLevel || len(env) == 0 {
		return nil
	}
	k := deadKey{fn, cc.keyOf()}
	if dead, ok := a.deadMemo[k]; ok {
		return dead
	}
	if a.deadMemo == nil {
		a.deadMemo = map[deadKey][]*Node{}
	}
	dead, _ := deadUnder(fn, env)
	a.deadMemo[k] = dead
	return dead
}

// deadUnder lists the statements of fn (and expressions of conditional
// expressions) that cannot run with its parameters' constants.
func deadUnder(fn *index.Function, env map[string]string) (dead, prefill []*Node) {
	if fn.Body == nil || fn.Kind == index.TopLevel || len(env) == 0 {
		return nil, nil
	}
	live := false
	for _, v := range env {
		if v != "" && v != top {
			live = true
		}
	}
	if !live {
		return nil, nil
	}
	syntax.Walk(fn.Body, func(n *Node) bool {
		if n != fn.Body && n.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		if within(dead, n) {
			return false
		}
		switch n.Kind() {
		case "if_statement":
			t := evalConst(fn, env, n.Get("condition"))
			body := n.Get("consequence")
			var alts []*Node
			for _, c := range n.Children() {
				if c.Kind() == "else_clause" || c.Kind() == "elif_clause" {
					alts = append(alts, c)
				}
			}
			switch t {
			case isFalse:
				if body != nil {
					dead = append(dead, body)
				}
				if len(alts) == 1 && alts[0].Kind() == "else_clause" && exits(alts[0].Get("body")) {
					dead = append(dead, following(n)...)
				}
			case isTrue:
				dead = append(dead, alts...)
				if exits(body) {
					dead = append(dead, following(n)...)
				}
			case inDecode:
				prefill = append(prefill, alts...)
				if exits(body) {
					prefill = append(prefill, following(n)...)
				}
			case inPrefill:
				if body != nil {
					prefill = append(prefill, body)
				}
				if len(alts) == 1 && alts[0].Kind() == "else_clause" && exits(alts[0].Get("body")) {
					prefill = append(prefill, following(n)...)
				}
			}
			for _, c := range alts {
				if c.Kind() == "elif_clause" && evalConst(fn, env, c.Get("condition")) == isFalse {
					if b := c.Get("consequence"); b != nil {
						dead = append(dead, b)
					}
				}
			}
		case "boolean_operator":
			// Short-circuit: the right operand of an `and` whose left is
			// false under capture (`if debug and x.item():`), or of an `or`
			// whose left is true, is never evaluated.
			l, r, op := n.Get("left"), n.Get("right"), n.Get("operator")
			if l != nil && r != nil && op != nil {
				t := evalConst(fn, env, l)
				if op.Kind() == "and" && t == isFalse || op.Kind() == "or" && t == isTrue {
					dead = append(dead, r)
				}
			}
		case "conditional_expression":
			kids := n.NamedChildren()
			if len(kids) == 3 {
				switch evalConst(fn, env, kids[1]) {
				case isFalse:
					dead = append(dead, kids[0])
				case isTrue:
					dead = append(dead, kids[2])
				}
			}
		}
		return true
	})
	return dead, prefill
}

// warmed excludes the one-time set-up of the functions captured only
// through calls that the capturing function made before the capture.
func (a *analyser) warmed(reached map[*index.Function]bool) {
	var coldRoots []*index.Function
	var warmRoots []root
	for _, r := range a.roots {
		if r.ctx != Captured {
			continue
		}
		if r.warm {
			warmRoots = append(warmRoots, r)
		} else {
			coldRoots = append(coldRoots, r.fn)
		}
	}
	if len(warmRoots) == 0 {
		return
	}
	cold := a.calledFrom(coldRoots)
	for fn := range reached {
		if cold[fn] {
			continue
		}
		a.res.Excluded[fn] = append(a.res.Excluded[fn], setUpStmts(fn)...)
	}
	// What the warm-up ran, for the captures it warmed, whatever other
	// captures (cold ones, or roots assumed by name) also reach it: under
	// a warmed capture that set-up is skipped, and the graph reads what the
	// warm-up left (CG202).
	// One walk a warmed function: many regions warm the same one (a
	// runner's warm-up before each capture).
	warmFrom := map[*index.Function]map[*index.Function]bool{}
	for _, r := range warmRoots {
		warm, ok := warmFrom[r.fn]
		if !ok {
			warm = a.calledFrom([]*index.Function{r.fn})
			warmFrom[r.fn] = warm
		}
		for fn := range warm {
			if !reached[fn] {
				continue
			}
			if _, ok := a.res.Warmed[fn]; !ok {
				a.res.Warmed[fn] = setUpStmts(fn)
			}
		}
		if r.region != nil && r.warmCall != nil {
			w := WarmUp{Call: r.warmCall, Callee: r.fn}
			for fn := range warm {
				if reached[fn] && len(a.res.Warmed[fn]) > 0 {
					w.SetUp = append(w.SetUp, fn)
				}
			}
			sort.Slice(w.SetUp, func(i, j int) bool { return w.SetUp[i].FullName() < w.SetUp[j].FullName() })
			a.res.WarmUps[r.region] = append(a.res.WarmUps[r.region], w)
		}
	}
}

// calledFrom is roots and every function they reach through call edges
// whose sites are not excluded from captured code.
func (a *analyser) calledFrom(roots []*index.Function) map[*index.Function]bool {
	seen := map[*index.Function]bool{}
	var queue []*index.Function
	for _, fn := range roots {
		if !seen[fn] {
			seen[fn] = true
			queue = append(queue, fn)
		}
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		for _, e := range a.g.Out[fn] {
			if e.Site != nil && a.res.IsExcluded(fn, e.Site) || seen[e.Callee] {
				continue
			}
			seen[e.Callee] = true
			queue = append(queue, e.Callee)
		}
	}
	return seen
}

// setUpStmts are fn's statements that Conditional reads as one-time
// set-up (a cache miss, a first call).
func setUpStmts(fn *index.Function) []*Node {
	if fn.Body == nil || fn.Kind != index.Def {
		return nil
	}
	var out []*Node
	forEachStmt(fn.Body, func(s *Node) {
		if within(out, s) {
			return
		}
		if setUp(Conditional(fn, s)) {
			out = append(out, s)
		}
	})
	return out
}

// setUp: a Conditional reason that is one-time set-up.
func setUp(why string) bool {
	return strings.HasPrefix(why, "the cache misses") || strings.HasPrefix(why, "this is the first call")
}

// warmRoot is the call (a warm-up run) with which the capturing function fn
// calls callee before the capture region that starts at region, with the
// same arguments as the captured call site, or nil: a warm-up on other objects
// (`decode(ids, copy.copy(state))`) leaves the set-up keyed on the
// captured call's own objects to run under capture.
func (a *analyser) warmRoot(fn *index.Function, region *Node, callee *index.Function, site *Node) *Node {
	src := fn.File.Src
	if site.Get("arguments") == nil {
		return nil
	}
	want := strings.Join(strings.Fields(site.Get("arguments").Text(src)), "")
	for _, c := range callsIn(precedingStmts(fn, region)) {
		if args := c.Get("arguments"); args == nil || strings.Join(strings.Fields(args.Text(src)), "") != want {
			continue
		}
		for _, e := range a.g.Callees(c) {
			if e.Callee == callee {
				return c
			}
		}
	}
	return nil
}

// number is an integer or float literal's value.
func number(k string) (float64, bool) {
	kind, text, _ := strings.Cut(k, ":")
	if kind != "integer" && kind != "float" {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
	if err != nil {
		if i, err := strconv.ParseInt(strings.ReplaceAll(text, "_", ""), 0, 64); err == nil {
			return float64(i), true
		}
		return 0, false
	}
	return f, true
}

func of(b bool) truth {
	if b {
		return isTrue
	}
	return isFalse
}

// decodeValue reads a decode test: `ctx.is_decoding()`, `batch.is_decode`
// (DecodeTests) is "decode:true", a prefill test "decode:false", `not`
// turns them around; a local assigned once from one is that one.
func decodeValue(fn *index.Function, n *Node, depth int) string {
	n = syntax.Unparen(n)
	if n == nil || depth < 0 {
		return ""
	}
	src := fn.File.Src
	switch n.Kind() {
	case "not_operator":
		switch decodeValue(fn, n.Get("argument"), depth) {
		case "decode:true":
			return "decode:false"
		case "decode:false":
			return "decode:true"
		}
		return ""
	case "identifier":
		if !fn.Locals[n.Text(src)] {
			break
		}
		if r := singleAssign(fn, n.Text(src)); r != nil {
			return decodeValue(fn, r, depth-1)
		}
		return ""
	}
	if name := testName(n, src); name != "" {
		switch {
		case DecodeTests[name]:
			return "decode:true"
		case PrefillTests[name]:
			return "decode:false"
		}
	}
	return ""
}

// singleAssign is the value of the one plain assignment to local name in
// fn, or nil when it is a parameter or bound any other way or more than
// once.
func singleAssign(fn *index.Function, name string) *Node {
	for _, p := range fn.Params {
		if p.Name == name {
			return nil
		}
	}
	if bindingsOf(fn).count[name] != 1 {
		return nil
	}
	src := fn.File.Src
	var val *Node
	syntax.Walk(fn.Body, func(n *Node) bool {
		if val != nil || n != fn.Body && n.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		if n.Kind() == "assignment" {
			if l := syntax.Unparen(n.Get("left")); l != nil && l.Kind() == "identifier" && l.Text(src) == name {
				val = n.Get("right")
			}
		}
		return val == nil
	})
	return val
}

// prefillClasses finds the classes a decode graph never builds: every
// call that constructs one (its own __init__) is in captured code, on a
// branch that runs only where prefill is captured (prefillSites); a class
// built anywhere else (eager code, unconditionally) or with project
// subclasses is not one.
func (a *analyser) prefillClasses(st *pruneState) {
	a.prefillOnly = map[*index.Class]string{}
	if a.g.H == nil {
		return
	}
	subclassed := map[*index.Class]bool{}
	for _, f := range a.p.Files {
		for _, c := range f.Classes {
			for _, b := range a.g.H.Bases(c) {
				subclassed[b] = true
			}
		}
	}
	for _, f := range a.p.Files {
		for _, c := range f.Classes {
			init := c.Methods["__init__"]
			if init == nil || subclassed[c] {
				continue
			}
			why, ok := "", true
			n := 0
			for _, e := range a.g.In[init] {
				if e.Site == nil || !ok {
					continue
				}
				if fe := syntax.Unparen(e.Site.Get("function")); fe != nil && fe.Kind() == "attribute" && fe.Get("attribute").Text(e.Caller.File.Src) == "__init__" {
					continue // super().__init__(...) of a subclass: none here
				}
				n++
				if !st.reached[e.Caller] || !within(st.prefill[e.Caller], e.Site) {
					if !within(st.dead[e.Caller], e.Site) || !st.reached[e.Caller] {
						ok = false
					}
					continue
				}
				if why == "" {
					why = "prefill is captured (`" + c.Name + "` is built only where a decode test is false, in " + e.Caller.FullName() + ")"
				}
			}
			if ok && n > 0 && why != "" {
				a.prefillOnly[c] = why
			}
		}
	}
}

// prefillSite says why call site n of fn runs only where prefill is
// captured (a branch a decode-test argument rules out), or "".
func (a *analyser) prefillSite(fn *index.Function, n *Node) string {
	for _, x := range a.prefillSites[fn] {
		if n.Start >= x.Start && n.End <= x.End {
			return "prefill is captured (a decode test passed to " + fn.FullName() + " is false)"
		}
	}
	return ""
}

// ParamFor is the parameter of callee that argument expression arg of call
// site (in caller) binds (matchArgs); ok false where the call cannot be
// matched or arg binds none.
func ParamFor(g *flow.Graph, caller *index.Function, site *Node, callee *index.Function, arg *Node) (string, bool) {
	args, matched := matchArgs(g, caller, site, callee)
	if !matched {
		return "", false
	}
	for name, b := range args {
		if b.node == arg {
			return name, true
		}
	}
	return "", false
}
