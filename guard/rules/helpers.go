package rules

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// readsAfterReplay maps attribute names to their reads after a `.replay()`
// of a graph, in the function that replays (each read with its function).
func readsAfterReplay(a *analysis.Analysis) map[string][]prepWrite {
	if a.AfterReplay != nil {
		return a.AfterReplay
	}
	a.AfterReplay = map[string][]prepWrite{}
	for _, f := range a.Proj.Files {
		if !bytes.Contains(f.Src, []byte(".replay()")) {
			continue
		}
		for _, fn := range f.Funcs {
			var replay *Node
			walkCode(fn.BodyStmts(), func(x *Node) bool {
				if replay == nil && x.Kind() == "call" {
					if recv, name, args := methodCall(x, f.Src); recv != nil && name == "replay" && len(args.NamedChildren()) == 0 && contexts.GraphObject(a.Proj.G, recv) {
						replay = x
					}
				}
				if replay != nil && x.Kind() == "attribute" && x.Start > replay.End {
					if par := x.Parent(); par != nil && par.Kind() == "assignment" && par.Get("left") == x {
						return true
					}
					at := x.Get("attribute").Text(f.Src)
					a.AfterReplay[at] = append(a.AfterReplay[at], prepWrite{Fn: fn, Attr: x})
				}
				return true
			})
		}
	}
	return a.AfterReplay
}

// prepWrites are the attributes that replay-prep code (a function in the
// replay-prep context, or a replay-prep region's statements) writes in
// place: `x.attr.copy_(v)`, `x.attr[:n].copy_(v)`, `x.attr.fill_(v)`,
// `x.attr.zero_()`, `x.attr[:n] = v`, and, where the written name is a
// helper's parameter, the attribute each replay-prep call passes for it
// (one call deep); by attribute name, with each write.
func prepWrites(a *analysis.Analysis) map[string][]prepWrite {
	if a.PrepWrites != nil {
		return a.PrepWrites
	}
	a.PrepWrites = map[string][]prepWrite{}
	// add records the write of target in fn, with what it rests on to run
	// between replays (ContextAssumptions): its function's chain or region,
	// or, for a helper's parameter, the calling function's at the call.
	var add func(fn *Function, target *Node, depth int, assumes []string)
	add = func(fn *Function, target *Node, depth int, assumes []string) {
		t := Unparen(target)
		for t != nil && t.Kind() == "subscript" {
			t = Unparen(t.Get("value"))
		}
		if t == nil {
			return
		}
		if t.Kind() == "identifier" && depth == 0 {
			// A helper's parameter (`def pad_and_fill(dest, src, pad):
			// dest[:n].copy_(src)`): the attribute each replay-prep call
			// passes for it.
			for _, arg := range paramArgs(a, fn, t.Text(fn.File.Src)) {
				add(arg.Fn, arg.Attr, depth+1, arg.Assumes)
			}
			return
		}
		if t.Kind() != "attribute" {
			return
		}
		at := t.Get("attribute").Text(fn.File.Src)
		a.PrepWrites[at] = append(a.PrepWrites[at], prepWrite{Fn: fn, Attr: t, Assumes: assumes})
	}
	// scan adds the writes of stmts, which run between replays as the
	// function fn does, or as its replay-prep region reg: not those in one
	// of fn's own capture regions, which are captured code (a graph runner
	// that fills its buffers inside `with torch.cuda.graph(g):`).
	scan := func(fn *Function, stmts []*Node, reg *Region) {
		src := fn.File.Src
		walkCode(stmts, func(x *Node) bool {
			if reg == nil && inOwnCapture(a, fn, x) {
				return false
			}
			var target *Node
			switch x.Kind() {
			case "call":
				if recv, name, _ := methodCall(x, src); recv != nil {
					switch name {
					case "copy_", "fill_", "zero_", "index_copy_", "masked_fill_", "scatter_":
						target = recv
					}
				}
			case "assignment":
				if l := x.Get("left"); l != nil && l.Kind() == "subscript" {
					target = l
				}
			}
			if target != nil {
				add(fn, target, 0, a.ContextAssumptions(fn, ReplayPrep, x, reg))
			}
			return true
		})
	}
	for _, f := range a.Proj.Files { // in source order: the same writes first on every run
		for _, fn := range append([]*Function{f.Top}, f.Funcs...) {
			if a.Has(fn, ReplayPrep) {
				scan(fn, fn.BodyStmts(), nil)
			}
		}
	}
	for _, r := range a.Regions {
		if r.Ctx == ReplayPrep {
			scan(r.Fn, r.Stmts, r)
		}
	}
	return a.PrepWrites
}

// inOwnCapture: node n of fn lies in one of fn's own capture regions (a
// `with torch.cuda.graph(...)` body, a capture_begin()..capture_end()
// span, a capture guard's body), where it is captured code whatever
// context the function runs in.
func inOwnCapture(a *analysis.Analysis, fn *Function, n *Node) bool {
	for _, st := range a.Proj.Ctx.OwnCapture(fn) {
		if n.Start >= st.Start && n.End <= st.End {
			return true
		}
	}
	return false
}

// instanceClasses are the project classes whose instances expression n
// may hold (the points-to analysis' values).
func instanceClasses(p *Pass, n *Node) map[*Class]bool {
	out := map[*Class]bool{}
	for _, v := range p.Proj.G.Values(Unparen(n)) {
		if v.Kind == flow.VInst && v.Cls != nil {
			out[v.Cls] = true
		}
	}
	return out
}

// prepContext: node n of fn runs between replays (fn is in the
// replay-prep context and n is outside fn's own capture regions, or n lies
// in a replay-prep region of fn), with what that rests on (nil when
// proved: ContextAssumptions of fn's chain, else of the region).
func prepContext(a *analysis.Analysis, fn *Function, n *Node) (assumes []string, ok bool) {
	if a.Has(fn, ReplayPrep) && !inOwnCapture(a, fn, n) {
		return a.ContextAssumptions(fn, ReplayPrep, n, nil), true
	}
	for _, r := range a.Regions {
		if r.Ctx == ReplayPrep && r.Fn == fn && len(r.Stmts) > 0 && n.Start >= r.Stmts[0].Start && n.End <= r.Stmts[len(r.Stmts)-1].End {
			return a.ContextAssumptions(fn, ReplayPrep, n, r), true
		}
	}
	return nil, false
}

// paramArgs are the arguments replay-prep calls of fn pass for its
// parameter name (`pad_and_fill(self.state.slots, slots)` for `dest`),
// each with the calling function.
func paramArgs(a *analysis.Analysis, fn *Function, name string) []prepWrite {
	var out []prepWrite
	for i, prm := range fn.Params {
		if prm.Name != name {
			continue
		}
		for _, e := range a.Proj.G.In[fn] {
			if e.Site == nil || e.Site.Kind() != "call" || e.Caller == nil {
				continue
			}
			assumes, ok := prepContext(a, e.Caller, e.Site)
			if !ok {
				continue
			}
			if arg := paramArg(e.Site, fn, i, e.Caller.File.Src); arg != nil {
				out = append(out, prepWrite{Fn: e.Caller, Attr: arg, Assumes: assumes})
			}
		}
	}
	return out
}

// paramArg is the argument call passes for fn's i-th parameter (argAt; a
// method's receiver is passed before the parentheses, so its parameters
// after self count from 0), or nil.
func paramArg(call *Node, fn *Function, i int, src []byte) *Node {
	pos := i
	if fn.Class != nil && fn.Self() != "" {
		pos--
	}
	return argAt(call, pos, fn.Params[i].Name, src)
}

// argAt is the argument a call passes for a parameter: the pos-th
// positional argument, or the keyword argument of its name.
func argAt(call *Node, pos int, name string, src []byte) *Node {
	args := call.Get("arguments")
	if args == nil {
		return nil
	}
	if k := keyword(args, name, src); k != nil {
		return k
	}
	ps := positional(args)
	if pos >= 0 && pos < len(ps) {
		return ps[pos]
	}
	return nil
}

// captureInLoop: a capture region of the project runs in a loop (one graph
// per batch size), so captured code runs under capture more than once.
func captureInLoop(a *analysis.Analysis) bool {
	for _, r := range a.Regions {
		if r.Ctx == Captured && inLoop(r.Node) {
			return true
		}
	}
	return false
}

// registered reports whether the project registers an attribute called
// attr as a parameter or buffer of a module.
func registered(a *analysis.Analysis, attr string) bool {
	if a.Registry == nil {
		a.Registry = map[string]bool{}
		for _, f := range a.Proj.Files {
			if !bytes.Contains(f.Src, []byte("Parameter")) && !bytes.Contains(f.Src, []byte("register_")) {
				continue
			}
			Walk(f.Tree.Root, func(n *Node) bool {
				switch n.Kind() {
				case "assignment":
					if l := n.Get("left"); l != nil && l.Kind() == "attribute" && isParameterCall(f, n.Get("right")) {
						a.Registry[l.Get("attribute").Text(f.Src)] = true
					}
				case "call":
					if _, name, args := methodCall(n, f.Src); name == "register_parameter" || name == "register_buffer" {
						if pos := positional(args); len(pos) > 0 && pos[0].Kind() == "string" {
							a.Registry[strings.Trim(pos[0].Text(f.Src), "\"'")] = true
						}
					}
				}
				return true
			})
		}
	}
	return a.Registry[attr]
}

func isParameterCall(f *File, n *Node) bool {
	n = Unparen(n)
	if n == nil || n.Kind() != "call" {
		return false
	}
	q := f.Qualify(n.Get("function"))
	return q == "torch.nn.Parameter" || q == "torch.nn.parameter.Parameter" || q == "torch.nn.Buffer" || lastName(q) == "Parameter"
}

// capturedAttrs is the set of attribute names read by captured code.
func capturedAttrs(a *analysis.Analysis) map[string]bool {
	if a.AttrsRead != nil {
		return a.AttrsRead
	}
	rs := newReadSet()
	a.AttrsRead, a.AttrReaders, a.AttrReadAnon = rs.Attrs, rs.Readers, rs.Anon
	collect := func(f *File, stmts []*Node) { collectReads(a, rs, f, stmts) }
	for fn, ctxs := range a.Reached {
		if ctxs[Captured] != nil || ctxs[Claimed] != nil {
			collect(fn.File, bodyStmts(fn))
		}
	}
	for _, r := range a.Regions {
		if r.Ctx == Captured {
			collect(r.Fn.File, r.Stmts)
		}
	}
	return a.AttrsRead
}

func newReadSet() *analysis.ReadSet {
	return &analysis.ReadSet{Attrs: map[string]bool{}, Readers: map[string]map[*index.Class]bool{}, Anon: map[string]bool{}}
}

// collectReads adds to rs the attributes stmts read (not those they
// assign), with the classes of the objects read.
func collectReads(a *analysis.Analysis, rs *analysis.ReadSet, f *File, stmts []*Node) {
	for _, s := range stmts {
		Walk(s, func(n *Node) bool {
			if n.Kind() == "function_definition" || n.Kind() == "class_definition" {
				return false
			}
			if n.Kind() == "attribute" {
				if par := n.Parent(); par != nil && par.Kind() == "assignment" && par.Get("left") == n {
					return true
				}
				attr := n.Get("attribute").Text(f.Src)
				rs.Attrs[attr] = true
				classes := instancesOf(a, n.Get("object"))
				if len(classes) == 0 {
					rs.Anon[attr] = true
				}
				for _, c := range classes {
					if rs.Readers[attr] == nil {
						rs.Readers[attr] = map[*index.Class]bool{}
					}
					rs.Readers[attr][c] = true
				}
			}
			return true
		})
	}
}

// byCallReads builds, for each replay-prep region before a call that
// replays whose graphs are known, what the captured code of those graphs
// reads: their regions' statements and every function their calls reach
// (any edge kind: more reads, fewer findings left out).
func byCallReads(a *analysis.Analysis) map[*Region]*analysis.ReadSet {
	if a.ByCallReads != nil {
		return a.ByCallReads
	}
	a.ByCallReads = map[*Region]*analysis.ReadSet{}
	g := a.Proj.G
	index := map[*Region]int{}
	for i, r := range a.Regions {
		index[r] = i
	}
	// Regions whose calls replay the same graphs share one set (an
	// engine's many calls that reach one runner).
	shared := map[string]*analysis.ReadSet{}
	for _, r := range a.Regions {
		if r.ByCall == nil || r.Replays == nil || g == nil {
			continue
		}
		var key strings.Builder
		for _, c := range r.Replays {
			fmt.Fprintf(&key, "%d,", index[c])
		}
		if rs, ok := shared[key.String()]; ok {
			a.ByCallReads[r] = rs
			continue
		}
		rs := newReadSet()
		shared[key.String()] = rs
		seen := map[*Function]bool{}
		var queue []*Function
		for _, c := range r.Replays {
			collectReads(a, rs, c.Fn.File, c.Stmts)
			for _, site := range contexts.RegionSites(g, c) {
				for _, e := range g.CapturedCallees(site) {
					if !seen[e.Callee] && !e.Callee.Kernel {
						seen[e.Callee] = true
						queue = append(queue, e.Callee)
					}
				}
			}
		}
		for len(queue) > 0 {
			fn := queue[0]
			queue = queue[1:]
			collectReads(a, rs, fn.File, bodyStmts(fn))
			for _, e := range g.Out[fn] {
				if !seen[e.Callee] && !e.Callee.Kernel {
					seen[e.Callee] = true
					queue = append(queue, e.Callee)
				}
			}
		}
		a.ByCallReads[r] = rs
	}
	return a.ByCallReads
}

// readsFor is what the captured code the pass's replay-prep code prepares
// reads: where it is replay-prep by a call that replays known graphs,
// theirs; else what any captured code reads.
func readsFor(p *Pass) *analysis.ReadSet {
	capturedAttrs(p.A)
	if r := p.ByCallRegion(); r != nil {
		if rs := byCallReads(p.A)[r]; rs != nil {
			return rs
		}
	}
	return &analysis.ReadSet{Attrs: p.A.AttrsRead, Readers: p.A.AttrReaders, Anon: p.A.AttrReadAnon}
}

// instancesOf is Graph.InstanceClasses, nil without a graph.
func instancesOf(a *analysis.Analysis, n *Node) []*index.Class {
	if a.Proj == nil || a.Proj.G == nil || n == nil {
		return nil
	}
	return a.Proj.G.InstanceClasses(n)
}

// readFromSameObject: the object a statement binds `.attr` of may be one
// captured code reads `.attr` from. By name (as capturedAttrs) where
// captured code reads the name from an object of no known class, or the
// bound object's classes are unknown; else where a class is shared.
// (`req.input_ids = torch.cat(...)` on a request object is not the
// captured runner's `self.input_ids`.)
func readFromSameObject(a *analysis.Analysis, rs *analysis.ReadSet, obj *Node, attr string) bool {
	if rs.Anon[attr] {
		return true
	}
	classes := instancesOf(a, obj)
	if len(classes) == 0 {
		return true
	}
	for _, c := range classes {
		if rs.Readers[attr][c] {
			return true
		}
	}
	return false
}

// knownBuffer reports whether attribute attr is somewhere assigned a
// preallocated buffer or a view of one (an allocation, or a subscript of an
// attribute), as an assignment or as a constructor keyword.
func knownBuffer(a *analysis.Analysis, attr string) bool {
	if a.Buffers == nil {
		a.Buffers = map[string]bool{}
		for _, f := range a.Proj.Files {
			Walk(f.Tree.Root, func(n *Node) bool {
				var name string
				var value *Node
				switch n.Kind() {
				case "assignment":
					if l := n.Get("left"); l != nil && l.Kind() == "attribute" {
						name, value = l.Get("attribute").Text(f.Src), Unparen(n.Get("right"))
					}
				case "keyword_argument":
					name, value = n.Get("name").Text(f.Src), Unparen(n.Get("value"))
				}
				if value != nil && isBufferExpr(f, value) {
					a.Buffers[name] = true
				}
				return true
			})
		}
	}
	return a.Buffers[attr]
}

func isBufferExpr(f *File, n *Node) bool {
	if n.Kind() == "subscript" {
		v := Unparen(n.Get("value"))
		return v != nil && v.Kind() == "attribute"
	}
	if n.Kind() == "call" {
		return allocators[f.Qualify(n.Get("function"))]
	}
	return false
}

// freshObject reports whether obj is a local this function made with a
// constructor (not a tensor) and assign is the first binding of its attr
// since: `state = State(); state.idx = torch.zeros(...)` sets up a new
// object, which no graph can have captured yet.
func freshObject(p *Pass, m *model, obj *Node, attr string, assign *Node) bool {
	src := p.Src()
	obj = Unparen(obj)
	if obj == nil || obj.Kind() != "identifier" {
		return false
	}
	b := m.BindingOf(obj.Text(src), assign)
	if b == nil || b.IsParam || b.Unpack || b.Value == nil {
		return false
	}
	v := Unparen(b.Value)
	if v.Kind() != "call" || m.Kind(v) == KTensor {
		return false
	}
	callee := Unparen(v.Get("function"))
	if callee == nil || !callee.Is("identifier", "attribute") {
		return false
	}
	cname := lastName(callee.Text(src))
	isClass := p.Proj.ClassOf(p.File, callee) != nil || cname != "" && cname[0] >= 'A' && cname[0] <= 'Z' ||
		cname == "SimpleNamespace" || cname == "object"
	if !isClass {
		return false
	}
	// Since it was made, the object was only given attributes: not passed
	// anywhere (a callee or a capture could have set and read attr), and
	// attr not bound yet.
	name := obj.Text(src)
	fresh := true
	walkCode(bodyStmts(p.Fn), func(x *Node) bool {
		if !fresh || x.Start >= assign.Start || int(x.End) <= b.End {
			return int(x.End) > b.End && x.Start < assign.Start
		}
		if x.Kind() == "identifier" && x.Text(src) == name {
			par := x.Parent()
			ok := par != nil && par.Kind() == "attribute" && par.Get("object") == x &&
				par.Parent() != nil && par.Parent().Kind() == "assignment" && par.Parent().Get("left") == par &&
				par.Get("attribute").Text(src) != attr
			if !ok {
				fresh = false
			}
		}
		return true
	})
	return fresh
}

// freshModuleTensor: obj is `mod.weight` (a tensor torch.nn's constructor
// makes: torchapi.ModuleOwnTensors) of a torch.nn module mod this function
// made and has only given other attributes since (`tmp = nn.Linear(1, 1);
// tmp.weight.data = w`): a new parameter, which no graph can have captured.
func freshModuleTensor(p *Pass, m *model, obj *Node, assign *Node) bool {
	src := p.Src()
	obj = Unparen(obj)
	if obj == nil || obj.Kind() != "attribute" || !moduleOwnTensors[obj.Get("attribute").Text(src)] {
		return false
	}
	base := Unparen(obj.Get("object"))
	if base == nil || base.Kind() != "identifier" {
		return false
	}
	b := m.BindingOf(base.Text(src), assign)
	if b == nil || b.IsParam || b.Unpack || b.Value == nil || Unparen(b.Value).Kind() != "call" {
		return false
	}
	q := p.File.Qualify(Unparen(Unparen(b.Value).Get("function")))
	if !strings.HasPrefix(q, "torch.nn.") || strings.HasPrefix(q, "torch.nn.functional.") {
		return false
	}
	return freshObject(p, m, base, obj.Get("attribute").Text(src), assign)
}

// siteKey names a persistent-buffer site: module.function.name, with the
// module's full dotted name, so that two files of one stem (a/util.py and
// b/util.py) never share a buffer. That is the name Python imports it by
// when it sits in a package (folders with __init__.py up to the import
// root), and otherwise its path from the working directory.
func siteKey(f *File, fn *Function, name string) string {
	q := "module"
	if fn != nil && fn.Qual != "" {
		q = fn.Qual
	}
	return join(join(moduleKey(f), q), name)
}

// moduleKey is the file's importable dotted name (see siteKey).
func moduleKey(f *File) string {
	if f.Module != nil && !f.Module.IsDir {
		parts := []string{f.Module.Name}
		for d := f.Module.Parent; d != nil && d.IsDir && d.File != nil && d.Name != ""; d = d.Parent {
			parts = append([]string{d.Name}, parts...)
		}
		if len(parts) > 1 {
			return strings.Join(parts, ".")
		}
	}
	if f.Name != "" {
		return f.Name
	}
	return strings.TrimSuffix(filepath.Base(f.Path), ".py")
}

// Prime builds the facts rules share and build lazily (CG201's captured
// attributes and known buffers, the reads after a replay, the writes of
// replay-prep), so that rules can run on every core: a rule that built
// one of them on first use from several goroutines would write one map
// from each.
func Prime(a *analysis.Analysis) {
	capturedAttrs(a)
	byCallReads(a)
	knownBuffer(a, "")
	registered(a, "")
	readsAfterReplay(a)
	prepWrites(a)
}

// graphLocal: the graph region r captures into is a local of fn used only
// to capture and replay it there (`g = torch.cuda.CUDAGraph()`, `with
// torch.cuda.graph(g):`, `g.replay()`): not stored, returned, passed on or
// used by a nested function other than a helper this function only calls
// (onlyCalled), so every replay of it happens in this call.
func graphLocal(fn *Function, r *Region, src []byte) bool { return localGraphOf(fn, r, src) != nil }

// localGraph is a graph that lives and replays only in the function that
// captures it (graphLocal): where it is made (`g = torch.cuda.CUDAGraph()`)
// and replayed.
type localGraph struct {
	made    []*Node
	replays []*Node // the `g.replay()` calls
	// taken: the replay method is taken as a value (`run = g.replay`), so
	// replays run wherever that value is called.
	taken bool
}

// localGraphOf is the local graph region r captures into, or nil where it
// is not one (graphLocal).
func localGraphOf(fn *Function, r *Region, src []byte) *localGraph {
	name := ""
	n := r.Node
	if n.Kind() == "with_statement" {
		Walk(n, func(x *Node) bool {
			if name != "" || x.Kind() == "block" {
				return false
			}
			if x.Kind() == "call" {
				if a := positional(x.Get("arguments")); len(a) > 0 && strings.HasSuffix(x.Get("function").Text(src), "graph") {
					if g := Unparen(a[0]); g != nil && g.Kind() == "identifier" {
						name = g.Text(src)
					}
				}
			}
			return name == ""
		})
	} else {
		Walk(n, func(x *Node) bool {
			if recv, meth, _ := methodCall(x, src); recv != nil && meth == "capture_begin" {
				if g := Unparen(recv); g != nil && g.Kind() == "identifier" {
					name = g.Text(src)
				}
			}
			return name == ""
		})
	}
	if name == "" || fn.Body == nil || !plainLocal(fn, name) {
		return nil // the caller's graph (or a global): replayed elsewhere
	}
	graphs, holders := graphHolders(fn, name, src)
	lg := &localGraph{taken: len(holders) > 0}
	local := true
	held := func(x *Node) bool { // x is `C[k]` or `C.get(k)` of a holder C
		x = Unparen(x)
		switch {
		case x == nil:
			return false
		case x.Kind() == "subscript":
			v := x.Get("value")
			return v != nil && v.Kind() == "identifier" && holders[v.Text(src)]
		case x.Kind() == "call":
			recv, meth, _ := methodCall(x, src)
			return recv != nil && meth == "get" && recv.Kind() == "identifier" && holders[recv.Text(src)]
		}
		return false
	}
	isGraph := func(x *Node) bool {
		x = Unparen(x)
		return x != nil && x.Kind() == "identifier" && graphs[x.Text(src)]
	}
	// graphUse: the read x of a name that holds the graph, or the
	// holder's element `C[k]` that is one, is used as a local graph is:
	// bound, replayed, put in a holder, captured into or deleted.
	graphUse := func(x *Node) bool {
		p := x.Parent()
		switch {
		case p.Kind() == "assignment" && p.Get("left") == x:
			// g = torch.cuda.CUDAGraph(), or graph = graphs[key]
			v := Unparen(p.Get("right"))
			switch {
			case v != nil && v.Kind() == "call" && strings.HasSuffix(v.Get("function").Text(src), "CUDAGraph"):
				lg.made = append(lg.made, p)
			case held(v):
			default:
				return false
			}
		case p.Kind() == "assignment" && p.Get("right") == x:
			// graphs[key] = g
			return x.Kind() == "identifier" && held(p.Get("left"))
		case p.Kind() == "attribute" && p.Get("object") == x:
			switch p.Get("attribute").Text(src) {
			case "replay":
				if pp := p.Parent(); pp != nil && pp.Kind() == "call" && pp.Get("function") == p {
					lg.replays = append(lg.replays, pp)
				} else {
					lg.taken = true // `run = g.replay`: replayed wherever run is called
				}
			case "capture_begin", "capture_end", "reset", "pool", "enable_debug_mode", "debug_dump":
			default:
				return false
			}
		case p.Kind() == "argument_list" && p.Parent() != nil && p.Parent().Kind() == "call" && strings.HasSuffix(p.Parent().Get("function").Text(src), "graph") && p.NamedChildren()[0] == x:
			// torch.cuda.graph(g, ...)
		case p.Kind() == "argument_list" && x.Kind() == "identifier" && p.Parent() != nil && p.Parent().Kind() == "call":
			// graphs.append(g)
			recv, meth, _ := methodCall(p.Parent(), src)
			return len(p.NamedChildren()) == 1 && meth == "append" && recv != nil && recv.Kind() == "identifier" && holders[recv.Text(src)]
		case p.Kind() == "delete_statement":
		default:
			return false
		}
		return true
	}
	// holderUse: the read x of a holder is one of a graph's container
	// that the function keeps to itself: filled with the graph, emptied,
	// asked for membership or size, or read for the graph (graphUse).
	holderUse := func(x *Node) bool {
		p := x.Parent()
		switch {
		case p.Kind() == "assignment" && p.Get("left") == x:
			return emptyContainer(p.Get("right"), src)
		case p.Is("pattern_list", "tuple_pattern") && p.Parent() != nil && p.Parent().Kind() == "assignment" && p.Parent().Get("left") == p:
			// runners, outs = {}, {}
			v := Unparen(p.Parent().Get("right"))
			if v == nil || !v.Is("expression_list", "tuple") {
				return false
			}
			l, r := p.NamedChildren(), v.NamedChildren()
			for i := range l {
				if l[i] == x {
					return len(l) == len(r) && emptyContainer(r[i], src)
				}
			}
			return false
		case p.Kind() == "subscript" && p.Get("value") == x:
			if pp := p.Parent(); pp != nil && (pp.Kind() == "assignment" && pp.Get("left") == p && isGraph(pp.Get("right")) || pp.Kind() == "assignment" && pp.Get("right") == p && isGraph(pp.Get("left"))) {
				return true
			}
			return graphUse(p)
		case p.Kind() == "comparison_operator":
			// key in graphs
			return true
		case p.Kind() == "argument_list" && p.Parent() != nil && p.Parent().Kind() == "call" && p.Parent().Get("function").Text(src) == "len":
			return true
		case p.Kind() == "attribute" && p.Get("object") == x:
			pp := p.Parent()
			if pp == nil || pp.Kind() != "call" || pp.Get("function") != p {
				return false
			}
			switch p.Get("attribute").Text(src) {
			case "append":
				a := positional(pp.Get("arguments"))
				return len(a) == 1 && isGraph(a[0])
			case "get":
				ppp := pp.Parent()
				return ppp != nil && ppp.Kind() == "assignment" && ppp.Get("right") == pp && isGraph(ppp.Get("left"))
			case "clear":
				return true
			}
			return false
		case p.Kind() == "delete_statement":
			return true
		}
		return false
	}
	Walk(fn.Body, func(x *Node) bool {
		if !local {
			return false
		}
		if x.Is("function_definition", "lambda", "class_definition") && x != fn.Def {
			if !mentionsAny(x, graphs, src) && !mentionsAny(x, holders, src) {
				return false
			}
			if x.Kind() == "function_definition" && onlyCalled(fn, x, src) {
				// A replay helper (`def replay(): out.fill_(0);
				// g.replay()`) that this function only calls: the graph's
				// uses in it are checked as the function's own, and its
				// replays run where it is called.
				lg.taken = true
				return true
			}
			local = false
			return false
		}
		if x.Kind() != "identifier" || !syntax.NameRef(x) {
			return true
		}
		switch t := x.Text(src); {
		case graphs[t]:
			local = graphUse(x)
		case holders[t]:
			local = holderUse(x)
		}
		return local
	})
	if !local || len(lg.made) == 0 {
		return nil
	}
	return lg
}

// emptyContainer: v makes a new empty dict or list (`{}`, `[]`,
// `dict()`, `list()`).
func emptyContainer(v *Node, src []byte) bool {
	v = Unparen(v)
	switch {
	case v == nil:
		return false
	case v.Is("dictionary", "list"):
		return len(v.NamedChildren()) == 0
	case v.Kind() == "call":
		f := v.Get("function").Text(src)
		return (f == "dict" || f == "list") && len(v.Get("arguments").NamedChildren()) == 0
	}
	return false
}

// plainLocal: name is a local of fn, not a parameter or a global.
func plainLocal(fn *Function, name string) bool {
	return !fn.HasParam(name) && !fn.Globals[name] && fn.Locals[name]
}

// graphHolders are the local names that hold the graph named name
// (name, and the locals bound to an element of a holder: `graph =
// graphs[key]`) and the holders: plain locals of fn the graph is put in
// (`graphs[key] = g`, `graphs.append(g)`). localGraphOf checks that each
// is used only so.
func graphHolders(fn *Function, name string, src []byte) (graphs, holders map[string]bool) {
	graphs, holders = map[string]bool{name: true}, map[string]bool{}
	ident := func(x *Node) string {
		if x = Unparen(x); x != nil && x.Kind() == "identifier" && plainLocal(fn, x.Text(src)) {
			return x.Text(src)
		}
		return ""
	}
	for changed := true; changed; {
		changed = false
		add := func(m map[string]bool, n string) {
			if n != "" && !m[n] && !graphs[n] && !holders[n] {
				m[n] = true
				changed = true
			}
		}
		Walk(fn.Body, func(x *Node) bool {
			if x.Is("function_definition", "lambda", "class_definition") && x != fn.Def {
				return false
			}
			switch x.Kind() {
			case "assignment":
				l, r := Unparen(x.Get("left")), Unparen(x.Get("right"))
				if l == nil || r == nil {
					return true
				}
				if g := ident(r); g != "" && graphs[g] && l.Kind() == "subscript" {
					add(holders, ident(l.Get("value")))
				}
				if r.Kind() == "subscript" && holders[ident(r.Get("value"))] {
					add(graphs, ident(l))
				}
				if recv, meth, _ := methodCall(r, src); recv != nil && meth == "get" && holders[ident(recv)] {
					add(graphs, ident(l))
				}
			case "call":
				if recv, meth, _ := methodCall(x, src); recv != nil && meth == "append" {
					if a := positional(x.Get("arguments")); len(a) == 1 && graphs[ident(a[0])] {
						add(holders, ident(recv))
					}
				}
			}
			return true
		})
	}
	return graphs, holders
}

// mentionsAny: x reads one of names.
func mentionsAny(x *Node, names map[string]bool, src []byte) bool {
	for n := range names {
		if mentions(x, n, src) {
			return true
		}
	}
	return false
}

// onlyCalled: nested def d of fn is only called by its name in fn (`def
// replay(): ...`, then `replay()`): never stored, passed on, returned or
// bound again, so it runs only in fn's call.
func onlyCalled(fn *Function, d *Node, src []byte) bool {
	nameNode := d.Get("name")
	if nameNode == nil || fn.Body == nil {
		return false
	}
	name := nameNode.Text(src)
	ok, calls := true, 0
	Walk(fn.Body, func(x *Node) bool {
		if !ok {
			return false
		}
		if x.Kind() != "identifier" || x == nameNode || x.Text(src) != name || !syntax.NameRef(x) {
			return true
		}
		if p := x.Parent(); p != nil && p.Kind() == "call" && p.Get("function") == x {
			calls++
			return true
		}
		ok = false // read as a value, bound again, or a def of the same name
		return false
	})
	return ok && calls > 0
}

// ctorKey is the Project.Memo key of constructing.
type ctorKey struct{ fn *index.Function }

// constructing: the constructors (`__init__`) whose new object fn's self
// is, whenever fn runs; nil where that is not proved. Such code binds the
// attributes of an object no graph has read yet (a constructor runs once
// an object). fn is
//   - a constructor;
//   - a private method (`_alloc`, no dunder) that is only called on self
//     by such code: every call edge into it is `self._alloc(...)` in such
//     code, and the project names `._alloc` nowhere else (a call the
//     analysis did not resolve still names it);
//   - a def nested in such code that sees its self and never leaves the
//     calls it makes: its name is only called, or passed to a call whose
//     callee's parameter is itself only called or passed on so (a
//     guarded-phase helper's `fn()`), three calls deep at most; a closure
//     stored, returned or kept as a callback can run after the capture.
func constructing(p *Pass, fn *index.Function) []*index.Function {
	if fn == nil || p.Proj == nil || p.Proj.G == nil {
		return nil
	}
	return p.Proj.Memo(ctorKey{fn}, func() any {
		return ctorsOf(p.Proj, fn, map[*index.Function]bool{})
	}).([]*index.Function)
}

func ctorsOf(proj *analysis.Project, fn *index.Function, path map[*index.Function]bool) []*index.Function {
	if path[fn] || fn.Self() == "" {
		return nil
	}
	path[fn] = true
	defer delete(path, fn)
	switch {
	case fn.Class != nil && fn.Name == "__init__":
		return []*index.Function{fn}
	case fn.Class != nil:
		if !strings.HasPrefix(fn.Name, "_") || strings.HasSuffix(fn.Name, "__") || fn.Static || fn.ClassMethod || fn.Property {
			return nil
		}
		in := proj.G.In[fn]
		if len(in) == 0 {
			return nil
		}
		var out []*index.Function
		sites := map[*Node]bool{}
		for _, e := range in {
			if e.Site == nil || e.Caller == nil || e.Caller.Self() == "" {
				return nil
			}
			f := Unparen(e.Site.Get("function"))
			if f == nil || f.Kind() != "attribute" || !isName(Unparen(f.Get("object")), e.Caller.Self(), e.Caller.File.Src) {
				return nil
			}
			cs := ctorsOf(proj, e.Caller, path)
			if cs == nil {
				return nil
			}
			out = append(out, cs...)
			sites[e.Site] = true
		}
		if attrNamed(proj)[fn.Name] != len(sites) {
			return nil // named elsewhere: a call the analysis did not resolve
		}
		return out
	case fn.Outer != nil && fn.Outer.Kind != index.TopLevel && fn.Kind == index.Def && fn.Self() == fn.Outer.Self():
		cs := ctorsOf(proj, fn.Outer, path)
		if cs == nil || !onlyRun(proj, fn.Outer, fn.Name, fn.Def, 0) {
			return nil
		}
		return cs
	}
	return nil
}

// attrNamedKey is the Project.Memo key of attrNamed.
type attrNamedKey struct{}

// attrNamed counts, for each private name, the attribute references
// (`x._alloc`) to it in the project's code.
func attrNamed(proj *analysis.Project) map[string]int {
	return proj.Memo(attrNamedKey{}, func() any {
		out := map[string]int{}
		for _, f := range proj.Files {
			if f.Tree == nil || f.Tree.Root == nil {
				continue
			}
			syntax.Walk(f.Tree.Root, func(n *Node) bool {
				if n.Kind() == "attribute" {
					if a := n.Get("attribute"); a != nil && bytes.HasPrefix(f.Src[a.Start:a.End], []byte("_")) {
						out[a.Text(f.Src)]++
					}
				}
				return true
			})
		}
		return out
	}).(map[string]int)
}

// onlyRun: in fn's code, name (a def nested in it, skipped, or a
// parameter) is only called, or passed to calls whose callees' receiving
// parameters are onlyRun in turn (depth calls deep at most).
func onlyRun(proj *analysis.Project, fn *index.Function, name string, skip *Node, depth int) bool {
	if depth > 3 || fn.Body == nil {
		return false
	}
	src := fn.File.Src
	ok := true
	syntax.Walk(fn.Body, func(n *Node) bool {
		if !ok || n == skip {
			return false
		}
		if n.Kind() != "identifier" || n.Text(src) != name {
			return true
		}
		parent := n.Parent()
		if skip != nil && n == skip.Get("name") || parent != nil && (parent.Kind() == "attribute" && parent.Get("attribute") == n || parent.Kind() == "keyword_argument" && parent.Get("name") == n) {
			return true
		}
		if inNestedScope(n, fn.Body, skip) {
			ok = false
			return false
		}
		switch {
		case parent == nil:
			ok = false
		case parent.Kind() == "call" && parent.Get("function") == n:
		case parent.Kind() == "argument_list" && parent.Parent() != nil && parent.Parent().Kind() == "call":
			ok = passedOnlyRun(proj, fn, parent.Parent(), n, depth)
		case parent.Kind() == "keyword_argument" && parent.Get("value") == n && parent.Parent() != nil && parent.Parent().Parent() != nil:
			ok = passedOnlyRun(proj, fn, parent.Parent().Parent(), n, depth)
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// inNestedScope: n sits in a def, lambda or class inside body (other than
// skip, which onlyRun does not enter).
func inNestedScope(n, body, skip *Node) bool {
	for q := n.Parent(); q != nil && q != body; q = q.Parent() {
		switch q.Kind() {
		case "function_definition", "lambda", "class_definition":
			return q != skip
		}
	}
	return false
}

// passedOnlyRun: arg, passed to call (by position or keyword: paramArg), is
// only run by every callee the analysis gives the call.
func passedOnlyRun(proj *analysis.Project, fn *index.Function, call, arg *Node, depth int) bool {
	edges := proj.G.Callees(call)
	if len(edges) == 0 {
		return false
	}
	for _, a := range positional(call.Get("arguments")) {
		if a.Kind() == "list_splat" || a.Kind() == "dictionary_splat" {
			return false // the positions after a splat are unknown
		}
	}
	for _, e := range edges {
		c := e.Callee
		if c == nil {
			return false
		}
		param := ""
		for i, q := range c.Params {
			if q.Kind != index.VarArgs && q.Kind != index.VarKw && paramArg(call, c, i, fn.File.Src) == arg {
				param = q.Name
			}
		}
		if param == "" || !onlyRun(proj, c, param, nil, depth+1) {
			return false
		}
	}
	return true
}

// identityTest: comparison n tests identity or membership (`a is None`,
// `t in outs`, `not in`), not values: no mask, no read of a tensor's data
// (the value model's KMeta for them, tensors.Model.Kind).
func identityTest(n *Node) bool {
	for _, c := range n.Children() {
		if !c.Named() {
			switch c.Kind() {
			case "is", "in", "not", "is not", "not in":
				return true
			}
		}
	}
	return false
}

// noopAssumption is noopConversion without the binding: where conversion
// right (t, nil for a bare `.cuda()`) may return its source itself, the
// source and what a finding that takes the result for a new tensor assumes
// of it ("is not already torch.int32: ..."); "" where the result is new
// either way.
func noopAssumption(p *Pass, m *model, t *Temp, right *Node) (*Node, string) {
	src := p.Src()
	if recv, name, args := methodCall(right, src); t == nil && recv != nil && name == "cuda" && len(args.NamedChildren()) == 0 {
		// x.cuda() of a tensor on the current CUDA device returns x itself.
		t = &Temp{Op: "cuda", Source: recv}
	}
	// `.to(device=d, dtype=t)` returns the tensor itself too where it is
	// on that device with that dtype (Tensor.to's documented contract): a
	// conversion that also names the device.
	onDevice := false
	if t != nil && len(t.Other) > 0 && deviceOnly(t.Other) {
		t, onDevice = &Temp{Expr: t.Expr, Op: t.Op, Dtype: t.Dtype, Source: t.Source}, true
	}
	if t == nil || t.Reshape != "" || len(t.Other) > 0 || t.Op == "clone" {
		return nil, ""
	}
	if t.Dtype == "" && t.Op != "contiguous" && t.Op != "cuda" {
		return nil, ""
	}
	s := Unparen(t.Source)
	if conversionSourceFresh(p, m, s, 0) {
		return nil, "" // new either way: the function made the tensor it converts
	}
	if s.Kind() == "attribute" && t.Dtype != "" {
		if _, sdtype, ok := onlyAllocation(p.Proj, s.Get("attribute").Text(src), nil); ok && sdtype != "" && sdtype != t.Dtype {
			return nil, "" // allocated everywhere with another dtype: the conversion copies
		}
	}
	switch {
	case onDevice:
		return s, "is not already " + t.Dtype + " on that device: a conversion to a tensor's own dtype and device returns the tensor itself"
	case t.Op == "cuda":
		return s, "is not on the GPU already: `.cuda()` of a tensor on the current device returns the tensor itself"
	case t.Dtype == "":
		return s, "is not contiguous already: `.contiguous()` of a contiguous tensor returns the tensor itself"
	}
	return s, "is not already " + t.Dtype + ": a conversion to a tensor's own dtype returns the tensor itself"
}

// deviceOnly: the arguments a conversion's Temp left in Other are a
// device only (`device=d`), which a no-op conversion may name.
func deviceOnly(other []string) bool {
	for _, o := range other {
		if !strings.HasPrefix(strings.ReplaceAll(o, " ", ""), "device=") {
			return false
		}
	}
	return true
}

// conversionSourceFresh: s is a tensor the function makes anew on every
// call: a factory or a copying op, tensor arithmetic, an advanced index
// (`x[idx[:n]]`: a gather copies), a conversion or `.cuda()` of such a
// tensor, or a local bound to one. A parameter, another object's attribute
// or a call of project code is not proved fresh.
func conversionSourceFresh(p *Pass, m *model, s *Node, depth int) bool {
	s = Unparen(s)
	if s == nil || depth > 8 {
		return false
	}
	src := p.Src()
	switch s.Kind() {
	case "binary_operator", "unary_operator":
		// Converted, it is a tensor; an operator on a tensor allocates its
		// result (the in-place ones are statements, not expressions).
		return true
	case "subscript":
		for _, i := range s.All("subscript") {
			if advancedIndex(m, Unparen(i)) {
				return true
			}
		}
		return false
	case "identifier":
		b := m.BindingOf(s.Text(src), s)
		if b == nil || b.IsParam || b.Value == nil || b.Unpack {
			return false
		}
		return conversionSourceFresh(p, m, b.Value, depth+1)
	case "call":
		if t := tempOf(p.File, s); t != nil {
			if t.Op == "clone" {
				return true
			}
			return conversionSourceFresh(p, m, t.Source, depth+1)
		}
		if recv, name, _ := methodCall(s, src); recv != nil && aliasMethods[name] {
			// .to(device), .cuda(), a view and the like return their
			// receiver, a view of it or a copy of it: fresh where the
			// receiver is.
			return conversionSourceFresh(p, m, recv, depth+1)
		}
		if isTensorFactory(p.File, s) {
			return true
		}
		return torchOpFresh(p.File.Qualify(s.Get("function")))
	}
	return false
}

// advancedIndex: an index that is a tensor, a list or a slice of a
// sequence (`idx[:n]`): indexing with it gathers into a new tensor.
func advancedIndex(m *model, i *Node) bool {
	switch i.Kind() {
	case "list", "list_comprehension":
		return true
	case "subscript":
		for _, j := range i.All("subscript") {
			if Unparen(j).Kind() == "slice" {
				return true // a slice of an int is an error: a sequence or a tensor
			}
		}
	}
	return m.Kind(i) == KTensor
}

// onlyAllocation: every binding of attribute attr in the project (but
// skip) is an allocation with one shape and dtype, given as text.
func onlyAllocation(proj *Project, attr string, skip *Node) (shape, dtype string, ok bool) {
	n := 0
	bad := false
	for _, f := range proj.Files {
		if bad || !bytes.Contains(f.Src, []byte("."+attr)) {
			continue
		}
		Walk(f.Tree.Root, func(x *Node) bool {
			if bad {
				return false
			}
			if x.Kind() != "assignment" {
				return true
			}
			l := x.Get("left")
			if l == nil || l.Kind() != "attribute" || l == skip || l.Get("attribute").Text(f.Src) != attr {
				return true
			}
			s, d, ok := allocationOf(f, Unparen(x.Get("right")))
			if !ok || n > 0 && (s != shape || d != dtype) {
				bad = true
				return false
			}
			shape, dtype = s, d
			n++
			return true
		})
	}
	return shape, dtype, n > 0 && !bad
}
