package contexts

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Conditionally captured code runs under capture only in some captures,
// and the analysis cannot tell which:
//
//   - an optional input: code under `if pixel_values is not None:` where
//     pixel_values is a parameter that defaults to None runs only if the
//     capture passes it, which the analysis cannot see where a framework or
//     a C++ runner makes the call (or through `**kwargs`). Multimodal and
//     prefill-only inputs are passed so, and left None by decode graphs;
//   - a prefill branch: code under `if not attn_metadata.is_decoding:` (or
//     `if batch.is_prefill:`, or the `else` of a decode test) runs under
//     capture only where prefill is captured (piecewise graphs), not in the
//     decode graphs engines capture by default. The names read as decode
//     and prefill tests are DecodeTests and PrefillTests;
//   - an opt-in debug or profiling gate: code under a condition that
//     reads a debug setting (`if os.environ.get("X_DEBUG"):`, `if
//     self.debug:`) or an autotuning, profiling or benchmark mode (`if
//     self.autotune:`, `if profiling_enabled():`) runs under capture
//     only if the gate is on, which it is not by default (gate);
//   - lazy set-up: the body of `if self.x is None: self.x = ...`, of `if
//     key not in cache: cache[key] = ...` and of `if not self.ready: ...;
//     self.ready = True` runs on the first call, which the warm-up before
//     a capture makes (setUpBranch). Only persistent state counts (an
//     attribute, a module global): `if out is None: out = torch.empty()`
//     on a parameter allocates on every call;
//   - a cache miss: code after `if key in CACHE: return CACHE[key]` (or
//     `if self._buf is not None: return self._buf`), or the body of an
//     `@functools.lru_cache` function, runs under capture only if the
//     warm-up before it did not fill the cache; code after a run-once
//     guard (`if meta.initialized: return` in a function that then sets
//     `meta.initialized = True`) only if no call before the capture ran it.
//
// Such code is still captured: its findings are warnings that say the
// condition (Reach.Cond, Diagnostic.Condition), and a call chain through
// no condition is preferred over one through a condition.

// DecodeTests are the attribute, variable and method names read as "this
// step decodes" (true in a decode graph).
var DecodeTests = map[string]bool{
	"is_decoding": true, "is_decode": true, "global_is_decoding": true, "is_decode_mode": true,
	"is_decode_or_idle": true, "decoding": true,
}

// PrefillTests are the names read as "this step prefills" (false in a
// decode graph).
var PrefillTests = map[string]bool{
	"is_prefill": true, "is_prefilling": true, "is_extend": true, "is_prefill_mode": true,
	"prefilling": true, "is_context": true, "is_mixed": true,
}

// Conditional says why code n of fn runs under capture only conditionally
// ("the capture passes `pixel_values`", "prefill is captured
// (`attn_metadata.is_decoding` is false)", "the cache misses
// (`key in _CACHE`)"), or "" when it runs whenever fn does.
func Conditional(fn *index.Function, n *Node) string {
	if fn == nil || fn.Body == nil || n == nil || fn.Kind == index.TopLevel {
		return ""
	}
	src := fn.File.Src
	if memoized(fn, src) {
		return "the cache misses (`@" + strings.TrimSpace(decoratorName(fn, src)) + "`)"
	}
	for x := n; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil {
			return ""
		}
		switch {
		case (p.Kind() == "if_statement" || p.Kind() == "elif_clause") && x.Field() == "consequence":
			if why := branchCond(fn, p.Get("condition"), src, false); why != "" {
				return why
			}
			if why := setUpBranch(fn, p.Get("condition"), x, src); why != "" {
				return why
			}
		case (x.Kind() == "else_clause" || x.Kind() == "elif_clause") && p.Kind() == "if_statement":
			if why := branchCond(fn, p.Get("condition"), src, true); why != "" {
				return why
			}
		case p.Kind() == "boolean_operator" && x == p.Get("right"):
			// `a and b`: b is evaluated only when a holds; `a or b` only
			// when it does not.
			if why := branchCond(fn, p.Get("left"), src, p.Operator(src) == "or"); why != "" {
				return why
			}
		case p.Kind() == "conditional_expression":
			// `a if c else b`: a under c, b under not c.
			kids := p.NamedChildren()
			if len(kids) == 3 && x == kids[0] {
				if why := branchCond(fn, kids[1], src, false); why != "" {
					return why
				}
			} else if len(kids) == 3 && x == kids[2] {
				if why := branchCond(fn, kids[1], src, true); why != "" {
					return why
				}
			}
		}
		if p == fn.Body || p.Kind() == "block" && p.Parent() == fn.Def {
			if why := afterCacheHit(fn, p, x, src); why != "" {
				return why
			}
		}
	}
	return ""
}

// branchCond: the branch of cond (negated: its else) runs only
// conditionally under capture.
func branchCond(fn *index.Function, cond *Node, src []byte, negated bool) string {
	cond = syntax.Unparen(cond)
	if cond == nil {
		return ""
	}
	switch cond.Kind() {
	case "not_operator":
		return branchCond(fn, cond.Get("argument"), src, !negated)
	case "boolean_operator":
		op := cond.Operator(src)
		// The branch of `a and b` runs only when both hold; the else of
		// `a or b` only when neither does.
		if op == "and" && !negated || op == "or" && negated {
			if why := branchCond(fn, cond.Get("left"), src, negated); why != "" {
				return why
			}
			return branchCond(fn, cond.Get("right"), src, negated)
		}
		return ""
	case "comparison_operator":
		if why := optionalInput(fn, cond, src, negated); why != "" || negated {
			return why
		}
		return gate(cond, src)
	case "identifier":
		// `with_ep = experts is not None` then `if with_ep:`: the flag
		// stands for the test it holds.
		if t := flagTest(fn, cond, src); t != nil {
			if why := optionalInput(fn, t, src, negated); why != "" {
				return why
			}
		}
	}
	if !negated {
		if why := gate(cond, src); why != "" {
			return why
		}
	}
	if name := testName(cond, src); name != "" {
		t := strings.TrimSpace(cond.Text(src))
		switch {
		case DecodeTests[name] && negated:
			return "prefill is captured (`" + short(t) + "` is false)"
		case PrefillTests[name] && !negated:
			return "prefill is captured (`" + short(t) + "`)"
		}
	}
	return ""
}

// testName is the last name of `x.is_decoding`, `is_decoding`,
// `x.forward_mode.is_decode()`.
func testName(n *Node, src []byte) string {
	if n.Kind() == "call" {
		if a := n.Get("arguments"); a != nil && len(a.NamedChildren()) > 0 {
			return ""
		}
		n = syntax.Unparen(n.Get("function"))
	}
	switch {
	case n == nil:
		return ""
	case n.Kind() == "identifier":
		return n.Text(src)
	case n.Kind() == "attribute":
		return n.Get("attribute").Text(src)
	}
	return ""
}

// flagTest is the test a local flag holds where it is read: the one binding
// of the name in fn, before the read, when it binds a comparison or a
// boolean combination (`has_bias = bias is not None`, `with_ep = n is not
// None or ...`); nil otherwise.
func flagTest(fn *index.Function, id *Node, src []byte) *Node {
	if r := onlyBinding(fn, id, src); r != nil && r.Is("comparison_operator", "boolean_operator", "not_operator") {
		return r
	}
	return nil
}

// onlyBinding is the value of the one plain assignment of the local name
// id in fn, made before id is read; nil when the name is bound more than
// once or otherwise.
func onlyBinding(fn *index.Function, id *Node, src []byte) *Node {
	name := id.Text(src)
	if fn.Body == nil || bindingsOf(fn).count[name] != 1 {
		return nil
	}
	var val *Node
	syntax.Walk(fn.Body, func(n *Node) bool {
		if val != nil || n != fn.Body && n.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		if n.Kind() == "assignment" && n.End <= id.Start {
			if l := n.Get("left"); l != nil && l.Kind() == "identifier" && l.Text(src) == name {
				val = syntax.Unparen(n.Get("right"))
				return false
			}
		}
		return true
	})
	return val
}

// notNone: n's value cannot be None: a literal, an operator's result, a
// size read (`t.size(0)`, `t.shape[0]`, `t.numel()`, `len(x)`), or a local
// bound once to one of those. `p == n` for a parameter passed as None is
// then false.
func notNone(fn *index.Function, n *Node, depth int) bool {
	n = syntax.Unparen(n)
	if n == nil || depth > 4 {
		return false
	}
	src := fn.File.Src
	switch n.Kind() {
	case "integer", "float", "string", "true", "false", "binary_operator", "unary_operator", "comparison_operator", "not_operator":
		return true
	case "subscript":
		v := syntax.Unparen(n.Get("value"))
		return v != nil && v.Kind() == "attribute" && v.Get("attribute").Text(src) == "shape"
	case "call":
		switch c := syntax.Unparen(n.Get("function")); {
		case c == nil:
		case c.Kind() == "attribute":
			switch c.Get("attribute").Text(src) {
			case "size", "numel", "dim", "element_size", "nelement":
				return true
			}
		case c.Kind() == "identifier":
			switch c.Text(src) {
			case "len", "int", "float", "str", "bool":
				return !boundBefore(fn, c.Text(src), int(n.Start))
			}
		}
	case "identifier":
		if r := onlyBinding(fn, n, src); r != nil {
			return notNone(fn, r, depth+1)
		}
	}
	return false
}

// optionalInput reads `p is not None` (negated: `p is None`) for a
// parameter p of fn that defaults to None.
func optionalInput(fn *index.Function, cond *Node, src []byte, negated bool) string {
	kids := cond.NamedChildren()
	if len(kids) != 2 || kids[1].Kind() != "none" {
		return ""
	}
	op := cond.Operator(src)
	if !(op == "is not" && !negated || op == "is" && negated) {
		return ""
	}
	v := syntax.Unparen(kids[0])
	if v == nil || v.Kind() != "identifier" {
		return ""
	}
	name := v.Text(src)
	if boundBefore(fn, name, int(cond.Start)) {
		return "" // rebound before the test: no longer the caller's input
	}
	for _, p := range fn.Params {
		if p.Name == name && p.Default != nil && syntax.Unparen(p.Default).Kind() == "none" {
			return "the capture passes `" + name + "`"
		}
	}
	return ""
}

// afterCacheHit: statement x of block comes after an early return on a
// cache hit (`if key in CACHE: return ...`, `if CACHE.get(key) is not
// None: return ...`, `if self._buf is not None: return self._buf`).
func afterCacheHit(fn *index.Function, block, x *Node, src []byte) string {
	for _, s := range block.NamedChildren() {
		if s == x || s.Start >= x.Start {
			return ""
		}
		if s.Kind() != "if_statement" || len(s.Children()) == 0 {
			continue
		}
		body := s.Get("consequence")
		if body == nil {
			continue
		}
		stmts := body.NamedChildren()
		if len(stmts) == 0 || stmts[len(stmts)-1].Kind() != "return_statement" || hasAlternative(s) {
			continue
		}
		if why := branchCond(fn, s.Get("condition"), src, true); why != "" {
			// `if p is None: return x` (or `if batch.is_decoding: return
			// ...`): what follows runs only when the test fails.
			return why
		}
		if c := cacheTest(s.Get("condition"), src); c != "" {
			return "the cache misses (`" + short(c) + "` returned before)"
		}
		if f := onceFlag(block, s.Get("condition"), src); f != "" {
			return "this is the first call (`" + short(f) + "` returned before)"
		}
	}
	return ""
}

func hasAlternative(ifStmt *Node) bool {
	for _, c := range ifStmt.Children() {
		if c.Kind() == "elif_clause" || c.Kind() == "else_clause" {
			return true
		}
	}
	return false
}

// cacheTest is the text of a cache-hit test, or "".
func cacheTest(cond *Node, src []byte) string {
	cond = syntax.Unparen(cond)
	if cond == nil || cond.Kind() != "comparison_operator" {
		return ""
	}
	kids := cond.NamedChildren()
	if len(kids) != 2 {
		return ""
	}
	op := cond.Operator(src)
	store := syntax.Unparen(kids[1])
	switch op {
	case "in":
		// `key in CACHE`, `key in self._cache`: a name or attribute, not a
		// literal collection.
		if store != nil && (store.Kind() == "identifier" || store.Kind() == "attribute") {
			return cond.Text(src)
		}
	case "is not":
		// `self._buf is not None`, `_CACHE.get(key) is not None`.
		v := syntax.Unparen(kids[0])
		if store != nil && store.Kind() == "none" && v != nil {
			if v.Kind() == "attribute" {
				return cond.Text(src)
			}
			if v.Kind() == "call" {
				if f := syntax.Unparen(v.Get("function")); f != nil && f.Kind() == "attribute" && f.Get("attribute").Text(src) == "get" {
					return cond.Text(src)
				}
			}
		}
	}
	return ""
}

// onceFlag reads a run-once guard: `if obj.done: return` in a block that
// later sets `obj.done = True`. It returns the flag's text, or "".
func onceFlag(block, cond *Node, src []byte) string {
	cond = syntax.Unparen(cond)
	if cond == nil || cond.Kind() != "attribute" {
		return ""
	}
	flag := cond.Text(src)
	set := false
	syntax.Walk(block, func(n *Node) bool {
		if set || n.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		if n.Kind() == "assignment" {
			l, r := n.Get("left"), n.Get("right")
			if l != nil && r != nil && l.Text(src) == flag && r.Kind() == "true" {
				set = true
			}
		}
		return !set
	})
	if !set {
		return ""
	}
	return flag
}

// memoized: fn is decorated with functools.lru_cache or functools.cache.
func memoized(fn *index.Function, src []byte) bool {
	return decoratorName(fn, src) != ""
}

func decoratorName(fn *index.Function, src []byte) string {
	for _, d := range fn.Decorators {
		e := syntax.Unparen(d)
		if e != nil && e.Kind() == "decorator" {
			if kids := e.NamedChildren(); len(kids) > 0 {
				e = kids[0]
			}
		}
		if e != nil && e.Kind() == "call" {
			e = e.Get("function")
		}
		if e == nil {
			continue
		}
		t := e.Text(src)
		if t == "lru_cache" || t == "functools.lru_cache" || t == "cache" || t == "functools.cache" {
			return t
		}
	}
	return ""
}

// gate reads an opt-in debug, profiling, autotuning or benchmark gate:
// a condition whose text names one ("debug", "profil", "autotun",
// "benchmark", "verbose").
func gate(cond *Node, src []byte) string {
	switch cond.Kind() {
	case "identifier", "attribute", "call", "subscript", "comparison_operator":
	default:
		return ""
	}
	t := strings.ToLower(cond.Text(src))
	for _, w := range []string{"debug", "profil", "autotun", "benchmark", "verbose"} {
		if strings.Contains(t, w) {
			return "the opt-in gate `" + short(cond.Text(src)) + "` is on (it is off by default)"
		}
	}
	return ""
}

// setUpBranch reads lazy set-up: the branch body assigns what its
// condition tests was missing (`if self.x is None: self.x = ...`, `if k
// not in cache: cache[k] = ...`, `if not self.ready: ...; self.ready =
// True`). Warm-up before a capture ran it.
func setUpBranch(fn *index.Function, cond, body *Node, src []byte) string {
	cond = syntax.Unparen(cond)
	if cond == nil || body == nil {
		return ""
	}
	// Persistent state only: an attribute, or a name that is not the
	// function's own local (`if out is None: out = torch.empty(...)` on a
	// parameter allocates on every call).
	persistent := func(n *Node) bool {
		n = syntax.Unparen(n)
		switch {
		case n == nil:
			return false
		case n.Kind() == "attribute":
			return true
		case n.Kind() == "identifier":
			return fn.Globals[n.Text(src)] || !fn.Locals[n.Text(src)]
		}
		return false
	}
	target, lit := "", ""
	switch cond.Kind() {
	case "comparison_operator":
		kids := cond.NamedChildren()
		if len(kids) != 2 {
			return ""
		}
		switch op := cond.Operator(src); {
		case op == ">" || op == ">=" || op == "<" || op == "<=" || op == "!=":
			// `if seq_len > self.max_cached: self._grow(seq_len)`: a cache
			// grown (or rebuilt) when the input outgrows it.
			for _, k := range kids {
				if k = syntax.Unparen(k); k != nil && k.Kind() == "attribute" {
					target = k.Text(src)
					if setsIn(fn, body, target, "", src, 1) {
						return "this is the first call (`" + short(cond.Text(src)) + "` holds only until set-up has run; the warm-up before capture ran it)"
					}
				}
			}
			return ""
		case op == "is" && kids[1].Kind() == "none" && persistent(kids[0]):
			target = syntax.Unparen(kids[0]).Text(src)
		case op == "is" && kids[1].Kind() == "none" && attrProbe(syntax.Unparen(kids[0]), "getattr", src) != "":
			// `if getattr(state, "table", None) is None: state.table = ...`
			target = attrProbe(syntax.Unparen(kids[0]), "getattr", src)
		case op == "is" && kids[1].Kind() == "none":
			// `v = CACHE.get(key)` then `if v is None: v = ...;
			// CACHE[key] = v`: a memo of persistent state, read into a
			// local.
			if c := memoGet(fn, syntax.Unparen(kids[0]), body, src); c != nil && persistent(c) {
				target = c.Text(src) + "["
			}
		case op == "not in":
			st := syntax.Unparen(kids[1])
			if st == nil || !persistent(st) {
				return ""
			}
			target = st.Text(src) + "["
		default:
			return ""
		}
	case "not_operator":
		a := syntax.Unparen(cond.Get("argument"))
		if t := attrProbe(a, "hasattr", src); t != "" {
			// `if not hasattr(state, "table"): state.table = ...`: the
			// attribute is set on the first call and kept by the object.
			target = t
			break
		}
		if a == nil || !persistent(a) {
			return ""
		}
		target, lit = a.Text(src), "true"
	default:
		return ""
	}
	if target == "" || target == "[" {
		return ""
	}
	if !setsIn(fn, body, target, lit, src, 1) {
		return ""
	}
	return "this is the first call (`" + short(cond.Text(src)) + "` holds only before set-up; the warm-up before capture ran it)"
}

// attrProbe is the attribute `obj.name` that a probe of it reads:
// `hasattr(obj, "name")` (fn "hasattr") or `getattr(obj, "name", None)`
// (fn "getattr", with a None default); "" for anything else.
func attrProbe(n *Node, fn string, src []byte) string {
	if n == nil || n.Kind() != "call" {
		return ""
	}
	f := syntax.Unparen(n.Get("function"))
	args := n.Get("arguments")
	if f == nil || f.Kind() != "identifier" || f.Text(src) != fn || args == nil {
		return ""
	}
	as := args.NamedChildren()
	want := 2
	if fn == "getattr" {
		want = 3
	}
	if len(as) != want || fn == "getattr" && syntax.Unparen(as[2]).Kind() != "none" {
		return ""
	}
	obj := syntax.Unparen(as[0])
	name, ok := index.StringLit(syntax.Unparen(as[1]), src)
	if obj == nil || !obj.Is("identifier", "attribute") || !ok || name == "" {
		return ""
	}
	return obj.Text(src) + "." + name
}

// memoGet: local v is first bound by `v = C.get(...)` before body, and
// bound again only inside body; it returns C.
func memoGet(fn *index.Function, v *Node, body *Node, src []byte) *Node {
	if v == nil || v.Kind() != "identifier" || fn.Body == nil {
		return nil
	}
	name := v.Text(src)
	var first *Node
	ok := true
	syntax.Walk(fn.Body, func(n *Node) bool {
		if !ok || n != fn.Body && n.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		if n.Kind() == "assignment" {
			if l := syntax.Unparen(n.Get("left")); l != nil && l.Kind() == "identifier" && l.Text(src) == name {
				switch {
				case n.Start >= body.Start && n.End <= body.End:
				case first == nil && n.End <= body.Start:
					first = n.Get("right")
				default:
					ok = false
				}
			}
		} else {
			for _, t := range index.BindingNames(n, src) {
				if t == name {
					ok = false
				}
			}
		}
		return ok
	})
	if !ok || first == nil {
		return nil
	}
	call := syntax.Unparen(first)
	if call == nil || call.Kind() != "call" {
		return nil
	}
	f := syntax.Unparen(call.Get("function"))
	if f == nil || f.Kind() != "attribute" || f.Get("attribute").Text(src) != "get" {
		return nil
	}
	return f.Get("object")
}

// setsIn: body assigns target (`self.x = ...`; a target ending in "[" is
// a store into that container; lit, when set, the kind of the value
// assigned), directly or, depth levels down, in a method of fn's class
// that body calls on self (`self._grow(n)` assigning `self.max_cached`).
func setsIn(fn *index.Function, body *Node, target, lit string, src []byte, depth int) bool {
	found := false
	syntax.Walk(body, func(n *Node) bool {
		if found || n.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		switch n.Kind() {
		case "assignment", "augmented_assignment":
			l, r := syntax.Unparen(n.Get("left")), n.Get("right")
			if l != nil && r != nil {
				lt := l.Text(src)
				switch {
				case strings.HasSuffix(target, "["):
					found = l.Kind() == "subscript" && strings.HasPrefix(lt, target)
				case lit != "":
					found = lt == target && r.Kind() == lit
				default:
					found = lt == target
				}
			}
		case "call":
			f := syntax.Unparen(n.Get("function"))
			if depth > 0 && fn.Class != nil && f != nil && f.Kind() == "attribute" && strings.HasPrefix(target, "self.") {
				if o := syntax.Unparen(f.Get("object")); o != nil && o.Kind() == "identifier" && o.Text(src) == "self" {
					if m := fn.Class.Methods[f.Get("attribute").Text(src)]; m != nil && m != fn && m.Body != nil {
						found = setsIn(m, m.Body, target, lit, m.File.Src, depth-1)
					}
				}
			}
		}
		return !found
	})
	return found
}

// PassedNone says why code n of captured function fn runs under capture
// only conditionally because it sits in the branch for an absent input
// (`if p is None:`, the else of `if p is not None:`) of a parameter p that
// every captured call passes explicitly by an expression that is not a
// literal (`block_table=ctx.block_table`): the branch runs only if that
// value is None at capture, which the analysis cannot tell ("the capture
// passes `p` as None"). "" otherwise.
func (r *Result) PassedNone(fn *index.Function, n *Node) string {
	if r == nil || fn == nil || fn.Body == nil || n == nil || len(r.passed[fn]) == 0 {
		return ""
	}
	src := fn.File.Src
	for x := n; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil {
			return ""
		}
		var cond *Node
		negated := false
		switch {
		case (p.Kind() == "if_statement" || p.Kind() == "elif_clause") && x.Field() == "consequence":
			cond = p.Get("condition")
		case (x.Kind() == "else_clause" || x.Kind() == "elif_clause") && p.Kind() == "if_statement":
			cond, negated = p.Get("condition"), true
		case p.Kind() == "conditional_expression":
			if kids := p.NamedChildren(); len(kids) == 3 && (x == kids[0] || x == kids[2]) {
				cond, negated = kids[1], x == kids[2]
			}
		}
		if name := noneTest(fn, cond, src, negated); name != "" && r.passed[fn][name] {
			return "the capture passes `" + name + "` as None"
		}
	}
	return ""
}

// noneTest is the parameter p that `p is None` (negated: `p is not None`)
// tests, when fn does not rebind p before the test; "" otherwise.
func noneTest(fn *index.Function, cond *Node, src []byte, negated bool) string {
	name, isNone := NoneTest(cond, src)
	if name == "" || isNone == negated || boundBefore(fn, name, int(syntax.Unparen(cond).Start)) {
		return ""
	}
	return name
}

// NoneTest reads a test of a name against None: `p is None` (isNone: the
// test holds when p is None), `p is not None`, and either under `not`.
// name is "" for any other test.
func NoneTest(cond *Node, src []byte) (name string, isNone bool) {
	cond = syntax.Unparen(cond)
	if cond == nil {
		return "", false
	}
	if cond.Kind() == "not_operator" {
		name, isNone = NoneTest(cond.Get("argument"), src)
		return name, !isNone
	}
	if cond.Kind() != "comparison_operator" {
		return "", false
	}
	kids := cond.NamedChildren()
	if len(kids) != 2 || kids[1].Kind() != "none" {
		return "", false
	}
	v := syntax.Unparen(kids[0])
	if v == nil || v.Kind() != "identifier" {
		return "", false
	}
	switch cond.Operator(src) {
	case "is":
		return v.Text(src), true
	case "is not":
		return v.Text(src), false
	}
	return "", false
}

// OptIn names the flag that code n of fn runs under where a caller opts in
// to it: the branch of `if flag:` (or the right of `flag and ...`) where
// flag is a parameter of fn whose default is False, read before fn binds
// it again ("`use_sync` is true, an opt-in whose default is False").
// For library mode's launcher roots, whose callers are not seen: where the
// capture's own calls are, their constants decide instead (prune.go).
func OptIn(fn *index.Function, n *Node) string {
	if fn == nil || fn.Body == nil || n == nil || fn.Kind == index.TopLevel {
		return ""
	}
	src := fn.File.Src
	flag := func(c *Node) string {
		c = syntax.Unparen(c)
		if c == nil || c.Kind() != "identifier" {
			return ""
		}
		name := c.Text(src)
		var d *Node
		for _, q := range fn.Params {
			if q.Name == name {
				d = q.Default
			}
		}
		if d == nil || d.Text(src) != "False" || Reassigned(fn, name) {
			return ""
		}
		return "`" + name + "` is true, an opt-in whose default is False"
	}
	for x := n; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil {
			return ""
		}
		var c *Node
		switch {
		case (p.Kind() == "if_statement" || p.Kind() == "elif_clause") && x.Field() == "consequence":
			c = p.Get("condition")
		case p.Kind() == "boolean_operator" && x == p.Get("right") && p.Operator(src) == "and":
			c = p.Get("left")
		}
		for c != nil {
			c = syntax.Unparen(c)
			if why := flag(c); why != "" {
				return why
			}
			// `flag and other` opts in as `flag` does.
			if c.Kind() != "boolean_operator" || c.Operator(src) != "and" {
				break
			}
			if why := flag(c.Get("right")); why != "" {
				return why
			}
			c = c.Get("left")
		}
	}
	return ""
}
