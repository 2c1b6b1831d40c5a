package rules

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

var ruleOutputKept = &Rule{
	ID: "CG205", Name: "output-kept-across-replay", Severity: SeverityError,
	Summary: "a graph's output is kept across a later call that replays the same graph into the same storage",
	Doc:     doc("cg205_output_kept_across_replay.md"),
}

// CG205 looks at every function of the project (the code that keeps an
// output runs eagerly, around the calls that replay): it runs once, after
// the per-function passes (After).
func init() { ruleOutputKept.After = keptOutputs }

// A graph source is a call whose result is storage a CUDA graph owns: the
// next call replays the graph into it. Sources are calls of a function
// torch.compile compiles in a mode that captures CUDA graphs (a
// decorator, or a name or `self` attribute bound to torch.compile(f,
// mode=...)), and calls of a project function that returns such a call's
// result unchanged (a pass-through: the storage leaves it too).
type graphSource struct {
	// fn is the compiled function (nil for a compiled name or attribute
	// bound to something the index does not know).
	fn *index.Function
	// key names the graph: the same key at two calls is the same graph
	// and the same storage.
	key string
	// what says what compiles it, for the message.
	what string
	// site is the call of the compiled function where its output enters
	// eager code, in siteFn: where a clone of the output fixes every
	// caller that keeps it.
	site   *Node
	siteFn *index.Function
	// via are the pass-through functions between the kept call and the
	// site, outermost first.
	via []*index.Function
	// runner: a hand-made runner's replay (no check in PyTorch warns of
	// the overwritten read), not a compiled function's.
	runner bool
	// assumes are what the source rests on (a conditional torch.compile
	// binding, a pass-through's other returns, a call resolved by name).
	assumes []string
}

// keptSources is the project's knowledge of graph sources, made once per
// analysis.
type keptSources struct {
	a *analysis.Analysis
	// compiled are the functions a graph-capturing torch.compile decorates.
	compiled map[*index.Function]string
	// names are module globals bound to a graph-capturing torch.compile
	// of something, by "file\x00name"; attrs are `self` attributes so
	// bound, by "class\x00attr". The value is the binding's assumption
	// ("" when the binding is unconditional module-level code).
	names, attrs map[string]compiledBinding
	// locals are the assignments that bind a local name to a
	// graph-capturing torch.compile.
	locals map[*Node]compiledBinding
	// localFns are the functions with such an assignment.
	localFns map[*index.Function]bool
	// through memoizes passThrough.
	through map[*index.Function]*graphSource
	// yields memoizes yieldsRaw.
	yields map[*index.Function]*graphSource
	// runners memoizes runner.
	runners map[*index.Function]string
	busy    map[*index.Function]bool
}

type compiledBinding struct {
	what, assume, key string
}

func keptOutputs(a *analysis.Analysis, _ []*Diagnostic) []*Diagnostic {
	ks := &keptSources{a: a, compiled: map[*index.Function]string{}, names: map[string]compiledBinding{},
		attrs: map[string]compiledBinding{}, locals: map[*Node]compiledBinding{}, localFns: map[*index.Function]bool{}, runners: map[*index.Function]string{}, yields: map[*index.Function]*graphSource{}, through: map[*index.Function]*graphSource{}, busy: map[*index.Function]bool{}}
	if !ks.collect() {
		return nil
	}
	type found struct {
		d    *Diagnostic
		free bool
	}
	bySite := map[*Node]*found{}
	var order []*Node
	for _, f := range a.Proj.Files {
		for _, fn := range f.Funcs {
			if fn.Body == nil || fn.Kind == index.Lambda || fn.Device {
				continue
			}
			for _, k := range ks.keptIn(fn) {
				d := ks.diagnostic(fn, k)
				prev := bySite[k.src.site]
				switch {
				case prev == nil:
					bySite[k.src.site] = &found{d: d, free: len(d.Assumes) == 0}
					order = append(order, k.src.site)
				case !prev.free && len(d.Assumes) == 0:
					// A proved keeper says it: the finding is an error.
					prev.d, prev.free = d, true
				}
			}
		}
	}
	out := make([]*Diagnostic, 0, len(order))
	for _, s := range order {
		out = append(out, bySite[s].d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Start.Offset < out[j].Start.Offset
	})
	return out
}

// collect finds the compiled functions and bindings; false when the
// project has none (most do not: nothing else is looked at).
func (ks *keptSources) collect() bool {
	foundAny := false
	for _, f := range ks.a.Proj.Files {
		if bytes.Contains(f.Src, []byte(".replay(")) {
			foundAny = true // a graph runner may return a graph's storage (runner)
		}
		if !mentionsCompile(f.Src) {
			continue
		}
		src := f.Src
		for _, fn := range f.Funcs {
			for _, d := range fn.Decorators {
				e := Unparen(d)
				if e != nil && e.Kind() == "decorator" && len(e.NamedChildren()) > 0 {
					e = Unparen(e.NamedChildren()[0])
				}
				if w := graphCompileCall(f, e); w != "" {
					ks.compiled[fn] = w
					foundAny = true
				}
			}
		}
		Walk(f.Tree.Root, func(n *Node) bool {
			if n.Kind() != "assignment" {
				return true
			}
			left, right := Unparen(n.Get("left")), Unparen(n.Get("right"))
			if left == nil || right == nil || right.Kind() != "call" {
				return true
			}
			w := graphCompileCall(f, right)
			if w == "" {
				// torch.compile(mode=...)(f): the compiler's result called.
				if inner := Unparen(right.Get("function")); inner != nil && inner.Kind() == "call" {
					w = graphCompileCall(f, inner)
				}
			}
			if w == "" {
				return true
			}
			fn := innermostAt(f, int(n.Start)) // nil at module level
			cond := bindingCondition(fn, n, src)
			switch {
			case left.Kind() == "identifier":
				name := left.Text(src)
				if fn != nil && fn.Kind != index.TopLevel && !fn.Globals[name] {
					// A local: the calls of it in this function.
					as := ""
					if cond != "" {
						as = fmt.Sprintf("`%s` is the compiled function bound %s", name, cond)
					}
					ks.localFns[fn] = true
					ks.locals[n] = compiledBinding{what: w, assume: as, key: fmt.Sprintf("%s:%s.%s@%d", f.Path, fn.Qual, name, n.Start)}
					foundAny = true
					return true
				}
				assume := ""
				if fn != nil && fn.Kind != index.TopLevel {
					assume = fmt.Sprintf("`%s` is the compiled function %s binds", name, fn.Qual)
					if cond != "" {
						assume += " " + cond
					}
				} else if cond != "" {
					assume = fmt.Sprintf("`%s` is the compiled function bound %s", name, cond)
				}
				ks.names[f.Path+"\x00"+name] = compiledBinding{what: w, assume: assume, key: f.Path + ":" + name}
				foundAny = true
			case left.Kind() == "attribute":
				obj, attr := Unparen(left.Get("object")), left.Get("attribute")
				if obj == nil || attr == nil || obj.Kind() != "identifier" || obj.Text(src) != "self" || fn == nil || fn.Class == nil {
					return true
				}
				assume := fmt.Sprintf("`self.%s` is the compiled callable %s binds", attr.Text(src), fn.Qual)
				if cond != "" {
					assume += " " + cond
				}
				k := fn.Class.Name + "\x00" + attr.Text(src)
				ks.attrs[k] = compiledBinding{what: w, assume: assume, key: f.Path + ":" + fn.Class.Name + "." + attr.Text(src)}
				foundAny = true
			}
			return true
		})
	}
	return foundAny
}

// mentionsCompile: the file can hold a torch.compile in a mode that
// captures graphs (a cheap test before its functions are looked at).
func mentionsCompile(src []byte) bool {
	s := string(src)
	return strings.Contains(s, "compile") || strings.Contains(s, "optimize")
}

// graphCompileCall says how call compiles with CUDA graphs, or "".
func graphCompileCall(f *File, call *Node) string {
	if call == nil || call.Kind() != "call" {
		return ""
	}
	callee := Unparen(call.Get("function"))
	if callee == nil || !torchapi.GraphCompilers[f.Qualify(callee)] {
		return ""
	}
	return contexts.CompileGraphKeywords(call.Get("arguments"), f.Src)
}

// bindingCondition names the statements between fn's entry and
// statement n that it runs under (each one's head, quoted), or "".
func bindingCondition(fn *index.Function, n *Node, src []byte) string {
	var conds []string
	for x := n; x != nil; x = x.Parent() {
		if fn != nil && x == fn.Body {
			break
		}
		p := x.Parent()
		if p == nil {
			break
		}
		if p.Is("if_statement", "elif_clause", "else_clause", "while_statement", "for_statement", "try_statement", "except_clause", "with_statement") && x.Field() != "condition" {
			head := strings.TrimSpace(headLine(p.Text(src)))
			conds = append(conds, "`"+short(head)+"`")
		}
	}
	if len(conds) == 0 {
		return ""
	}
	return "under " + strings.Join(conds, " in ")
}

// headLine is s's first line.
func headLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// sourceOf says whether call, in fn, is a graph source, or nil.
func (ks *keptSources) sourceOf(fn *index.Function, call *Node) *graphSource {
	if call == nil || call.Kind() != "call" {
		return nil
	}
	f := fn.File
	src := f.Src
	callee := Unparen(call.Get("function"))
	if callee == nil {
		return nil
	}
	// A name or `self` attribute bound to a compiled function
	// (compiledRef), or a parameter a caller passes one for (paramSource).
	if b, ok := ks.compiledRef(fn, callee); ok {
		var as []string
		if b.assume != "" {
			as = append(as, b.assume)
		}
		return &graphSource{key: b.key, what: b.what, site: call, siteFn: fn, assumes: as}
	}
	if callee.Kind() == "identifier" && fn.HasParam(callee.Text(src)) && fn.Locals[callee.Text(src)] && !fn.Globals[callee.Text(src)] {
		if s := ks.paramSource(fn, callee.Text(src), call); s != nil {
			return s
		}
	}
	// A call the call graph resolves: to a compiled function, or to a
	// pass-through of one.
	edges := ks.a.Proj.G.Callees(call)
	if len(edges) != 1 {
		return nil
	}
	e := edges[0]
	if e.Callee == nil {
		return nil
	}
	var as []string
	if e.Kind != analysis.Resolved {
		as = append(as, fmt.Sprintf("the call resolves to %s (%s)", e.Callee.FullName(), e.Kind))
	}
	if w, ok := ks.compiled[e.Callee]; ok {
		return &graphSource{fn: e.Callee, key: e.Callee.FullName(), what: w, site: call, siteFn: fn, assumes: as}
	}
	if w := ks.runner(e.Callee); w != "" {
		return &graphSource{fn: e.Callee, key: e.Callee.FullName(), what: w, site: call, siteFn: fn, assumes: as, runner: true}
	}
	inner := ks.passThrough(e.Callee)
	if inner == nil {
		return nil
	}
	out := *inner
	out.via = append([]*index.Function{e.Callee}, inner.via...)
	out.assumes = append(append([]string{}, as...), inner.assumes...)
	return &out
}

// paramSource: name, a parameter of fn that call calls, is a compiled
// function a caller of fn passes for it (`generate(...,
// step_fn=fast_step)` with `fast_step = torch.compile(step, mode=...)` in
// the caller), and fn binds it anew only as a default (`if step_fn is
// None: step_fn = step`), or not at all. The source assumes that caller's
// value is the one called (other callers may pass another function, or
// none). nil where no caller passes a compiled one.
func (ks *keptSources) paramSource(fn *index.Function, name string, call *Node) *graphSource {
	idx := -1
	for i, p := range fn.Params {
		if p.Name == name && p.Kind != index.VarArgs && p.Kind != index.VarKw {
			idx = i
		}
	}
	if idx < 0 {
		return nil
	}
	// Bound anew only as a default (contexts.ReboundOnlyIfNone), or not at all.
	if contexts.Reassigned(fn, name) && !contexts.ReboundOnlyIfNone(fn, name) {
		return nil
	}
	for _, e := range ks.a.Proj.G.In[fn] {
		if e.Site == nil || e.Site.Kind() != "call" || e.Caller == nil || e.Caller.Body == nil {
			continue
		}
		arg := Unparen(paramArg(e.Site, fn, idx, e.Caller.File.Src))
		if arg != nil && arg.Kind() == "keyword_argument" {
			arg = Unparen(arg.Get("value"))
		}
		b, ok := ks.compiledRef(e.Caller, arg)
		if !ok {
			continue
		}
		as := []string{fmt.Sprintf("`%s` is the compiled function `%s` passes at line %d", name, e.Caller.Qual, posOf(e.Caller.File, int(e.Site.Start)).Line)}
		if b.assume != "" {
			as = append(as, b.assume)
		}
		return &graphSource{key: b.key, what: b.what, site: call, siteFn: fn, assumes: as}
	}
	return nil
}

// compiledRef is the compiled binding that expression arg, in fn, reads:
// a local whose last binding before arg is a compiler's (only a function
// that binds a local to a compiler is walked), a module global of fn's
// file so bound, or a `self` attribute so bound in fn's class.
func (ks *keptSources) compiledRef(fn *index.Function, arg *Node) (compiledBinding, bool) {
	if arg == nil {
		return compiledBinding{}, false
	}
	src := fn.File.Src
	switch arg.Kind() {
	case "identifier":
		name := arg.Text(src)
		if fn.Locals[name] && !fn.Globals[name] {
			if !ks.localFns[fn] {
				return compiledBinding{}, false
			}
			if asg := lastBindingBefore(fn, name, arg.Start); asg != nil {
				b, ok := ks.locals[asg]
				return b, ok
			}
			return compiledBinding{}, false
		}
		b, ok := ks.names[fn.File.Path+"\x00"+name]
		return b, ok
	case "attribute":
		obj, attr := Unparen(arg.Get("object")), arg.Get("attribute")
		if obj != nil && attr != nil && obj.Kind() == "identifier" && obj.Text(src) == "self" && fn.Class != nil {
			b, ok := ks.attrs[fn.Class.Name+"\x00"+attr.Text(src)]
			return b, ok
		}
	}
	return compiledBinding{}, false
}

// runner says how fn hands out a graph's storage, or "": a graph runner
// that replays a graph (`g.replay()` in its own code) and then returns a
// tensor the program keeps (an attribute, an item or slice of one, or a
// name of an enclosing function: the static output the capture bound),
// not one it computes after the replay.
func (ks *keptSources) runner(fn *index.Function) string {
	if w, ok := ks.runners[fn]; ok {
		return w
	}
	ks.runners[fn] = ""
	if fn.Kind != index.Def || fn.Body == nil || fn.Generator {
		return ""
	}
	src := fn.File.Src
	var replay *Node
	walkCode([]*Node{fn.Body}, func(n *Node) bool {
		if replay != nil {
			return false
		}
		if n.Kind() == "call" {
			if f := Unparen(n.Get("function")); f != nil && f.Kind() == "attribute" && f.Get("attribute").Text(src) == "replay" &&
				len(n.Get("arguments").NamedChildren()) == 0 {
				replay = n
			}
		}
		return true
	})
	if replay == nil {
		return ""
	}
	w := ""
	walkCode([]*Node{fn.Body}, func(n *Node) bool {
		if w != "" || n.Kind() != "return_statement" || n.Start < replay.End {
			return w == ""
		}
		kids := n.NamedChildren()
		if len(kids) != 1 {
			return false
		}
		v := Unparen(kids[0])
		vals := []*Node{v}
		if v.Is("tuple", "expression_list") {
			vals = v.NamedChildren()
		}
		for _, x := range vals {
			if kept := keptStorage(fn, Unparen(x), src); kept != "" {
				w = fmt.Sprintf("%s replays a graph and returns `%s`, which the graph writes on every replay", fn.Qual, short(kept))
				return false
			}
		}
		return false
	})
	ks.runners[fn] = w
	return w
}

// keptStorage: x is storage the program keeps past the call (an attribute
// chain, an item or slice or view of one, or a name fn does not bind),
// said as its text, or "".
func keptStorage(fn *index.Function, x *Node, src []byte) string {
	for x != nil {
		switch {
		case x.Kind() == "subscript":
			x = Unparen(x.Get("value"))
			continue
		case x.Kind() == "call":
			f := Unparen(x.Get("function"))
			if f != nil && f.Kind() == "attribute" && viewMethods[f.Get("attribute").Text(src)] {
				x = Unparen(f.Get("object"))
				continue
			}
			return ""
		case x.Kind() == "attribute":
			if root := attrRoot(x); root != nil && root.Kind() == "identifier" {
				return x.Text(src)
			}
			return ""
		case x.Kind() == "identifier":
			if name := x.Text(src); !fn.Locals[name] {
				return name
			}
			return ""
		}
		return ""
	}
	return ""
}

// passThrough: fn returns a graph source's result unchanged (`return
// self.compiled(x)`, or a name bound to it and returned), so its callers
// get the graph's storage; nil when it does not. Where fn also returns
// other values, the source rests on the path that returns it.
func (ks *keptSources) passThrough(fn *index.Function) *graphSource {
	if s, ok := ks.through[fn]; ok {
		return s
	}
	if ks.busy[fn] || fn.Kind != index.Def || fn.Body == nil || fn.Generator || fn.Async || ks.compiled[fn] != "" {
		return nil
	}
	ks.busy[fn] = true
	defer delete(ks.busy, fn)
	src := fn.File.Src
	var found *graphSource
	returns, others := 0, 0
	walkCode([]*Node{fn.Body}, func(n *Node) bool {
		if n.Kind() != "return_statement" {
			return true
		}
		returns++
		kids := n.NamedChildren()
		if len(kids) != 1 {
			others++
			return false
		}
		v := Unparen(kids[0])
		var s *graphSource
		if v.Kind() == "call" {
			s = ks.sourceOf(fn, v)
		} else if v.Kind() == "identifier" {
			if c := onlyBinding(fn, v.Text(src)); c != nil {
				s = ks.sourceOf(fn, c)
			}
		}
		if s == nil {
			others++
		} else if found == nil {
			found = s
		}
		return false
	})
	if found != nil && others > 0 {
		cp := *found
		cp.assumes = append(append([]string{}, found.assumes...), fmt.Sprintf("%s returns the graph's output (it returns other values on %d of its %d returns)", fn.Qual, others, returns))
		found = &cp
	}
	ks.through[fn] = found
	return found
}

// lastBindingBefore is the last statement of fn's code before offset off
// that binds name (in source order), or nil.
func lastBindingBefore(fn *index.Function, name string, off int32) *Node {
	src := fn.File.Src
	var last *Node
	walkCode([]*Node{fn.Body}, func(x *Node) bool {
		if x.Start >= off {
			return false
		}
		switch x.Kind() {
		case "assignment", "augmented_assignment", "for_statement", "with_item", "named_expression":
			if mentionsTarget(x, name, src) {
				last = x
			}
		}
		return true
	})
	return last
}

// onlyBinding is the call a local name of fn is bound to by its one
// assignment, or nil.
func onlyBinding(fn *index.Function, name string) *Node {
	if !plainLocal(fn, name) {
		return nil
	}
	src := fn.File.Src
	var call *Node
	n := 0
	walkCode([]*Node{fn.Body}, func(x *Node) bool {
		switch x.Kind() {
		case "assignment", "augmented_assignment", "for_statement", "with_item", "named_expression":
			if mentionsTarget(x, name, src) {
				n++
				if x.Kind() == "assignment" {
					if l := Unparen(x.Get("left")); l != nil && l.Kind() == "identifier" {
						if r := Unparen(x.Get("right")); r != nil && r.Kind() == "call" {
							call = r
						}
					}
				}
			}
		}
		return true
	})
	if n != 1 {
		return nil
	}
	return call
}

// mentionsTarget: x binds name (its left side, target or alias names it).
func mentionsTarget(x *Node, name string, src []byte) bool {
	var t *Node
	switch x.Kind() {
	case "assignment", "augmented_assignment":
		t = x.Get("left")
	case "for_statement":
		t = x.Get("left")
	case "with_item":
		if v := x.Get("value"); v != nil && v.Kind() == "as_pattern" {
			t = v.Get("alias")
		}
	case "named_expression":
		t = x.Get("name")
	}
	if t == nil {
		return false
	}
	targets := map[*Node]bool{}
	markTargets(t, targets)
	for y := range targets {
		if y.Text(src) == name {
			return true
		}
	}
	return false
}

// kept is one graph source call whose result fn keeps across a later call
// of the same graph.
type keptOut struct {
	call *Node // the kept call in fn
	src  *graphSource
	// holder is where the result is kept ("the list `chunks`", "`a`");
	// later says what replays the graph again before the read.
	holder, later string
	// feed, instead of a holder: the argument that passes the output back
	// to the same call in the loop's next round (fedBack).
	feed    string
	assumes []string
}

// keptIn finds, in fn's own code, the graph source calls whose result is
// kept, raw, in a list or dict or a name, across a later call of the same
// graph, and read after it:
//
//   - appended to (or stored in) a local list or dict bound before the
//     loop the call is in, which is read after the loop: the loop's next
//     round calls again (assumed: the loop runs more than once);
//   - the body of a list comprehension or generator whose result is used
//     (assumed the same);
//   - kept in a container or a name, then the same graph called again
//     further down, then the container or the name read.
func (ks *keptSources) keptIn(fn *index.Function) []keptOut {
	src := fn.File.Src
	var calls []*Node
	var sources []*graphSource
	walkCode([]*Node{fn.Body}, func(n *Node) bool {
		if n.Kind() == "call" {
			if s := ks.sourceOf(fn, n); s != nil {
				calls = append(calls, n)
				sources = append(sources, s)
			}
		}
		return true
	})
	var out []keptOut
	out = append(out, ks.collectedGenerators(fn)...)
	for i, c := range calls {
		s := sources[i]
		n0 := len(out)
		out = ks.keptCall(fn, c, s, calls, sources, i, out)
		if len(out) == n0 {
			// Nothing kept in a holder: fed back as the next call's input?
			if arg, as := fedBack(fn, c, s, src); arg != "" {
				out = append(out, keptOut{call: c, src: s, feed: arg, later: "the loop's next round",
					assumes: append([]string{"the loop runs more than once"}, as...)})
			}
		}
	}
	return out
}

// keptCall appends to out what keptIn finds of graph source call c (the
// i-th of calls, whose sources are sources) kept in a holder.
func (ks *keptSources) keptCall(fn *index.Function, c *Node, s *graphSource, calls []*Node, sources []*graphSource, i int, out []keptOut) []keptOut {
	src := fn.File.Src
	{
		// Later calls of the same graph in fn, after c.
		var laterCall *Node
		for j, c2 := range calls {
			if j != i && sources[j].key == s.key && c2.Start > c.End {
				laterCall = c2
				break
			}
		}
		holder, holderNode, stmt := keptHolder(fn, c, src)
		if holder == "" {
			return out
		}
		// A comprehension keeps every round's result in the list it makes.
		if holderNode == nil {
			return append(out, keptOut{call: c, src: s, holder: holder, later: "the comprehension's next round",
				assumes: []string{"the comprehension runs more than once"}})
		}
		name := holderNode.Text(src)
		// The loop c is in, inside fn, with the holder bound before it.
		if loop := bodyLoop(fn, c); loop != nil && boundBefore(fn, name, loop, src) && !isNameTarget(stmt, name, src) {
			if readAfter(fn, name, loop.End, src) {
				return append(out, keptOut{call: c, src: s, holder: holder, later: "the loop's next round",
					assumes: []string{"the loop runs more than once"}})
			}
		}
		if laterCall != nil && readAfter(fn, name, laterCall.End, src) && !(isNameTarget(stmt, name, src) && reboundBetween(fn, name, stmt.End, laterCall.End, src)) {
			var as []string
			if guarded(fn, laterCall, c) {
				as = append(as, fmt.Sprintf("the call at line %d runs", posOf(fn.File, int(laterCall.Start)).Line))
			}
			out = append(out, keptOut{call: c, src: s, holder: holder, later: fmt.Sprintf("the call at line %d", posOf(fn.File, int(laterCall.Start)).Line), assumes: as})
		}
	}
	return out
}

// fedBack finds, for call c of a compiled function (a CUDA Graph Trees
// source, not a hand-made runner, whose replay-prep copies its inputs) in
// a loop of fn, an output passed back to c as its input in the loop's
// next round: c's result bound raw to a name (or unpacked into names: each
// element of a tuple the graph returns is its storage), or a name bound
// after c to a raw view of one (`cur = tok.view(1, -1)`), that is c's
// argument, with no binding of that name to anything else between. The
// argument's text and what it assumes (a rebinding ahead of c in the loop
// under a condition), or "". On the GPU (bench/probes/compiled_feedback.py)
// the next call raises "accessing tensor output of CUDAGraphs that has
// been overwritten by a subsequent run"; a clone runs clean.
func fedBack(fn *index.Function, c *Node, s *graphSource, src []byte) (string, []string) {
	if s.runner {
		return "", nil
	}
	loop := bodyLoop(fn, c)
	if loop == nil || loop.Get("body") == nil {
		return "", nil
	}
	// The raw result and the assignment that binds it.
	v := rawResult(c, src)
	if v == nil {
		return "", nil
	}
	asg := v.Parent()
	for asg != nil && asg.Kind() == "parenthesized_expression" {
		asg = asg.Parent()
	}
	if asg == nil || asg.Kind() != "assignment" || Unparen(asg.Get("right")) != v {
		return "", nil
	}
	held := map[string]bool{}
	switch left := Unparen(asg.Get("left")); {
	case left == nil:
		return "", nil
	case left.Kind() == "identifier":
		held[left.Text(src)] = true
	case left.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list"):
		for _, e := range left.NamedChildren() {
			if e.Kind() == "identifier" {
				held[e.Text(src)] = true
			}
		}
	}
	// raw: x is a held name, or a subscript or view of one.
	var raw func(x *Node) bool
	raw = func(x *Node) bool {
		x = Unparen(x)
		switch {
		case x == nil:
			return false
		case x.Kind() == "identifier":
			return held[x.Text(src)]
		case x.Kind() == "subscript":
			return raw(x.Get("value"))
		case x.Kind() == "call":
			recv, meth, _ := methodCall(x, src)
			return recv != nil && viewMethods[meth] && raw(recv)
		}
		return false
	}
	// The assignments of the loop body, in order: after c they carry the
	// output on or drop it; before c (the next round's path to it) they
	// drop it, unless a condition holds them.
	var asgs []*Node
	walkCode([]*Node{loop.Get("body")}, func(x *Node) bool {
		if x.Kind() == "assignment" || x.Kind() == "augmented_assignment" {
			asgs = append(asgs, x)
		}
		return true
	})
	bind := func(x *Node, keep bool) {
		l := Unparen(x.Get("left"))
		if l == nil {
			return
		}
		names := []*Node{l}
		if l.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list") {
			names = l.NamedChildren()
		}
		for _, t := range names {
			if t.Kind() == "identifier" {
				held[t.Text(src)] = keep && x.Kind() == "assignment" && len(names) == 1 && raw(x.Get("right"))
			}
		}
	}
	for _, x := range asgs {
		if x.Start > asg.End {
			bind(x, true)
		}
	}
	var as []string
	for _, x := range asgs {
		if x.End > asg.Start {
			break
		}
		l := Unparen(x.Get("left"))
		if l == nil || l.Kind() != "identifier" || !held[l.Text(src)] {
			continue
		}
		if keptStmt(x) != nil && keptStmt(x).Parent() == loop.Get("body") {
			held[l.Text(src)] = false // rebound on every round before c
			continue
		}
		as = append(as, fmt.Sprintf("the round does not bind `%s` anew before the call (%s)", l.Text(src), strings.TrimPrefix(bindingCondition(fn, x, src), "under ")))
	}
	args := c.Get("arguments")
	if args == nil {
		return "", nil
	}
	for _, a := range args.NamedChildren() {
		e := a
		if a.Kind() == "keyword_argument" {
			e = a.Get("value")
		}
		if e != nil && raw(e) {
			return a.Text(src), as
		}
	}
	return "", nil
}

// collectedGenerators finds, in fn's own code, the calls of a generator
// that yields a graph's output raw (yieldsRaw) whose items fn collects:
// `list(gen(...))`, `tuple(gen(...))`, a comprehension that keeps the
// loop's name (`[c for c in gen(...)]`), or a for loop over it that
// appends its name to a local list read after the loop. The generator's
// next round calls the graph again (assumed: it yields more than once).
func (ks *keptSources) collectedGenerators(fn *index.Function) []keptOut {
	src := fn.File.Src
	var out []keptOut
	walkCode([]*Node{fn.Body}, func(n *Node) bool {
		if n.Kind() != "call" {
			return true
		}
		edges := ks.a.Proj.G.Callees(n)
		if len(edges) != 1 || edges[0].Callee == nil || !edges[0].Callee.Generator {
			return true
		}
		gen := edges[0].Callee
		s := ks.yieldsRaw(gen)
		if s == nil {
			return true
		}
		p := n.Parent()
		for p != nil && p.Kind() == "parenthesized_expression" {
			p = p.Parent()
		}
		holder := ""
		switch {
		case p != nil && p.Kind() == "argument_list" && len(p.NamedChildren()) == 1:
			if c := p.Parent(); c != nil && c.Kind() == "call" {
				if f := c.Get("function").Text(src); (f == "list" || f == "tuple") && exprUsed(c) {
					holder = "the " + f + " it makes of `" + gen.Qual + "`'s items"
				}
			}
		case p != nil && p.Kind() == "for_in_clause" && p.Get("right") == n:
			comp := p.Parent()
			left := Unparen(p.Get("left"))
			if comp != nil && comp.Kind() == "list_comprehension" && left != nil && left.Kind() == "identifier" {
				if b := Unparen(comp.Get("body")); b != nil && b.Kind() == "identifier" && b.Text(src) == left.Text(src) && exprUsed(comp) {
					holder = "the list this comprehension makes of `" + gen.Qual + "`'s items"
				}
			}
		case p != nil && p.Kind() == "for_statement" && p.Get("right") == n:
			left := Unparen(p.Get("left"))
			if left != nil && left.Kind() == "identifier" {
				if h := appendsName(fn, p.Get("body"), left.Text(src), src); h != "" && readAfter(fn, h, p.End, src) {
					holder = "the list `" + h + "`"
				}
			}
		}
		if holder == "" {
			return true
		}
		cp := *s
		cp.via = append([]*index.Function{gen}, s.via...)
		out = append(out, keptOut{call: n, src: &cp, holder: holder, later: "the generator's next round",
			assumes: []string{"the generator yields more than once"}})
		return true
	})
	return out
}

// exprUsed: the value of expression e is used (not a bare statement).
func exprUsed(e *Node) bool {
	p := e.Parent()
	return p != nil && p.Kind() != "expression_statement"
}

// appendsName is X where body appends name to a local list X
// (`X.append(name)`), or "".
func appendsName(fn *index.Function, body *Node, name string, src []byte) string {
	h := ""
	walkCode([]*Node{body}, func(x *Node) bool {
		if h != "" {
			return false
		}
		if x.Kind() == "call" {
			if t := appendTarget(x, src); t != nil && containerLocal(fn, t.Text(src), src) {
				args := x.Get("arguments").NamedChildren()
				if a := Unparen(args[len(args)-1]); a != nil && a.Kind() == "identifier" && a.Text(src) == name {
					h = t.Text(src)
				}
			}
		}
		return true
	})
	return h
}

// yieldsRaw: generator fn yields a graph's output raw (`yield y` for a
// name some binding of which is a graph source's result or a subscript or
// view of one; `yield from kept[...]` for a local list it appends such
// names to), or nil. The source then rests on the binding's path where
// the name has other bindings too.
func (ks *keptSources) yieldsRaw(fn *index.Function) *graphSource {
	if s, ok := ks.yields[fn]; ok {
		return s
	}
	if ks.busy[fn] || fn.Body == nil {
		return nil
	}
	ks.busy[fn] = true
	defer delete(ks.busy, fn)
	src := fn.File.Src
	var found *graphSource
	walkCode([]*Node{fn.Body}, func(n *Node) bool {
		if found != nil {
			return false
		}
		if n.Kind() != "yield" {
			return true
		}
		kids := n.NamedChildren()
		if len(kids) != 1 {
			return false
		}
		v := Unparen(kids[0])
		from := strings.HasPrefix(strings.TrimSpace(n.Text(src)), "yield from")
		for v != nil && v.Kind() == "subscript" && from {
			v = Unparen(v.Get("value"))
		}
		switch {
		case v == nil:
		case v.Kind() == "call" && !from:
			found = ks.sourceOf(fn, v)
		case v.Kind() == "identifier" && !from:
			found = ks.rawName(fn, v.Text(src), 0)
		case v.Kind() == "identifier" && from && containerLocal(fn, v.Text(src), src):
			// The names appended to the list.
			walkCode([]*Node{fn.Body}, func(x *Node) bool {
				if found != nil {
					return false
				}
				if x.Kind() == "call" {
					if t := appendTarget(x, src); t != nil && t.Text(src) == v.Text(src) {
						args := x.Get("arguments").NamedChildren()
						if a := Unparen(args[len(args)-1]); a != nil && a.Kind() == "identifier" {
							found = ks.rawName(fn, a.Text(src), 0)
						} else if a != nil && a.Kind() == "call" {
							found = ks.sourceOf(fn, a)
						}
					}
				}
				return true
			})
		}
		return false
	})
	ks.yields[fn] = found
	return found
}

// rawName: some binding of local name in fn is a graph source's result,
// or a subscript or view of a name that is (depth-bounded); the source,
// resting on that binding where the name has others.
func (ks *keptSources) rawName(fn *index.Function, name string, depth int) *graphSource {
	if depth > 4 || !plainLocal(fn, name) {
		return nil
	}
	src := fn.File.Src
	var found *graphSource
	bindings, raw := 0, 0
	walkCode([]*Node{fn.Body}, func(x *Node) bool {
		if !x.Is("assignment", "augmented_assignment", "for_statement", "with_item", "named_expression") || !mentionsTarget(x, name, src) {
			return true
		}
		bindings++
		if x.Kind() != "assignment" {
			return true
		}
		l, r := Unparen(x.Get("left")), Unparen(x.Get("right"))
		if l == nil || r == nil || l.Kind() != "identifier" {
			return true
		}
		var s *graphSource
		switch {
		case r.Kind() == "call":
			s = ks.sourceOf(fn, r)
			if s == nil {
				if f := Unparen(r.Get("function")); f != nil && f.Kind() == "attribute" && viewMethods[f.Get("attribute").Text(src)] {
					if o := Unparen(f.Get("object")); o != nil && o.Kind() == "identifier" && o.Text(src) != name {
						s = ks.rawName(fn, o.Text(src), depth+1)
					} else if o != nil && o.Kind() == "identifier" {
						s = ks.rawName(fn, name, depth+1) // x = x.view(...): as raw as before
					}
				}
			}
		case r.Kind() == "subscript":
			if o := Unparen(r.Get("value")); o != nil && o.Kind() == "identifier" && o.Text(src) != name {
				s = ks.rawName(fn, o.Text(src), depth+1)
			} else if o != nil && o.Kind() == "identifier" {
				raw++ // x = x[...]: as raw as x was
				return true
			}
		}
		if s != nil {
			raw++
			if found == nil {
				found = s
			}
		}
		return true
	})
	if found == nil {
		return nil
	}
	if raw < bindings {
		cp := *found
		cp.assumes = append(append([]string{}, found.assumes...), fmt.Sprintf("`%s` holds the graph's output where %s yields it (%d of its %d bindings keep it raw)", name, fn.Qual, raw, bindings))
		found = &cp
	}
	return found
}

// keptHolder says where the result of call c is kept raw: "" for nowhere
// it can be followed. It returns what to name, the holder's name node
// (nil for a comprehension) and the statement that keeps it.
func keptHolder(fn *index.Function, c *Node, src []byte) (string, *Node, *Node) {
	v := rawResult(c, src)
	if v == nil {
		return "", nil, nil
	}
	p := v.Parent()
	for p != nil && p.Kind() == "parenthesized_expression" {
		p = p.Parent()
	}
	switch {
	case p.Kind() == "list_comprehension" && p.Get("body") == v:
		if exprUsed(p) {
			return "the list this comprehension makes", nil, p
		}
	case p.Kind() == "argument_list":
		// X.append(c)
		if call := p.Parent(); call != nil && call.Kind() == "call" && len(p.NamedChildren()) == 1 {
			if holder := appendTarget(call, src); holder != nil {
				return "the list `" + holder.Text(src) + "`", holder, keptStmt(call)
			}
		}
	case p.Kind() == "assignment" && p.Get("right") == v:
		left := Unparen(p.Get("left"))
		switch {
		case left.Kind() == "identifier":
			name := left.Text(src)
			// Then kept: `X.append(name)` or `X[k] = name` in the
			// statements after, before name is bound again.
			if h, st := appendedLater(fn, p, name, src); h != nil {
				return "the list `" + h.Text(src) + "`", h, st
			}
			return "`" + name + "`", left, keptStmt(p)
		case left.Kind() == "subscript":
			// X[k] = c, X a local list or dict (not a tensor: a store into
			// a tensor copies the data).
			if obj := Unparen(left.Get("value")); obj != nil && obj.Kind() == "identifier" && containerLocal(fn, obj.Text(src), src) {
				return "`" + obj.Text(src) + "`", obj, keptStmt(p)
			}
		}
	}
	return "", nil, nil
}

// rawResult is the outermost expression around call c that is still its
// result's storage: c itself, or a subscript or view of it (`c[0]`,
// `c.view(1, -1)`); nil where c is the tree's root.
func rawResult(c *Node, src []byte) *Node {
	v := c
	for {
		p := v.Parent()
		for p != nil && p.Kind() == "parenthesized_expression" {
			p = p.Parent()
		}
		if p == nil {
			return nil
		}
		if p.Kind() == "subscript" && p.Get("value") == v {
			v = p
			continue
		}
		if p.Kind() == "attribute" && p.Get("object") == v && viewMethods[p.Get("attribute").Text(src)] && p.Parent() != nil && p.Parent().Kind() == "call" {
			v = p.Parent()
			continue
		}
		return v
	}
}

// appendTarget is X of `X.append(...)` (or insert, extend with a list),
// for a local X bound to a list, or nil.
func appendTarget(call *Node, src []byte) *Node {
	recv, meth, _ := methodCall(call, src)
	if recv = Unparen(recv); recv == nil || recv.Kind() != "identifier" || (meth != "append" && meth != "insert") {
		return nil
	}
	return recv
}

// appendedLater finds, after assignment asg in its block (and the blocks
// nested in the statements after it), `X.append(name)` or `X[k] = name`
// for a local container X, before name is bound again.
func appendedLater(fn *index.Function, asg *Node, name string, src []byte) (*Node, *Node) {
	st := keptStmt(asg)
	if st == nil || st.Parent() == nil {
		return nil, nil
	}
	after := false
	for _, s := range st.Parent().NamedChildren() {
		if s == st {
			after = true
			continue
		}
		if !after {
			continue
		}
		var holder *Node
		stop := false
		walkCode([]*Node{s}, func(x *Node) bool {
			if holder != nil || stop {
				return false
			}
			if x.Kind() == "assignment" && mentionsTarget(x, name, src) {
				stop = true
				return false
			}
			switch x.Kind() {
			case "call":
				if h := appendTarget(x, src); h != nil && containerLocal(fn, h.Text(src), src) {
					args := x.Get("arguments").NamedChildren()
					if a := Unparen(args[len(args)-1]); a != nil && a.Kind() == "identifier" && a.Text(src) == name {
						holder = h
					}
				}
			case "assignment":
				l, r := Unparen(x.Get("left")), Unparen(x.Get("right"))
				if l != nil && r != nil && l.Kind() == "subscript" && r.Kind() == "identifier" && r.Text(src) == name {
					if obj := Unparen(l.Get("value")); obj != nil && obj.Kind() == "identifier" && containerLocal(fn, obj.Text(src), src) {
						holder = obj
					}
				}
			}
			return true
		})
		if holder != nil {
			return holder, s
		}
		if stop {
			return nil, nil
		}
	}
	return nil, nil
}

// containerLocal: name is a local of fn bound to a list or dict display
// (or list()/dict()), and to nothing else.
func containerLocal(fn *index.Function, name string, src []byte) bool {
	if !plainLocal(fn, name) {
		return false
	}
	ok, other := false, false
	walkCode([]*Node{fn.Body}, func(x *Node) bool {
		if x.Kind() == "assignment" && mentionsTarget(x, name, src) {
			l, r := Unparen(x.Get("left")), Unparen(x.Get("right"))
			if l != nil && l.Kind() == "identifier" && r != nil && (r.Is("list", "dictionary", "list_comprehension", "dictionary_comprehension") ||
				(r.Kind() == "call" && (r.Get("function").Text(src) == "list" || r.Get("function").Text(src) == "dict"))) {
				ok = true
			} else {
				other = true
			}
		}
		return true
	})
	return ok && !other
}

// keptStmt is the statement that holds n.
func keptStmt(n *Node) *Node {
	for x := n; x != nil; x = x.Parent() {
		if p := x.Parent(); p != nil && p.Is("block", "module") {
			return x
		}
	}
	return nil
}

// bodyLoop is the innermost for or while loop of fn whose body holds
// n, or nil.
func bodyLoop(fn *index.Function, n *Node) *Node {
	for x := n; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil || p.Is("function_definition", "lambda", "class_definition") {
			return nil
		}
		if p.Is("for_statement", "while_statement") && x.Field() == "body" {
			return p
		}
	}
	return nil
}

// boundBefore: name is bound in fn's code before loop starts.
func boundBefore(fn *index.Function, name string, loop *Node, src []byte) bool {
	found := false
	walkCode([]*Node{fn.Body}, func(x *Node) bool {
		if found || x.Start >= loop.Start {
			return false
		}
		if x.Kind() == "assignment" && mentionsTarget(x, name, src) {
			found = true
		}
		return true
	})
	return found
}

// isNameTarget: stmt binds name itself (the holder is a name, not a
// container it is stored into).
func isNameTarget(stmt *Node, name string, src []byte) bool {
	if stmt == nil {
		return false
	}
	hit := false
	Walk(stmt, func(x *Node) bool {
		if x.Kind() == "assignment" {
			if l := Unparen(x.Get("left")); l != nil && l.Kind() == "identifier" && l.Text(src) == name {
				hit = true
			}
		}
		return !hit
	})
	return hit
}

// readAfter: fn's code reads name after offset off (a use that is not an
// append to it, a clear or a new binding of it).
func readAfter(fn *index.Function, name string, off int32, src []byte) bool {
	found := false
	walkCode([]*Node{fn.Body}, func(x *Node) bool {
		if found {
			return false
		}
		if x.End <= off && !(x.Start <= off) {
			return false
		}
		if x.Kind() != "identifier" || x.Start < off || x.Text(src) != name {
			return true
		}
		p := x.Parent()
		switch {
		case p == nil:
		case p.Kind() == "attribute" && p.Get("object") == x:
			if m := p.Get("attribute").Text(src); m == "append" || m == "clear" || m == "insert" {
				return true
			}
		case p.Kind() == "attribute":
			return true // an attribute of something else
		case p.Kind() == "assignment" && p.Get("left") == x:
			return true
		case p.Kind() == "keyword_argument" && p.Get("name") == x:
			return true
		}
		found = true
		return false
	})
	return found
}

// reboundBetween: name is bound again between the offsets (a name
// holder: its kept value is dropped).
func reboundBetween(fn *index.Function, name string, from, to int32, src []byte) bool {
	hit := false
	walkCode([]*Node{fn.Body}, func(x *Node) bool {
		if hit {
			return false
		}
		if x.Kind() == "assignment" && x.Start >= from && x.Start < to && mentionsTarget(x, name, src) {
			hit = true
		}
		return true
	})
	return hit
}

// guarded: the later call runs only under a condition, or in a loop, that
// the kept call is not in.
func guarded(fn *index.Function, later, kept *Node) bool {
	for x := later; x != nil && x != fn.Body; x = x.Parent() {
		p := x.Parent()
		if p == nil {
			return false
		}
		if p.Is("if_statement", "elif_clause", "else_clause", "for_statement", "while_statement", "try_statement", "except_clause", "conditional_expression", "boolean_operator") &&
			!(p.Start <= kept.Start && kept.End <= p.End) && x.Field() != "condition" {
			return true
		}
	}
	return false
}

// gradOff: autograd is off where n runs in fn (nil n: in all of fn): fn
// is decorated with torch.no_grad() or torch.inference_mode(), or n is in
// a `with` block of one.
func gradOff(fn *index.Function, n *Node) bool {
	f := fn.File
	off := func(e *Node) bool {
		e = Unparen(e)
		if e == nil || e.Kind() != "call" {
			return false
		}
		args := e.Get("arguments")
		return torchapi.GradDisabling[f.Qualify(Unparen(e.Get("function")))] && (args == nil || len(args.NamedChildren()) == 0)
	}
	for _, d := range fn.Decorators {
		e := Unparen(d)
		if e != nil && e.Kind() == "decorator" && len(e.NamedChildren()) > 0 {
			e = e.NamedChildren()[0]
		}
		if off(e) {
			return true
		}
	}
	for x := n; x != nil && x != fn.Body; x = x.Parent() {
		if x.Kind() != "with_statement" {
			continue
		}
		for _, c := range x.NamedChildren() {
			if c.Kind() != "with_clause" {
				continue
			}
			for _, it := range c.NamedChildren() {
				v := it.Get("value")
				if v != nil && v.Kind() == "as_pattern" && len(v.NamedChildren()) > 0 {
					v = v.NamedChildren()[0]
				}
				if off(v) {
					return true
				}
			}
		}
	}
	return false
}

func (ks *keptSources) diagnostic(fn *index.Function, k keptOut) *Diagnostic {
	s := k.src
	site := s.site
	sf := s.siteFn
	src := sf.File.Src
	callText := short(strings.TrimSpace(headLine(site.Text(src))))
	keeper := fn.Qual
	if keeper == "" {
		keeper = "module-level code"
	}
	how := ""
	if len(s.via) > 0 {
		names := make([]string, len(s.via))
		for i, v := range s.via {
			names[i] = "`" + v.Qual + "`"
		}
		how = fmt.Sprintf(" (returned through %s)", strings.Join(names, ", "))
	}
	check := " (PyTorch's check for overwritten outputs misses reads like this one: a decode loop's concatenation of them read stale values on the GPU without an error)"
	if s.runner {
		check = ", silently"
	}
	msg := fmt.Sprintf("`%s` returns storage a CUDA graph owns (%s), and %s keeps it%s in %s across %s, which calls the graph again and replays it into the same storage: what it kept then holds the last call's values%s; clone the output where it leaves the graph (`.clone()`) before it is kept",
		callText, s.what, "`"+keeper+"`", how, k.holder, k.later, check)
	if k.feed != "" {
		msg = fmt.Sprintf("`%s` returns storage a CUDA graph owns (%s), and %s passes it%s back to the same call as its input (`%s`) in %s, which replays the graph into that storage: CUDA Graph Trees raise \"accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run\" there; clone the output before it goes back (`.clone()`)",
			callText, s.what, "`"+keeper+"`", how, short(k.feed), k.later)
	}
	chain := []string{fn.FullName()}
	for _, v := range s.via {
		chain = append(chain, v.FullName())
	}
	if s.fn != nil {
		chain = append(chain, s.fn.FullName())
	}
	as := append(append([]string{}, s.assumes...), k.assumes...)
	if !gradOff(fn, k.call) && (s.fn == nil || !gradOff(s.fn, nil)) {
		// With autograd on, a call made while the earlier call's backward
		// is pending runs off CUDA Graph Trees' replay path, and the
		// earlier output stays.
		as = append(as, "no backward of the kept call is pending when the graph is called again (autograd is on here; `torch.no_grad()` or `torch.inference_mode()` around the calls proves it)")
	}
	sev := ruleOutputKept.Severity
	if len(as) > 0 {
		sev = SeverityWarning
	} else {
		as = nil // as the results cache reads it back
	}
	return &Diagnostic{
		Rule: ruleOutputKept, Path: sf.File.Path, Start: posOf(sf.File, int(site.Start)), End: posOf(sf.File, int(site.End)),
		Message: msg, Severity: sev, Context: ReplayPrep, Function: sf.Qual, Chain: chain, Resolution: Resolved, Assumes: as,
	}
}
