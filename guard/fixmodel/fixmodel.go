package fixmodel

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/tensors"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// The fix model: the facts a fix needs before capguard offers it.
//
// A safe fix must not change what the program does, so every fact that makes
// it behaviour-preserving has to be proved by the value model: the new value
// has the old one's shape, dtype, device and layout; it is not a view whose
// aliasing matters; it is not a graph input written later; it does not
// escape and is not updated in place; a persistent buffer is keyed per
// instance and per argument. An unsafe fix needs at least the facts that
// make it run. Where neither holds there is no fix, and the finding says why
// ("no fix: ...").

// NoFix appends the reason a finding has no fix to its message.
func NoFix(msg, why string) string { return msg + "; no fix: " + why }

// TempNoFix says why replacing temporary t with a persistent buffer would
// change what the program does whatever its uses are, or "".
func TempNoFix(p *Pass, t *Temp) string {
	if len(t.Other) > 0 {
		return fmt.Sprintf("the conversion also passes `%s`, which a persistent buffer (made on the source's device, with the source's layout) would drop", short(strings.Join(t.Other, ", ")))
	}
	if t.Reshape != "" {
		return "`" + short(strings.TrimPrefix(t.Reshape, ".")) + "` returns a view of its source whenever the strides allow, so a copy would lose the writes made through it"
	}
	if inComprehension(t.Expr) {
		return "it is made once per item of a comprehension (or lambda), and one buffer per site would hold only the last item"
	}
	return ""
}

// inComprehension reports whether n is evaluated once per item of a
// comprehension or generator, or in a lambda's body.
func inComprehension(n *Node) bool {
	for x := n.Parent(); x != nil; x = x.Parent() {
		switch x.Kind() {
		case "list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression", "lambda":
			return true
		case "function_definition", "class_definition", "module":
			return false
		}
	}
	return false
}

// mayAlias: the conversion returns its source itself when no conversion is
// needed (`.contiguous()` of a contiguous tensor, `.to(dtype)` of a tensor
// of that dtype), so writes through the result reach the caller's tensor.
// A clone never aliases.
func mayAlias(t *Temp) bool { return t.Op != "clone" }

// writtenWhy says how the tensor temporary t may share memory with is
// updated in place after the conversion, when the conversion returns its
// source itself: through the local name it is bound to ("" for a direct
// kernel argument), through the source it converts, or through any local
// aliasing either (`out = x if inplace else torch.empty_like(x)`, a view,
// a slice); by the function (`out.copy_(...)`, `out[i] = ...`, `out += y`),
// as an `out=` argument or with `inplace=True`, by a kernel that stores
// through the parameter it binds (uses: the launches that take t directly),
// or by a project function that writes its parameter in place. unknown
// names a kernel (or a call chain too deep) capguard cannot see into.
func writtenWhy(p *Pass, t *Temp, name string, uses []KernelUse) (why, unknown string) {
	src := p.Src()
	for _, u := range uses {
		w, known := kernelStores(p.Proj, u.Call, u.Index, u.Keyword)
		switch {
		case w:
			return fmt.Sprintf("kernel `%s` stores through the parameter it binds", u.Kernel), ""
		case !known && unknown == "":
			unknown = u.Kernel
		}
	}
	if p.Fn == nil {
		return "", unknown
	}
	if name == "" {
		// `y = x.contiguous()` then `self.prev = y`: the local is the alias.
		if par := t.Expr.Parent(); par != nil && par.Kind() == "assignment" && par.Get("right") == t.Expr {
			if l := par.Get("left"); l != nil && l.Kind() == "identifier" {
				name = l.Text(src)
			}
		}
	}
	// Writes into the result's aliases after the conversion: with a copy,
	// the caller's tensor no longer gets them.
	mine := aliasNames(p.Proj, p.File, p.Fn, []string{name}, t.Expr)
	w, u := writesIn(p.Proj, p.File, p.Fn, mine, int(t.Expr.End), 0)
	if unknown == "" {
		unknown = u
	}
	if w != "" || name == "" {
		return w, unknown
	}
	// Writes into the source's aliases reach the caller either way; they
	// change what the result holds only where it is read after them
	// (`y = x.contiguous()`, `x.add_(1)`, then `y` read). A kernel that reads
	// the result and writes the source in one launch is not that.
	r := aliasRoot(p.File, t.Source)
	if r == nil || len(mine.binds[r.Text(src)]) > 0 {
		return "", unknown
	}
	theirs := aliasNames(p.Proj, p.File, p.Fn, []string{r.Text(src)}, nil)
	for n := range mine.binds {
		delete(theirs.binds, n)
	}
	after := t.Expr.End
	for {
		w, at := firstWrite(p.Proj, p.File, p.Fn, theirs, int(after))
		if w == "" {
			return "", unknown
		}
		if readAfter(p.File, p.Fn, mine, at) {
			return w + ", and `" + name + "` is read after that", unknown
		}
		after = int32(at)
	}
}

// firstWrite is writesIn's first write at or after offset after, and the
// offset where the statement making it ends.
func firstWrite(proj *Project, f *File, fn *Function, names aliasSet, after int) (string, int) {
	for _, s := range fn.BodyStmts() {
		if int(s.End) <= after {
			continue
		}
		var stmts []*Node
		walkCode([]*Node{s}, func(x *Node) bool {
			if int(x.End) <= after {
				return false
			}
			if x.Kind() == "expression_statement" || x.Kind() == "return_statement" {
				stmts = append(stmts, x)
				return false
			}
			return true
		})
		for _, st := range stmts {
			if w, _ := writesInStmts(proj, f, []*Node{st}, names, after, 0); w != "" {
				return w, int(st.End)
			}
		}
	}
	return "", 0
}

// readAfter reports whether a name of names is read after offset at.
func readAfter(f *File, fn *Function, names aliasSet, at int) bool {
	found := false
	walkCode(fn.BodyStmts(), func(x *Node) bool {
		if found || int(x.End) <= at {
			return false
		}
		if int(x.Start) >= at && x.Kind() == "identifier" && names.refers(x, f.Src) {
			if par := x.Parent(); par == nil || !(par.Kind() == "assignment" && par.Get("left") == x) {
				found = true
			}
		}
		return !found
	})
	return found
}

// aliasRoot is the name (or attribute chain of names) whose memory
// expression n may share: n itself stripped of subscripts, views and
// conversions (`x[:, 0].view(-1)` -> x), or nil.
func aliasRoot(f *File, n *Node) *Node {
	for n = Unparen(n); n != nil; n = Unparen(n) {
		switch n.Kind() {
		case "identifier":
			return n
		case "attribute":
			for o := Unparen(n.Get("object")); o != nil; o = Unparen(o.Get("object")) {
				if o.Kind() == "identifier" {
					return n
				}
				if o.Kind() != "attribute" {
					return nil
				}
			}
			return nil
		case "subscript":
			n = n.Get("value")
		case "call":
			recv, name, _ := methodCall(n, f.Src)
			if recv == nil || !aliasMethods[name] {
				return nil
			}
			n = recv
		default:
			return nil
		}
	}
	return nil
}

// mayAliasExpr reports whether the value of expression n may share memory
// with a value base matches: base itself, a subscript (a view), a method
// that may return its receiver or a view of it (aliasMethods, an in-place
// method), a tensor attribute that is a view (`.T`, `.data`), a branch of a
// conditional or boolean operator, an item of a tuple or list, or what a
// call that capguard cannot prove fresh returns when an argument may alias
// (a project function may return its argument; a torch operation outside
// freshOps may be a view). An out-of-place torch operation returns a new
// tensor.
func mayAliasExpr(proj *Project, f *File, n *Node, base func(*Node) bool) bool {
	return mayAliasDepth(proj, f, n, base, 0)
}

func mayAliasDepth(proj *Project, f *File, n *Node, base func(*Node) bool, depth int) bool {
	src := f.Src
	for n = Unparen(n); n != nil; n = Unparen(n) {
		switch {
		case base(n):
			return true
		case n.Kind() == "subscript":
			n = n.Get("value")
		case n.Kind() == "attribute" && torchapi.TensorAttrs[n.Get("attribute").Text(src)]:
			n = n.Get("object")
		case n.Is("conditional_expression", "boolean_operator", "tuple", "list", "expression_list"):
			for _, c := range n.NamedChildren() {
				if mayAliasDepth(proj, f, c, base, depth) {
					return true
				}
			}
			return false
		case n.Kind() == "call":
			args := n.Get("arguments")
			q := f.Qualify(n.Get("function"))
			if strings.HasPrefix(q, "torch.") && tensors.TorchOpFresh(q) && (args == nil || !inplaceTrue(args, src)) {
				return false
			}
			if recv, name, _ := methodCall(n, src); recv != nil && !strings.HasPrefix(q, "torch.") &&
				(aliasMethods[name] || inPlaceName(name)) {
				n = recv
				continue
			}
			if args == nil || freshBuiltins[q] {
				return false
			}
			if !strings.HasPrefix(q, "torch.") && proj != nil && returnsFresh(proj, n, depth) {
				return false
			}
			for _, a := range args.NamedChildren() {
				if a.Kind() == "keyword_argument" {
					a = a.Get("value")
				}
				if mayAliasDepth(proj, f, a, base, depth) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// returnsFresh reports whether call is proved to return no (view of an)
// argument: every value of its callee is a project function (not a kernel,
// not a generator) each of whose return statements may alias none of its
// parameters, followed two calls deep. A callee capguard cannot see may
// return its argument.
func returnsFresh(proj *Project, call *Node, depth int) bool {
	if depth >= 2 {
		return false
	}
	vals := proj.G.Values(Unparen(call.Get("function")))
	if len(vals) == 0 {
		return false
	}
	for _, v := range vals {
		if v.Fn == nil || v.Fn.Kernel || v.Fn.Generator || v.Kind != flow.VFunc && v.Kind != flow.VBound || len(v.Fn.BodyStmts()) == 0 {
			return false
		}
		if !returnsFreshFn(proj, v.Fn, depth) {
			return false
		}
	}
	return true
}

// freshFnKey keys returnsFreshFn's answer for a function at a depth.
type freshFnKey struct {
	fn    *Function
	depth int
}

// returnsFreshFn reports whether no return of fn may alias its parameters
// (or self) at depth: a property of the function alone, worked out once a
// run (FlagGems' and lmdeploy's launchers ask it of the same few callees
// from thousands of call sites).
func returnsFreshFn(proj *Project, fn *Function, depth int) bool {
	return proj.Memo(freshFnKey{fn, depth}, func() any {
		var params []string
		for _, prm := range fn.Params {
			params = append(params, prm.Name)
		}
		if self := fn.Self(); self != "" {
			params = append(params, self)
		}
		names := aliasNamesDepth(proj, fn.File, fn, params, nil, depth+1)
		fsrc := fn.File.Src
		base := func(n *Node) bool { return names.refers(n, fsrc) }
		aliased := false
		walkCode(fn.BodyStmts(), func(x *Node) bool {
			if aliased {
				return false
			}
			if x.Kind() == "return_statement" {
				for _, c := range x.NamedChildren() {
					if mayAliasDepth(proj, fn.File, c, base, depth+1) {
						aliased = true
					}
				}
				return false
			}
			return true
		})
		return !aliased
	}).(bool)
}

// loopAround reports whether a loop of the function holding both a and b
// encloses them: then a can run after b.
func loopAround(a, b *Node) bool {
	for x := a.Parent(); x != nil && !x.Is("function_definition", "lambda", "class_definition", "module"); x = x.Parent() {
		if x.Is("for_statement", "while_statement") && b.Start >= x.Start && b.End <= x.End {
			return true
		}
	}
	return false
}

// freshBuiltins are Python builtins that never return (a view of) a
// tensor argument.
var freshBuiltins = map[string]bool{"len": true, "int": true, "float": true, "bool": true, "str": true,
	"isinstance": true, "hasattr": true, "id": true, "range": true, "print": true, "repr": true, "hash": true, "callable": true}

// inPlaceName: a method (or function) named like torch's in-place
// operations (`copy_`, `index_put_`), which write their receiver (or first
// argument) and return it.
func inPlaceName(name string) bool {
	return len(name) > 1 && strings.HasSuffix(name, "_") && !strings.HasSuffix(name, "__")
}

// inplaceTrue reports whether arguments args pass `inplace=True`.
func inplaceTrue(args *Node, src []byte) bool {
	v := keyword(args, "inplace", src)
	return v != nil && Unparen(v).Kind() == "true"
}

// aliasSet maps a name (or an attribute chain, as text) to the bindings
// that make it an alias (nil: a root, an alias wherever it is named), and
// to the other bindings of that name, which end an alias's reach.
type aliasSet struct {
	binds, kills map[string][]*Node
}

// refers reports whether name reference n may see an aliasing binding:
// one made before it (or in a loop around both), not on a branch of an
// `if` that excludes n's branch, and not rebound to something else on
// every path between them (a binding after it in a block holding n).
func (s aliasSet) refers(n *Node, src []byte) bool {
	if !n.Is("identifier", "attribute") {
		return false
	}
	name := n.Text(src)
	for _, b := range s.binds[name] {
		if b == nil {
			return true
		}
		if !(b.End <= n.Start || loopAround(b, n)) || exclusive(b, n) || returnsBetween(b, n) {
			continue
		}
		killed := false
		for _, k := range s.kills[name] {
			blk := StmtOf(k).Parent()
			if b.End <= k.Start && k.End <= n.Start && blk != nil && n.Start >= blk.Start && n.End <= blk.End {
				killed = true
			}
		}
		if !killed {
			return true
		}
	}
	return false
}

// returnsBetween reports whether every path from a leaves the function
// before reaching b: a block holding a (not b) returns or raises after a.
func returnsBetween(a, b *Node) bool {
	for x := a.Parent(); x != nil && !x.Is("function_definition", "lambda", "class_definition", "module"); x = x.Parent() {
		if x.Kind() != "block" || b.Start >= x.Start && b.End <= x.End {
			continue
		}
		for _, st := range x.NamedChildren() {
			if st.Start >= a.End && st.Is("return_statement", "raise_statement") {
				return true
			}
		}
	}
	return false
}

// exclusive reports whether a and b sit on different branches of one `if`
// statement (and no loop around both runs them both).
func exclusive(a, b *Node) bool {
	for x := a.Parent(); x != nil && !x.Is("function_definition", "lambda", "class_definition", "module"); x = x.Parent() {
		if !x.Is("if_statement") || b.Start < x.Start || b.End > x.End {
			continue
		}
		clause := func(n *Node) *Node {
			for _, c := range x.NamedChildren() {
				if c != x.Get("condition") && n.Start >= c.Start && n.End <= c.End {
					return c
				}
			}
			return nil
		}
		ca, cb := clause(a), clause(b)
		return ca != nil && cb != nil && ca != cb && !loopAround(x, x)
	}
	return false
}

// aliasNames closes roots (names, or attribute chains as text) under the
// local bindings of fn that may alias them (mayAliasExpr): assignments,
// unpackings, for targets and walrus bindings anywhere in its body. With
// from, bindings that end before it outside any loop around both are
// left out (they cannot hold from's value).
func aliasNames(proj *Project, f *File, fn *Function, roots []string, from *Node) aliasSet {
	return aliasNamesDepth(proj, f, fn, roots, from, 0)
}

func aliasNamesDepth(proj *Project, f *File, fn *Function, roots []string, from *Node, depth int) aliasSet {
	src := f.Src
	set := aliasSet{binds: map[string][]*Node{}, kills: map[string][]*Node{}}
	for _, r := range roots {
		if r != "" {
			set.binds[r] = []*Node{from} // bound by from (the conversion itself), else everywhere
		}
	}
	base := func(n *Node) bool { return set.refers(n, src) }
	seen := map[*Node]bool{}
	for changed := true; changed; {
		changed = false
		walkCode(fn.BodyStmts(), func(x *Node) bool {
			var l, r *Node
			switch x.Kind() {
			case "assignment", "for_statement":
				l, r = x.Get("left"), x.Get("right")
			case "named_expression":
				l, r = x.Get("name"), x.Get("value")
			}
			if l == nil || r == nil || seen[x] || from != nil && x.End <= from.Start && !loopAround(x, from) || !mayAliasDepth(proj, f, r, base, depth) {
				return true
			}
			seen[x] = true
			changed = true
			at := x
			if x.Kind() == "for_statement" {
				at = l // the target is bound before the body runs
			}
			targets := map[*Node]bool{}
			markTargets(l, targets)
			for t := range targets {
				name := t.Text(src)
				set.binds[name] = append(set.binds[name], at)
			}
			return true
		})
	}
	// Every other binding of an alias's name ends its reach.
	walkCode(fn.BodyStmts(), func(x *Node) bool {
		var l *Node
		switch x.Kind() {
		case "assignment", "for_statement":
			l = x.Get("left")
		case "named_expression":
			l = x.Get("name")
		}
		if l == nil || seen[x] {
			return true
		}
		targets := map[*Node]bool{}
		markTargets(l, targets)
		for t := range targets {
			if name := t.Text(src); len(set.binds[name]) > 0 && x.Kind() == "assignment" {
				set.kills[name] = append(set.kills[name], x)
			}
		}
		return true
	})
	return set
}

// writesIn says how fn writes in place, at or after offset after, a tensor
// that may alias one of names (aliasNames), or "" with unknown naming a
// kernel (or a call chain deeper than three) whose writes capguard cannot
// see. Writes into a project function's parameter count where the call
// passes an alias, followed three calls deep.
func writesIn(proj *Project, f *File, fn *Function, names aliasSet, after, depth int) (why, unknown string) {
	return writesInStmts(proj, f, fn.BodyStmts(), names, after, depth)
}

// writesInStmts is writesIn over statements stmts.
func writesInStmts(proj *Project, f *File, stmts []*Node, names aliasSet, after, depth int) (why, unknown string) {
	return writesInStmtsHow(proj, f, stmts, names, after, depth, true)
}

// writesInStmtsHow is writesInStmts; without items, an indexed assignment
// in stmts themselves does not count (it may set an item of a list of
// buffers, not write a tensor); in the functions they call it does.
func writesInStmtsHow(proj *Project, f *File, stmts []*Node, names aliasSet, after, depth int, items bool) (why, unknown string) {
	return writesInWalk(proj, f, stmts, names, after, depth, items, false)
}

// writesInWalk is writesInStmtsHow; strict, a call that takes an alias
// and that it cannot see into (an extension op, a method of an outside
// object) is unknown too: it may write what it is given. Out-of-place
// torch functions, Python's builtins and a tensor's own methods are seen.
func writesInWalk(proj *Project, f *File, stmts []*Node, names aliasSet, after, depth int, items, strict bool) (why, unknown string) {
	src := f.Src
	base := func(n *Node) bool { return names.refers(n, src) }
	alias := func(n *Node) bool { return n != nil && mayAliasExpr(proj, f, n, base) }
	walkCode(stmts, func(x *Node) bool {
		if why != "" {
			return false
		}
		if int(x.End) <= after {
			return false
		}
		if int(x.Start) < after {
			return true
		}
		switch x.Kind() {
		case "assignment", "augmented_assignment":
			l := x.Get("left")
			switch {
			case l == nil:
			case l.Kind() == "subscript" && items && alias(l.Get("value")),
				x.Kind() == "augmented_assignment" && alias(l),
				l.Kind() == "attribute" && l.Get("attribute").Text(src) == "data" && alias(l.Get("object")):
				why = "`" + short(x.Text(src)) + "` writes it in place"
			}
		case "call":
			args := x.Get("arguments")
			if args == nil || args.Kind() != "argument_list" {
				return true
			}
			recv, meth, _ := methodCall(x, src)
			if recv != nil && inPlaceName(meth) && alias(recv) {
				why = "`" + short(x.Text(src)) + "` writes it in place"
				return false
			}
			for _, a := range args.NamedChildren() {
				if a.Kind() == "keyword_argument" && a.Get("name").Text(src) == "out" && alias(a.Get("value")) {
					why = "it is passed as `out=` to `" + short(x.Text(src)) + "`, which writes it in place"
					return false
				}
			}
			pos := positional(args)
			taken := false
			for _, a := range args.NamedChildren() {
				v := a
				if a.Kind() == "keyword_argument" {
					v = a.Get("value")
				}
				taken = taken || alias(v)
			}
			if !taken {
				return true
			}
			callee := Unparen(x.Get("function"))
			// `inplace=True` writes the op's input, its first argument
			// (torch's functional ops, and the project ops that follow
			// them: `fused_moe(x, w1, w2, inplace=True)` writes x, not the
			// weights). A project function's own code says what else it
			// writes (followed below); an outside one is taken to write
			// every tensor it is given.
			if inplaceTrue(args, src) && (len(pos) > 0 && alias(pos[0]) || !projectFunctions(proj, callee)) {
				why = "`" + short(x.Text(src)) + "` writes it in place (`inplace=True`)"
				return false
			}
			if kernel, ok := proj.KernelName(f, x); ok {
				i := 0
				for _, a := range args.NamedChildren() {
					kw, v := "", a
					if a.Kind() == "keyword_argument" {
						kw, v = a.Get("name").Text(src), a.Get("value")
					}
					if alias(v) {
						idx := i
						if kw != "" {
							idx = -1
						}
						w, known := kernelStores(proj, x, idx, kw)
						switch {
						case w:
							why = fmt.Sprintf("kernel `%s` stores through its argument `%s`", kernel, short(v.Text(src)))
						case !known && unknown == "":
							unknown = kernel
						}
					}
					if a.Kind() != "keyword_argument" {
						i++
					}
				}
				return why == ""
			}
			if recv == nil && len(pos) > 0 && alias(pos[0]) && callee != nil && inPlaceName(lastName(callee.Text(src))) {
				why = "`" + short(x.Text(src)) + "` writes it in place"
				return false
			}
			for _, v := range proj.G.Values(callee) {
				if v.Fn == nil || v.Fn.Kernel || v.Kind != flow.VFunc && v.Kind != flow.VBound {
					continue
				}
				shift := 0
				if v.Kind == flow.VBound {
					shift = 1 // the receiver binds the first parameter
				}
				var params []string
				for i, a := range args.NamedChildren() {
					if a.Kind() == "keyword_argument" {
						if alias(a.Get("value")) && v.Fn.HasParam(a.Get("name").Text(src)) {
							params = append(params, a.Get("name").Text(src))
						}
						continue
					}
					if a.Kind() == "list_splat" || a.Kind() == "dictionary_splat" {
						continue
					}
					if k := i + shift; alias(a) && k < len(v.Fn.Params) && v.Fn.Params[k].Kind != index.VarArgs && v.Fn.Params[k].Kind != index.VarKw {
						params = append(params, v.Fn.Params[k].Name)
					}
				}
				if len(params) == 0 {
					continue
				}
				if depth >= 3 {
					if unknown == "" {
						unknown = v.Fn.Name
					}
					continue
				}
				w, u := writesInWalk(proj, v.Fn.File, v.Fn.BodyStmts(), aliasNames(proj, v.Fn.File, v.Fn, params, nil), 0, depth+1, true, strict)
				if w != "" {
					why = "`" + short(x.Text(src)) + "` passes it to `" + v.Fn.Name + "`, where " + w
					return false
				}
				if unknown == "" {
					unknown = u
				}
			}
			if strict && unknown == "" && !projectFunctions(proj, callee) && callee != nil {
				// Code capguard cannot see into takes it: it may write it,
				// unless it is an out-of-place torch function or a builtin.
				q := f.Qualify(callee)
				if !(strings.HasPrefix(q, "torch.") && !inPlaceName(lastName(q))) && !freshBuiltins[q] {
					unknown = short(callee.Text(src))
				}
			}
		}
		return why == ""
	})
	return why, unknown
}

// SeesNoWrite: call (in fn) hands the tensor local name holds to project
// code only (every function its callee may be), which writesIn follows to
// its end, three calls deep, and finds writing nothing into it: no write,
// no kernel whose stores it cannot read, no chain deeper than it follows.
func SeesNoWrite(proj *Project, f *File, fn *Function, call *Node, name string) bool {
	if call == nil || call.Kind() != "call" {
		return false
	}
	callee := Unparen(call.Get("function"))
	vs := proj.G.Values(callee)
	if len(vs) == 0 {
		return false
	}
	for _, v := range vs {
		if v.Fn == nil || v.Fn.Kernel || v.Kind != flow.VFunc && v.Kind != flow.VBound {
			return false
		}
	}
	why, unknown := writesInWalk(proj, f, []*Node{call}, aliasNames(proj, f, fn, []string{name}, nil), 0, 0, true, true)
	return why == "" && unknown == ""
}

// projectFunctions: callee holds a project function (or a bound method of
// one) whose body writesIn can follow.
func projectFunctions(proj *Project, callee *Node) bool {
	for _, v := range proj.G.Values(callee) {
		if v.Fn != nil && !v.Fn.Kernel && (v.Kind == flow.VFunc || v.Kind == flow.VBound) {
			return true
		}
	}
	return false
}

// KernelUse is one kernel launch argument: call's positional argument index,
// or its keyword.
type KernelUse struct {
	Call    *Node
	Kernel  string
	Index   int
	Keyword string
}

// KernelUsesOf lists the kernel launches in the function that take local
// name as an argument.
func KernelUsesOf(p *Pass, name string) []KernelUse {
	src := p.Src()
	var out []KernelUse
	for _, call := range p.Calls() {
		kernel, ok := p.Proj.KernelName(p.File, call)
		if !ok || call.Get("arguments") == nil {
			continue
		}
		i := 0
		for _, a := range call.Get("arguments").NamedChildren() {
			if a.Kind() == "keyword_argument" {
				if isName(Unparen(a.Get("value")), name, src) {
					out = append(out, KernelUse{Call: call, Kernel: kernel, Index: -1, Keyword: a.Get("name").Text(src)})
				}
				continue
			}
			if isName(Unparen(a), name, src) {
				out = append(out, KernelUse{Call: call, Kernel: kernel, Index: i})
			}
			i++
		}
	}
	return out
}

// kernelStores reports whether the Triton kernel launched by call stores
// (tl.store, tl.atomic_*) through the parameter that its positional
// argument index (or keyword) binds; known is false when capguard cannot
// see the kernel's body.
func kernelStores(proj *Project, call *Node, index int, kw string) (stores, known bool) {
	callee := Unparen(call.Get("function"))
	if callee == nil || callee.Kind() != "subscript" {
		return false, false
	}
	var kfn *Function
	for _, v := range proj.G.Values(Unparen(callee.Get("value"))) {
		if v.Fn != nil && v.Fn.Kernel {
			kfn = v.Fn
			break
		}
	}
	if kfn == nil {
		return false, false
	}
	param := kw
	if param == "" {
		if index < 0 || index >= len(kfn.Params) {
			return false, false
		}
		param = kfn.Params[index].Name
	} else if !kfn.HasParam(param) {
		return false, false
	}
	for _, prm := range kfn.Params {
		if prm.Name == param && prm.Annotation != nil && strings.Contains(prm.Annotation.Text(kfn.File.Src), "constexpr") {
			return false, true // a compile-time constant, never a pointer
		}
	}
	// The checker parses kernel bodies as `...` (syntax.BlankKernels): parse
	// the kernel's own text again, from its def to the next top-level line,
	// once a run for each kernel and parameter that a launch asks about (a
	// kernel is launched from many places with many temporaries: a parse
	// for each made a file of 3,000 launchers spend 3.5 of its 6 s here).
	r := proj.Memo(kernelParamKey{kfn, param}, func() any {
		ksrc, body := kernelBody(kfn)
		s, k := paramStores(param, ksrc, body)
		return [2]bool{s, k}
	}).([2]bool)
	return r[0], r[1]
}

// kernelParamKey is kernelStores' memo key: a kernel and one parameter.
type kernelParamKey struct {
	fn    *Function
	param string
}

// KernelText is the text of kfn that kernelStores reads (its def to the
// next top-level line): the only part of a blanked kernel body (device
// code) the analysis reads.
func KernelText(kfn *Function) []byte {
	src := kfn.File.Src
	start := lineStartOf(src, int(kfn.Def.Start))
	end := lineEndOf(src, int(kfn.Def.Start))
	for end < len(src) {
		next := lineEndOf(src, end)
		line := src[end:next]
		if len(line) > 0 && line[0] != ' ' && line[0] != '\t' && line[0] != '\n' && line[0] != '\r' && line[0] != '#' && line[0] != ')' {
			break
		}
		end = next
	}
	return src[start:end]
}

// KernelSummary is all that the analysis reads from a kernel's text
// (KernelText): for each name in its def's parameter list, whether the
// kernel stores through it and whether that is known (paramStores, as
// kernelStores asks it). Two versions of a kernel with one signature and
// one summary give the same findings (the results cache's digest,
// guard.FileDigest, compares it in place of a blanked body's text).
func KernelSummary(text []byte) string {
	ksrc, def, body := parseKernel(text)
	if def == nil {
		return "?"
	}
	var names []string
	seen := map[string]bool{}
	if ps := def.Get("parameters"); ps != nil {
		Walk(ps, func(x *Node) bool {
			if x.Kind() == "identifier" && !seen[x.Text(ksrc)] {
				seen[x.Text(ksrc)] = true
				names = append(names, x.Text(ksrc))
			}
			return true
		})
	}
	var b strings.Builder
	for _, name := range names {
		stores, known := paramStores(name, ksrc, body)
		fmt.Fprintf(&b, "%s:%v:%v;", name, stores, known)
	}
	return b.String()
}

// paramStores reports whether the kernel body (its statements parsed from
// ksrc) stores through the parameter param; known is false without a
// body.
func paramStores(param string, ksrc []byte, body []*Node) (stores, known bool) {
	if body == nil {
		return false, false
	}
	// The names derived from the parameter (pointer arithmetic, block
	// pointers), to a fixed point.
	derived := map[string]bool{param: true}
	mentionsAny := func(n *Node) bool {
		found := false
		Walk(n, func(x *Node) bool {
			if fn := Unparen(x.Get("function")); x.Kind() == "call" && fn != nil && lastName(fn.Text(ksrc)) == "load" {
				return false // a value loaded through the pointer is data, not an address derived from it
			}
			if x.Kind() == "identifier" && derived[x.Text(ksrc)] {
				if par := x.Parent(); par == nil || par.Kind() != "attribute" || x.Field() != "attribute" {
					found = true
				}
			}
			return !found
		})
		return found
	}
	for changed := true; changed; {
		changed = false
		walkCode(body, func(x *Node) bool {
			if x.Kind() == "assignment" || x.Kind() == "augmented_assignment" {
				if l := x.Get("left"); l != nil && l.Kind() == "identifier" && !derived[l.Text(ksrc)] && mentionsAny(x.Get("right")) {
					derived[l.Text(ksrc)] = true
					changed = true
				}
			}
			return true
		})
	}
	stores = false
	walkCode(body, func(x *Node) bool {
		if stores || x.Kind() != "call" {
			return !stores
		}
		fn := Unparen(x.Get("function"))
		if fn == nil {
			return true
		}
		name := lastName(fn.Text(ksrc))
		if name != "store" && !strings.HasPrefix(name, "atomic_") {
			return true
		}
		args := x.Get("arguments")
		if args == nil {
			return true
		}
		ptr := keyword(args, "pointer", ksrc)
		if ptr == nil {
			if pos := positional(args); len(pos) > 0 {
				ptr = pos[0]
			}
		}
		if ptr == nil || mentionsAny(ptr) {
			stores = true // a store whose pointer capguard cannot read counts too
		}
		return !stores
	})
	return stores, true
}

// InstanceKey is the persistent-buffer key of a value stored on an object
// that outlives the call: the instance the method runs on, or (outside
// replay-prep and post-capture code) an object the function is given (a
// per-layer config or state passed as a parameter). Every such object (every layer of a model) gets its own
// buffer, as it had its own tensor. A value stored on anything else keys
// by the site alone.
func InstanceKey(p *Pass, obj *Node, site string) string {
	src := p.Src()
	if p.Fn == nil || obj == nil {
		return strconv.Quote(site)
	}
	o := Unparen(obj)
	root := attrRoot(o)
	if root == nil || root.Kind() != "identifier" {
		return strconv.Quote(site)
	}
	name := root.Text(src)
	owned := name == p.Fn.Self() && name != ""
	// A parameter's object keys the buffer only where each object is read by
	// its own code (captured or launcher code: a layer's state). Code that
	// prepares a replay writes for a graph that captured one address: a
	// per-step object there (metadata rebuilt every step) would get a new
	// buffer every step, so the site alone stays the key.
	if p.Ctx != ReplayPrep && p.Ctx != PostCapture {
		for _, prm := range p.Fn.Params {
			if prm.Name == name && prm.Kind != index.VarArgs && prm.Kind != index.VarKw {
				owned = true
			}
		}
	}
	if !owned {
		return strconv.Quote(site)
	}
	return fmt.Sprintf("(id(%s), %s)", o.Text(src), strconv.Quote(site))
}

// SameTensorMeta reports whether expression y is proved to be a new tensor
// with the shape, dtype, device and layout of x (text): `torch.zeros_like(x)`
// and its kin without options, `x.clone()`, `x.detach().clone()`. Then
// `x.data.copy_(y)` changes nothing a reader can see but the values.
func SameTensorMeta(p *Pass, y *Node, x string) bool {
	src := p.Src()
	y = Unparen(y)
	if y == nil || y.Kind() != "call" {
		return false
	}
	args := y.Get("arguments")
	if args == nil {
		return false
	}
	same := func(n *Node) bool {
		n = Unparen(n)
		for n != nil {
			if n.Text(src) == x {
				return true
			}
			if n.Kind() == "attribute" && n.Get("attribute").Text(src) == "data" {
				n = Unparen(n.Get("object"))
				continue
			}
			if recv, name, a := methodCall(n, src); recv != nil && name == "detach" && len(a.NamedChildren()) == 0 {
				n = Unparen(recv)
				continue
			}
			return false
		}
		return false
	}
	if recv, name, _ := methodCall(y, src); recv != nil && name == "clone" && len(args.NamedChildren()) == 0 {
		return same(recv)
	}
	q := p.File.Qualify(y.Get("function"))
	switch q {
	case "torch.zeros_like", "torch.ones_like", "torch.empty_like":
		pos := positional(args)
		return len(pos) == 1 && len(args.NamedChildren()) == 1 && same(pos[0])
	case "torch.full_like":
		pos := positional(args)
		return len(pos) == 2 && len(args.NamedChildren()) == 2 && same(pos[0]) && numberLiteral(pos[1], src) == "float"
	}
	return false
}

// numberLiteral is "int" or "float" for a (signed) number literal, else "".
func numberLiteral(n *Node, src []byte) string {
	n = Unparen(n)
	if n != nil && n.Kind() == "unary_operator" {
		n = Unparen(n.Get("argument"))
	}
	if n == nil {
		return ""
	}
	switch n.Kind() {
	case "integer":
		return "int"
	case "float":
		return "float"
	}
	return ""
}

// LazyAllocation says how assignment `obj.attr = value` is guarded as a
// (re)allocation: it sits under an `if` whose test asks whether the
// attribute is None, falsy, or of another shape, size or dtype
// (`if self.buf is None or self.buf.shape[0] < n:`). Copying into the old
// tensor there would fail on None and never grow it.
func LazyAllocation(p *Pass, assign, left *Node) string {
	src := p.Src()
	want := left.Text(src)
	for x := assign.Parent(); x != nil && !x.Is("function_definition", "lambda", "class_definition"); x = x.Parent() {
		if !x.Is("if_statement", "elif_clause", "conditional_expression", "while_statement") {
			continue
		}
		cond := x.Get("condition")
		if cond == nil {
			continue
		}
		found := false
		Walk(cond, func(y *Node) bool {
			if found {
				return false
			}
			if y.Text(src) == want {
				found = true
			}
			return !found
		})
		if found {
			return "it is guarded by `" + short(cond.Text(src)) + "`, a (re)allocation of the buffer, not a rebinding of the captured tensor"
		}
	}
	return ""
}

// BoundToNone reports whether some assignment of the project binds
// attribute attr to None: then the attribute does not always hold a
// tensor, and a copy into it can fail.
//
// The attributes any assignment binds to None are gathered in one walk of
// the project's trees, the first time a rule asks (Project.Memo): asked
// once a CG201 finding, a walk of every file that mentions the attribute
// took 4 s of a 1,500-file kernel library's rules (2026-12-04).
func BoundToNone(proj *Project, attr string) bool {
	return proj.Memo(noneBoundKey{}, func() any { return noneBoundAttrs(proj) }).(map[string]bool)[attr]
}

type noneBoundKey struct{}

// noneBoundAttrs are the attribute names that some assignment of the
// project binds to None (`x.attr = None`).
func noneBoundAttrs(proj *Project) map[string]bool {
	out := map[string]bool{}
	for _, f := range proj.Files {
		if f.Tree == nil || f.Tree.Root == nil || !bytes.Contains(f.Src, []byte("None")) {
			continue
		}
		Walk(f.Tree.Root, func(x *Node) bool {
			if x.Kind() == "assignment" {
				l, r := x.Get("left"), Unparen(x.Get("right"))
				if l != nil && l.Kind() == "attribute" && r != nil && r.Kind() == "none" {
					if a := l.Get("attribute"); a != nil {
						out[a.Text(f.Src)] = true
					}
				}
			}
			return true
		})
	}
	return out
}

// WrittenAfter says how the function keeps using local name as a graph
// input after capture region r: it writes into it after the region
// (`name.copy_(new)`, `name[:n] = ...`, `name.fill_(0)`), a nested function
// (a replay closure) writes into it, or one defined after the region start
// reads it. Then the tensor is one of the graph's static inputs, not a
// value derived from them.
func WrittenAfter(fn *Function, name string, r *Region, src []byte) string {
	why := ""
	inRegion := func(n *Node) bool { return n.Start >= r.Node.Start && n.End <= r.Node.End }
	written := func(n *Node) string {
		switch n.Kind() {
		case "call":
			if recv, meth, _ := methodCall(n, src); recv != nil && strings.HasSuffix(meth, "_") && !strings.HasSuffix(meth, "__") && isName(Unparen(recv), name, src) {
				return "it is written in place (`" + short(n.Text(src)) + "`)"
			}
		case "assignment", "augmented_assignment":
			if l := n.Get("left"); l != nil && l.Kind() == "subscript" && isName(Unparen(l.Get("value")), name, src) {
				return "it is written in place (`" + short(n.Text(src)) + "`)"
			}
		}
		return ""
	}
	Walk(fn.Body, func(n *Node) bool {
		if why != "" || inRegion(n) {
			return false
		}
		if n.Is("function_definition", "lambda") && n != fn.Def {
			Walk(n, func(y *Node) bool {
				if why == "" {
					if w := written(y); w != "" {
						why = w + " in a nested function (a replay closure)"
					}
				}
				return why == ""
			})
			if why == "" && n.Start >= r.Node.Start && mentions(n, name, src) {
				why = "a nested function defined after the capture (a replay closure) keeps using it"
			}
			return false
		}
		if n.Start >= r.Node.End {
			if w := written(n); w != "" {
				why = w + " after the region"
			}
		}
		return why == ""
	})
	return why
}

// Rebinds reports whether n binds name (an assignment, a for target, a with
// ... as, a walrus): uses after n read that binding, not an earlier one.
func Rebinds(n *Node, name string, src []byte) bool {
	found := false
	isT := map[*Node]bool{}
	walkCode([]*Node{n}, func(x *Node) bool {
		var t *Node
		switch x.Kind() {
		case "assignment", "for_statement", "for_in_clause":
			t = x.Get("left")
		case "named_expression":
			t = x.Get("name")
		case "as_pattern":
			for _, a := range x.All("alias") {
				markTargets(a, isT)
			}
		}
		if t != nil {
			markTargets(t, isT)
		}
		return true
	})
	for x := range isT {
		if x.Text(src) == name {
			found = true
		}
	}
	return found
}

// CheckedTempFix is the persistent-buffer fix of temporary t under key,
// with applicability app at most, once the fix model's facts are checked:
// nil and the reason where the fix would change what the program does.
// name is the local the temporary is bound to ("" for a direct kernel
// argument) and uses the kernel launches that read it.
func CheckedTempFix(p *Pass, t *Temp, key string, app Applicability, name string, uses []KernelUse) (*Fix, string) {
	src := p.Src()
	if why := TempNoFix(p, t); why != "" {
		return nil, why
	}
	if app == Unsafe && inLoop(t.Expr) {
		return nil, "it is made in a loop and outlives the iteration, so one buffer per site would hold only the last iteration's value"
	}
	fix := tempFixKeyed(t, key, app, src)
	if mayAlias(t) {
		op := "`." + t.Op + "()`"
		w, unknown := writtenWhy(p, t, name, uses)
		if w != "" {
			if strings.HasSuffix(w, "is read after that") {
				return nil, op + " returns its source itself when no conversion is needed, and " + w + ": a copy would not see that write"
			}
			return nil, op + " returns its source itself when no conversion is needed, and " + w + ": a copy would keep those writes from the caller's tensor"
		}
		if unknown != "" && fix.Applicability == Safe {
			fix.Applicability = Unsafe
			fix.Message += "; unsafe: " + op + " returns its source itself when no conversion is needed, and capguard cannot see whether kernel `" + unknown + "` writes it (then a copy would keep the write from the caller's tensor)"
		}
	}
	return fix, ""
}

// kept says how local name, bound by a, outlives the call: returned or
// yielded, stored in an attribute, an item or a container, saved for the
// backward pass (ctx.save_for_backward), or "".
func KeptHow(p *Pass, name string, a *assignment) string {
	src := p.Src()
	how := ""
	walkCode(bodyStmts(p.Fn), func(n *Node) bool {
		if how != "" {
			return false
		}
		if n.Start < a.Stmt.End {
			return true
		}
		switch n.Kind() {
		case "return_statement", "yield":
			if mentions(n, name, src) {
				how = "returned"
			}
		case "assignment":
			if l := n.Get("left"); l != nil && l.Kind() != "identifier" && l.Kind() != "pattern_list" && mentions(n.Get("right"), name, src) {
				how = "stored in `" + short(l.Text(src)) + "`"
			}
		case "call":
			if _, meth, args := methodCall(n, src); containerStore(p, n) && mentions(args, name, src) {
				how = "added to a container"
			} else if meth == "save_for_backward" && mentions(args, name, src) {
				// autograd keeps it for the backward: a later call (another
				// micro-batch's forward) would overwrite a shared buffer first.
				how = "saved for the backward pass"
			}
		}
		return how == ""
	})
	return how
}

// KeptObject is the object whose attribute temporary e is stored on
// (`obj.attr = e`, directly), or nil.
func KeptObject(p *Pass, e *Node) *Node {
	for x := e; x.Parent() != nil; x = x.Parent() {
		par := x.Parent()
		if par.Is("parenthesized_expression") {
			continue
		}
		if par.Kind() == "assignment" && par.Get("right") == x {
			if l := par.Get("left"); l != nil && l.Kind() == "attribute" {
				return l.Get("object")
			}
		}
		return nil
	}
	return nil
}

// kernelBody parses a Triton kernel's source again (its body is blanked in
// the checker's tree) and returns that text and the body's statements.
func kernelBody(kfn *Function) ([]byte, []*Node) {
	kernelParses.Add(1)
	text, _, body := parseKernel(KernelText(kfn))
	return text, body
}

// kernelParses counts kernelBody's parses (KernelParses).
var kernelParses atomic.Int64

// KernelParses is how many kernel texts the launch checks have parsed since
// the process started (for tests: each kernel and parameter once a run).
func KernelParses() int64 { return kernelParses.Load() }

// parseKernel parses a kernel's text (KernelText): its def and the body's
// statements, nil when it holds none.
func parseKernel(text []byte) ([]byte, *Node, []*Node) {
	tree, err := Parse(text)
	if err != nil || tree == nil {
		return nil, nil, nil
	}
	var def *Node
	Walk(tree.Root, func(x *Node) bool {
		if def == nil && x.Kind() == "function_definition" {
			def = x
		}
		return def == nil
	})
	if def == nil || def.Get("body") == nil {
		return nil, nil, nil
	}
	return text, def, def.Get("body").NamedChildren()
}

// FreshAllocation: n allocates a new tensor from a shape (`torch.zeros(...)`,
// `torch.empty_like(x)`, `x.new_zeros(n)`), not from values.
func FreshAllocation(p *Pass, n *Node) bool {
	if n == nil || n.Kind() != "call" {
		return false
	}
	if q := p.File.Qualify(n.Get("function")); allocators[q] || likeFactories[q] {
		return true
	}
	_, name, _ := methodCall(n, p.Src())
	switch name {
	case "new_zeros", "new_empty", "new_ones", "new_full", "new_empty_strided":
		return true
	}
	return false
}

// containerStore reports whether call puts its arguments in a container
// (`.append(x)`, `.add(x)` on a set): not a torch operation
// (`torch.ops.aten.add(a, b)`), and for the names torch.Tensor also has,
// a receiver known to be a container.
func containerStore(p *Pass, call *Node) bool {
	recv, meth, _ := methodCall(call, p.Src())
	if recv == nil || !torchapi.ContainerStores[meth] || strings.HasPrefix(p.File.Qualify(call.Get("function")), "torch.") {
		return false
	}
	return !torchapi.TensorHomonyms[meth] || HoldsContainer(p, recv)
}

// attrHeldElsewhere says where the file keeps the value attribute attr holds
// beyond the attribute itself: stored in another attribute or an item,
// returned, or added to a container, directly, through a view or a
// conversion that may return it, or through a local
// (`sample = self.latents.to(torch.float32)` ... `self.last_sample =
// sample`). A persistent buffer bound to attr is overwritten in place by the
// next store, which such a holder would see: no fix. A local that is only
// computed with is no holder.
func AttrHeldElsewhere(p *Pass, attr string, store *Node) string {
	src := p.Src()
	aliasOf := func(n *Node, base func(*Node) bool) bool { return mayAliasExpr(p.Proj, p.File, n, base) }
	isAttr := func(n *Node) bool { return n.Kind() == "attribute" && n.Get("attribute").Text(src) == attr }
	// kept reports where stmts keep a value base matches.
	var kept func(stmts []*Node, after int, base func(*Node) bool, depth int) string
	kept = func(stmts []*Node, after int, base func(*Node) bool, depth int) string {
		where := ""
		walkCode(stmts, func(x *Node) bool {
			if where != "" {
				return false
			}
			if int(x.Start) < after {
				return true
			}
			switch x.Kind() {
			case "assignment":
				l, r := x.Get("left"), x.Get("right")
				if l == nil || r == nil || !aliasOf(r, base) {
					return true
				}
				switch {
				case l.Kind() == "attribute" && l.Get("attribute").Text(src) == attr:
					// x.attr = x.attr.to(...): the attribute itself
				case l.Kind() == "identifier":
					name := l.Text(src)
					// A local of the storing function that still holds the
					// old value and is read after the store.
					if store != nil && x.End <= store.Start && inAny(stmts, store) {
						walkCode(stmts, func(y *Node) bool {
							if where == "" && y.Start >= store.End && isName(y, name, src) {
								where = "`" + name + "` still holds its previous value after the store (line " + strconv.Itoa(posOf(p.File, int(y.Start)).Line) + ")"
							}
							return where == ""
						})
					}
					if where == "" && depth < 3 {
						if w := kept(stmts, int(x.End), func(n *Node) bool { return isName(n, name, src) }, depth+1); w != "" {
							where = w
						}
					}
				default:
					where = "`" + short(x.Text(src)) + "` keeps its previous value"
				}
			case "return_statement", "yield":
				for _, c := range x.NamedChildren() {
					if aliasOf(c, base) {
						where = "`" + short(x.Text(src)) + "` hands its value out"
					}
				}
			case "call":
				if _, _, args := methodCall(x, src); args != nil && containerStore(p, x) {
					for _, a := range args.NamedChildren() {
						if aliasOf(a, base) {
							where = "`" + short(x.Text(src)) + "` keeps its value"
						}
					}
				}
			}
			return where == ""
		})
		return where
	}
	where := ""
	Walk(p.File.Tree.Root, func(x *Node) bool {
		if where != "" {
			return false
		}
		if x.Kind() == "function_definition" {
			if body := x.Get("body"); body != nil {
				where = kept(body.NamedChildren(), 0, isAttr, 0)
			}
		}
		return where == ""
	})
	return where
}

// ConstructorWhy says why a persistent buffer cannot keep the captured
// address of a value stored on an object this call is constructing
// (`self.x = ...` in `__init__`): a buffer per instance is a new one for
// every object, which no graph captured, and one per site would be shared
// by every object alive at once (one per captured batch size).
func ConstructorWhy(p *Pass, obj *Node) string {
	if p.Fn == nil || obj == nil || p.Fn.Self() == "" || !isName(Unparen(obj), p.Fn.Self(), p.Src()) {
		return ""
	}
	switch p.Fn.Name {
	case "__init__", "__new__", "__post_init__", "__attrs_post_init__":
		return "it is stored on the object `" + p.Fn.Name + "` is making: a buffer per instance would be a new one for every object, which no graph captured, and one per site would be shared by every object alive"
	}
	return ""
}

// HoldsContainer reports whether the receiver of a container store that
// torch.Tensor also has (`.add()`, `.put()`) is a container: a project
// container the analysis made, or an object of a class outside torch (a
// queue, a deque). A tensor's or an unknown receiver's is arithmetic.
func HoldsContainer(p *Pass, recv *Node) bool {
	for _, v := range p.Values(recv) {
		switch {
		case v.Kind == flow.VTensor:
			return false
		case v.Kind == flow.VCont, v.Kind == flow.VExtInst && !strings.HasPrefix(v.Ext, "torch"):
			return true
		}
	}
	return false
}

func StmtOf(n *Node) *Node {
	for n.Parent() != nil && n.Parent().Kind() == "expression_statement" {
		n = n.Parent()
	}
	return n
}

// WrittenFrom says how fn writes in place, at or after offset after, into
// the tensor local name holds, as WrittenIn says it: through a project
// function it hands the tensor to, too.
func WrittenFrom(proj *Project, f *File, fn *Function, name string, after int) string {
	why, _ := writesInStmtsHow(proj, f, fn.BodyStmts(), aliasNames(proj, f, fn, []string{name}, nil), after, 0, true)
	return why
}

// WrittenIn says how statements stmts of fn write in place into the tensor
// (or list of tensors) local name or attribute chain holds, or "": a method
// that writes it (`name.copy_(x)`), an indexed assignment (with items),
// `out=name`, a Triton kernel that stores through it, or a project function
// it is passed to that does, three calls deep (writesIn).
func WrittenIn(proj *Project, f *File, fn *Function, stmts []*Node, name string, items bool) string {
	why, _ := writesInStmtsHow(proj, f, stmts, aliasNames(proj, f, fn, []string{name}, nil), 0, 0, items)
	return why
}
