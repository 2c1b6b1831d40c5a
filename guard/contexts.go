package guard

import (
	"path"
	"regexp"
	"sort"
	"strings"
)

// Region is a part of a function that runs in a context of its own: the
// body of `with torch.cuda.graph(...)`, a capture_begin()..capture_end()
// span, or the statements before a `.replay()`.
type Region struct {
	Fn    *Function
	Ctx   Context
	What  string // "with torch.cuda.graph", "capture_begin..capture_end", "before .replay()"
	Node  *Node  // the with statement, the capture_begin statement, the replay call
	Stmts []*Node
}

// reach is how a function came to run in a context: the chain of labels from
// the root to it.
type reach struct {
	chain []string
}

// edge is one resolved call.
type edge struct {
	call   *Node
	callee *Function
}

// analysis holds the call graph and contexts of one run.
type analysis struct {
	proj     *Project
	edges    map[*Function][]edge
	calleeOf map[*Node]*Function // the callee of each resolved call
	callers  map[*Function]int
	regions  []*Region
	reached  map[*Function]map[Context]*reach
	claims   map[*Function]*Node
	// attrsRead and buffers are computed on first use by CG201.
	attrsRead map[string]bool
	buffers   map[string]bool
}

var contextOrder = []Context{Captured, ReplayPrep, Claimed, Launcher}

// regionCallees are the project functions the region's statements call, in
// order (a callee once per call).
func (a *analysis) regionCallees(r *Region) []*Function {
	var out []*Function
	for _, call := range callsIn(r.Stmts) {
		if g := a.calleeOf[call]; g != nil {
			out = append(out, g)
		}
	}
	return out
}

func (a *analysis) has(fn *Function, c Context) bool {
	return a.reached[fn] != nil && a.reached[fn][c] != nil
}

// callsIn returns the call nodes in stmts, not looking into nested defs,
// classes or lambdas (their bodies run when they are called).
func callsIn(stmts []*Node) []*Node {
	var out []*Node
	walkCode(stmts, func(n *Node) bool {
		if n.Kind == "call" {
			out = append(out, n)
		}
		return true
	})
	return out
}

// walkCode walks stmts in preorder as Walk does, but does not enter nested
// definitions or lambdas: their code runs when they are called, not here.
func walkCode(stmts []*Node, visit func(*Node) bool) {
	for _, s := range stmts {
		Walk(s, func(n *Node) bool {
			if n.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
				return false
			}
			return visit(n)
		})
	}
}

func bodyStmts(fn *Function) []*Node {
	if fn.Body == nil {
		return nil
	}
	return fn.Body.NamedChildren()
}

// buildGraph resolves every call of every function. Resolving may load
// modules the prefilter skipped; their functions are resolved too.
func (a *analysis) buildGraph() {
	done := map[*Function]bool{}
	for {
		var todo []*Function
		for _, f := range a.proj.Files {
			for _, fn := range f.allFuncs() {
				if !done[fn] {
					todo = append(todo, fn)
				}
			}
		}
		if len(todo) == 0 {
			return
		}
		for _, fn := range todo {
			done[fn] = true
			locals := constructorLocals(fn)
			for _, call := range callsIn(bodyStmts(fn)) {
				if g := a.proj.resolveCall(fn, call, locals); g != nil && g != fn {
					a.edges[fn] = append(a.edges[fn], edge{call, g})
					a.calleeOf[call] = g
					a.callers[g]++
				}
			}
		}
	}
}

// allFuncs is the file's functions plus a pseudo function for module-level
// code (scripts capture at module level too).
func (f *File) allFuncs() []*Function {
	if f.moduleFn == nil && f.Tree != nil && f.Tree.Root != nil {
		f.moduleFn = &Function{File: f, Qual: "<module>", Name: "<module>", Body: f.Tree.Root}
	}
	if f.moduleFn == nil {
		return f.Funcs
	}
	return append([]*Function{f.moduleFn}, f.Funcs...)
}

// findRegions finds capture regions, make_graphed_callables targets and
// pre-replay spans in fn.
func (a *analysis) findRegions(fn *Function, roots *[]rootItem) {
	f := fn.File
	src := f.Src
	visitBlock := func(block *Node) {
		stmts := block.NamedChildren()
		begin := -1
		for i, s := range stmts {
			if s.Kind == "with_statement" && a.isGraphWith(f, s) {
				a.regions = append(a.regions, &Region{Fn: fn, Ctx: Captured, What: "with torch.cuda.graph", Node: s,
					Stmts: s.Get("body").NamedChildren()})
			}
			if hasMethodCall(s, "capture_begin", src) {
				begin = i
			}
			if begin >= 0 && hasMethodCall(s, "capture_end", src) && i > begin {
				a.regions = append(a.regions, &Region{Fn: fn, Ctx: Captured, What: "capture_begin()..capture_end()",
					Node: stmts[begin], Stmts: stmts[begin+1 : i]})
				begin = -1
			}
		}
	}
	var blocks []*Node
	if fn.Qual == "<module>" {
		blocks = append(blocks, fn.Body)
	}
	forEachStmt(fn.Body, func(s *Node) {
		if !s.Is("function_definition", "class_definition", "decorated_definition") {
			blocks = append(blocks, stmtBlocks(s)...)
		}
	})
	if fn.Qual != "<module>" && fn.Body != nil {
		blocks = append(blocks, fn.Body)
	}
	for _, b := range blocks {
		visitBlock(b)
	}
	// make_graphed_callables(target, ...) and .replay().
	for _, call := range callsIn(bodyStmts(fn)) {
		callee := Unparen(call.Get("function"))
		q := f.qualify(callee)
		if q == "torch.cuda.make_graphed_callables" || q == "torch.cuda.graphs.make_graphed_callables" {
			args := call.Get("arguments").NamedChildren()
			if len(args) > 0 {
				for _, t := range a.graphedTargets(fn, args[0]) {
					*roots = append(*roots, rootItem{t, Captured, []string{fn.Label(), t.Label()}})
				}
			}
		}
		if callee != nil && callee.Kind == "attribute" && callee.Get("attribute").Text(src) == "replay" &&
			len(call.Get("arguments").NamedChildren()) == 0 {
			if pre := precedingStmts(fn, call); len(pre) > 0 {
				a.regions = append(a.regions, &Region{Fn: fn, Ctx: ReplayPrep, What: "before .replay()", Node: call, Stmts: pre})
			}
		}
	}
}

// precedingStmts are the statements that run before the statement holding
// n: earlier siblings at every level up to the function body.
func precedingStmts(fn *Function, n *Node) []*Node {
	var out []*Node
	for x := n; x != nil && x != fn.Body; x = x.Parent {
		p := x.Parent
		if p == nil || p.Kind != "block" && p.Kind != "module" {
			continue
		}
		for _, s := range p.NamedChildren() {
			if s == x {
				break
			}
			if s.Kind != "function_definition" && s.Kind != "class_definition" && s.Kind != "decorated_definition" {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

func hasMethodCall(stmt *Node, name string, src []byte) bool {
	found := false
	Walk(stmt, func(n *Node) bool {
		if found || n.Kind == "block" || n.Kind == "function_definition" {
			return false
		}
		if n.Kind == "call" {
			if c := Unparen(n.Get("function")); c != nil && c.Kind == "attribute" && c.Get("attribute").Text(src) == name {
				found = true
			}
		}
		return !found
	})
	return found
}

func (a *analysis) isGraphWith(f *File, with *Node) bool {
	isGraph := false
	Walk(with, func(n *Node) bool {
		if n.Kind == "block" {
			return false
		}
		if n.Kind == "with_item" {
			v := Unparen(n.Get("value"))
			if v != nil && v.Kind == "as_pattern" {
				v = Unparen(v.NamedChildren()[0])
			}
			if v != nil && v.Kind == "call" {
				q := f.qualify(v.Get("function"))
				if q == "torch.cuda.graph" || q == "torch.cuda.graphs.graph" || q == "torch.cuda.graphs.CUDAGraph.graph" {
					isGraph = true
				}
			}
			return false
		}
		return true
	})
	return isGraph
}

// graphedTargets resolves the first argument of make_graphed_callables: a
// function, a module instance (its forward), or a tuple of them.
func (a *analysis) graphedTargets(fn *Function, arg *Node) []*Function {
	arg = Unparen(arg)
	if arg.Is("tuple", "list") {
		var out []*Function
		for _, e := range arg.NamedChildren() {
			out = append(out, a.graphedTargets(fn, e)...)
		}
		return out
	}
	f := fn.File
	src := f.Src
	p := a.proj
	if arg.Kind == "attribute" && isName(arg.Get("object"), fn.Self(), src) {
		name := arg.Get("attribute").Text(src)
		if c := p.attrClass(fn.Owner(), name); c != nil {
			if g := p.callable(c); g != nil {
				return []*Function{g}
			}
		}
		if m := p.method(fn.Owner(), name); m != nil {
			return []*Function{m}
		}
		return nil
	}
	if arg.Kind == "identifier" {
		name := arg.Text(src)
		if ctor, ok := constructorLocals(fn)[name]; ok {
			if c := p.classOf(f, ctor); c != nil {
				if g := p.callable(c); g != nil {
					return []*Function{g}
				}
			}
		}
	}
	if arg.Kind == "call" { // make_graphed_callables(Rotary(...), ...)
		if c := p.classOf(f, arg.Get("function")); c != nil {
			if g := p.callable(c); g != nil {
				return []*Function{g}
			}
		}
	}
	fake := &Node{Kind: "call", Children: []*Node{{Kind: arg.Kind, Field: "function", Start: arg.Start, End: arg.End, Children: arg.Children, Named: true}}}
	if g := p.resolveCall(fn, fake, nil); g != nil {
		return []*Function{g}
	}
	return nil
}

type rootItem struct {
	fn    *Function
	ctx   Context
	chain []string
}

// claimRE matches a claim of capture safety; negations are filtered after.
var claimRE = regexp.MustCompile(`(?i)\b(cuda[ _-]?graph|graph|capture)[ _-]?(capture[ _-]?)?(safe|compatible|friendly)\b|\bsafe (for|under|with|during) (cuda[ _-]?graph|graph|stream)[ _-]?capture|\bsafe to capture\b`)
var negRE = regexp.MustCompile(`(?i)\b(not|never|un|isn't|is not|aren't)[ _-]*(cuda[ _-]?graph|graph|capture)?[ _-]?(capture[ _-]?)?-?(safe|compatible)`)

// claimOf returns the node that claims fn is capture-safe: its docstring, a
// comment on the lines just above the def or in its body, or a decorator.
func claimOf(fn *Function, comments []*Node) *Node {
	src := fn.File.Src
	claims := func(s string) bool { return claimRE.MatchString(s) && !negRE.MatchString(s) }
	for _, d := range fn.Decorators {
		t := strings.ToLower(d.Text(src))
		if strings.Contains(t, "capture_safe") || strings.Contains(t, "graph_safe") || strings.Contains(t, "cudagraph_safe") {
			return d
		}
	}
	if fn.Docstring != nil && claims(fn.Docstring.Text(src)) {
		return fn.Docstring
	}
	top := fn.Def
	if top.Parent != nil && top.Parent.Kind == "decorated_definition" {
		top = top.Parent
	}
	// Comments are in source order: only those from two lines above top to
	// the end of the def can claim.
	lo := fn.File.LineStart(int(top.Row) - 1)
	i := sort.Search(len(comments), func(i int) bool { return comments[i].Start >= lo })
	for _, c := range comments[i:] {
		if c.Start >= fn.Def.End {
			break
		}
		// In the body, or on the lines directly above the def.
		inBody := c.Start > fn.Def.Start && c.End <= fn.Def.End
		above := c.End <= top.Start && top.Row-c.Row <= 2 && c.Col <= top.Col
		if (inBody || above) && claims(c.Text(src)) {
			if inBody && innermostAt(fn, c.Start) != fn {
				continue
			}
			return c
		}
	}
	return nil
}

// propagate computes every function's contexts from the roots.
func (a *analysis) propagate() {
	var roots []rootItem
	for _, f := range a.proj.Files {
		for _, fn := range f.allFuncs() {
			a.findRegions(fn, &roots)
			if fn.Qual == "<module>" {
				continue
			}
			if entryMatch(a.proj.captured, f.Module, fn.Qual) {
				roots = append(roots, rootItem{fn, Captured, []string{fn.Label()}})
			}
			if entryMatch(a.proj.replayPrep, f.Module, fn.Qual) {
				roots = append(roots, rootItem{fn, ReplayPrep, []string{fn.Label()}})
			}
			if c := claimOf(fn, f.Tree.Comments); c != nil {
				a.claims[fn] = c
				roots = append(roots, rootItem{fn, Claimed, []string{fn.Label()}})
			}
		}
	}
	type fc struct {
		fn  *Function
		ctx Context
	}
	rooted := map[fc]bool{}
	for _, r := range a.regions {
		for _, g := range a.regionCallees(r) {
			if !rooted[fc{g, r.Ctx}] {
				rooted[fc{g, r.Ctx}] = true
				roots = append(roots, rootItem{g, r.Ctx, []string{r.Fn.Label(), g.Label()}})
			}
		}
	}
	queue := roots
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if a.has(it.fn, it.ctx) {
			continue
		}
		if a.reached[it.fn] == nil {
			a.reached[it.fn] = map[Context]*reach{}
		}
		a.reached[it.fn][it.ctx] = &reach{chain: it.chain}
		for _, e := range a.edges[it.fn] {
			if !a.has(e.callee, it.ctx) {
				chain := append(append([]string{}, it.chain...), e.callee.Label())
				queue = append(queue, rootItem{e.callee, it.ctx, chain})
			}
		}
	}
	// Launchers: functions that launch a kernel, reached by nothing above,
	// and called by nothing in the project (so nothing proves them eager).
	for _, f := range a.proj.Files {
		for _, fn := range f.Funcs {
			if len(a.reached[fn]) > 0 || a.callers[fn] > 0 {
				continue
			}
			for _, call := range callsIn(bodyStmts(fn)) {
				if _, ok := a.proj.kernelName(f, call); ok {
					a.reached[fn] = map[Context]*reach{Launcher: {chain: []string{fn.Label()}}}
					break
				}
			}
		}
	}
}

// kernelName reports whether call launches a GPU kernel: a Triton launch
// `kernel[grid](...)`, `torch.ops.*`, or a configured extension op.
func (p *Project) kernelName(f *File, call *Node) (string, bool) {
	callee := Unparen(call.Get("function"))
	if callee == nil {
		return "", false
	}
	if callee.Kind == "subscript" {
		v := Unparen(callee.Get("value"))
		if v == nil || !v.Is("identifier", "attribute") {
			return "", false
		}
		name := v.Text(f.Src)
		last := name[strings.LastIndexByte(name, '.')+1:]
		if f.Kernels[name] || strings.Contains(strings.ToLower(last), "kernel") {
			return name, true
		}
		if g, _ := p.resolveDotted(f.qualify(v), 0); g != nil && g.File.Kernels[g.Name] {
			return name, true
		}
		if _, ok := f.Imports["triton"]; ok {
			return name, true
		}
		return "", false
	}
	q := f.qualify(callee)
	if q == "" {
		return "", false
	}
	for _, pat := range p.kernelOps {
		if ok, _ := path.Match(pat, q); ok {
			return callee.Text(f.Src), true
		}
	}
	return "", false
}
