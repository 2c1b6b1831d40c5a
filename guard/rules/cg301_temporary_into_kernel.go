package rules

import (
	"fmt"
	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"strconv"
	"strings"
)

var ruleTemporaryIntoKernel = &Rule{
	ID: "CG301", Name: "temporary-into-kernel", Severity: SeverityWarning, Fix: "sometimes",
	Contexts: []Context{Captured, ReplayPrep, Claimed, Launcher},
	Summary:  "a tensor temporary whose memory the graph does not own feeds captured kernels",
	Doc:      doc("cg301_temporary_into_kernel.md"),
	Run:      runTemporaries,
}

func runTemporaries(p *Pass) {
	if p.Ctx == ReplayPrep {
		prepTemporaries(p)
		return
	}
	strict := p.Proj.Cfg != nil && p.Proj.Cfg.StrictTemporaries
	reported := map[*Node]bool{}
	storedTemporaries(p, reported)
	rawAllocations(p, reported)
	if p.Ctx == Claimed || strict {
		perCallTemporaries(p, reported, strict)
	}
}

// perCallTemporaries reports each conversion temporary a kernel launch of
// the function reads (claimed functions; every context with
// strict-temporaries).
func perCallTemporaries(p *Pass, reported map[*Node]bool, strict bool) {
	src := p.Src()
	fn := p.Fn
	all := assignmentsIn(bodyStmts(fn), src)
	for _, call := range p.Calls() {
		kernel, ok := p.Proj.KernelName(p.File, call)
		if !ok {
			continue
		}
		args := call.Get("arguments")
		if args == nil {
			continue
		}
		posIndex := -1
		for ai, arg := range args.NamedChildren() {
			label := strconv.Itoa(ai)
			use := kernelUse{Call: call, Kernel: kernel, Index: -1}
			if arg.Kind() == "keyword_argument" {
				label = arg.Get("name").Text(src)
				use.Keyword = label
				arg = arg.Get("value")
			} else {
				posIndex++
				use.Index = posIndex
			}
			arg = Unparen(arg)
			if arg == nil {
				continue
			}
			if t := tempOf(p.File, arg); t != nil {
				if reported[t.Expr] {
					continue
				}
				reported[t.Expr] = true
				site := siteKey(p.File, fn, fmt.Sprintf("%s.%s", lastName(kernel), label))
				msg := perCallMessage(p, t, src, kernel, strict)
				fix, why := checkedTempFix(p, t, strconv.Quote(site), Safe, "", []kernelUse{use})
				if fix == nil {
					msg = noFix(msg, why)
				}
				p.Report(t.Expr, msg, fix)
				continue
			}
			if arg.Kind() != "identifier" {
				continue
			}
			name := arg.Text(src)
			var last *assignment
			for i := range all {
				if all[i].Name == name && all[i].Stmt.End <= call.Start {
					last = &all[i]
				}
			}
			if last == nil {
				continue
			}
			t := tempOf(p.File, last.Value)
			if t == nil || reported[t.Expr] {
				continue
			}
			reported[t.Expr] = true
			app := Safe
			if escapes(p, name, last, src) {
				app = Unsafe
			}
			site := siteKey(p.File, fn, name)
			msg := perCallMessage(p, t, src, kernel, strict)
			var fix *Fix
			why := ""
			if how := keptHow(p, name, last); how != "" {
				why = "`" + name + "` is " + how + ", so a buffer per site would be overwritten by the next call while it is still held"
			} else {
				fix, why = checkedTempFix(p, t, strconv.Quote(site), app, name, kernelUsesOf(p, name))
			}
			if fix == nil {
				msg = noFix(msg, why)
			}
			p.Report(t.Expr, msg, fix)
		}
	}
}

func perCallMessage(p *Pass, t *Temp, src []byte, kernel string, strict bool) string {
	what := fmt.Sprintf("temporary `%s` feeds kernel `%s`", short(t.Expr.Text(src)), kernel)
	if p.Ctx == Claimed {
		return what + " in a function that claims capture safety: it is graph-owned (and replays clean) only while every caller makes it inside torch.cuda.graph; copy into a persistent buffer so the claim holds"
	}
	return what + " (strict-temporaries): graph-owned only while made inside torch.cuda.graph; copy into a persistent buffer"
}

// storedTemporaries reports a temporary stored on an object attribute that
// the same function read earlier: the stateful step (read the previous
// call's value, store this call's). Under capture the read records the
// tensor bound before the capture, which the store then frees.
func storedTemporaries(p *Pass, reported map[*Node]bool) {
	src := p.Src()
	locals := map[string]*Temp{}
	p.Walk(func(n *Node) bool {
		if n.Kind() != "assignment" {
			return true
		}
		l, r := n.Get("left"), Unparen(n.Get("right"))
		if l == nil || r == nil {
			return true
		}
		t := tempOf(p.File, r)
		if t == nil && r.Kind() == "identifier" {
			t = locals[r.Text(src)]
		}
		if l.Kind() == "identifier" {
			if t != nil {
				locals[l.Text(src)] = t
			} else {
				delete(locals, l.Text(src))
			}
			return true
		}
		if t == nil || l.Kind() != "attribute" || reported[t.Expr] || !readBefore(p, l, n) {
			return true
		}
		if Unparen(t.Source).Text(src) == l.Text(src) {
			// x.a = x.a.to(torch.int32) converts this call's input in place of
			// it: the conversion reads the input, later reads in the capture
			// read the conversion. Not the stateful step.
			return true
		}
		reported[t.Expr] = true
		site := siteKey(p.File, p.Fn, strings.ReplaceAll(short(l.Get("object").Text(src)), ".", "_")+"."+l.Get("attribute").Text(src))
		msg := fmt.Sprintf("temporary `%s` is stored on `%s`, which this function read earlier: under capture the graph reads the tensor bound before it, which this store frees, so every replay reads stale memory", short(t.Expr.Text(src)), l.Text(src))
		fix, why := checkedTempFix(p, t, instanceKey(p, l.Get("object"), site), Unsafe, "", nil)
		if held := attrHeldElsewhere(p, l.Get("attribute").Text(src), n); fix != nil && held != "" {
			fix, why = nil, held+", and the next call would overwrite a persistent buffer in place"
		}
		if c := constructorWhy(p, l.Get("object")); fix != nil && c != "" {
			fix, why = nil, c
		}
		if fix == nil {
			msg = noFix(msg, why)
		}
		p.Report(t.Expr, msg, fix)
		return true
	})
}

// readBefore reports whether the function reads attribute target (same
// object text) before the statement at.
func readBefore(p *Pass, target, at *Node) bool {
	src := p.Src()
	want := target.Text(src)
	found := false
	walkCode(bodyStmts(p.Fn), func(x *Node) bool {
		if found || x.Start >= at.Start {
			return false
		}
		if x.Kind() == "attribute" && x.Text(src) == want {
			par := x.Parent()
			switch {
			case par != nil && par.Kind() == "assignment" && par.Get("left") == x:
				// a binding, not a read
			case par != nil && par.Kind() == "attribute" && par.Get("object") == x && harmlessUses[par.Get("attribute").Text(src)]:
				// x.attr.dtype, x.attr.shape: metadata, not the tensor's memory
			default:
				found = true
			}
		}
		return !found
	})
	return found
}

// rawAllocations reports kernel arguments bound to memory from an explicit
// allocator, or allocated under torch.cuda.use_mem_pool.
func rawAllocations(p *Pass, reported map[*Node]bool) {
	src := p.Src()
	m := newModel(p)
	for _, call := range p.Calls() {
		kernel, ok := p.Proj.KernelName(p.File, call)
		if !ok {
			continue
		}
		for _, arg := range call.Get("arguments").NamedChildren() {
			if arg.Kind() == "keyword_argument" {
				arg = arg.Get("value")
			}
			arg = Unparen(arg)
			if arg == nil || arg.Kind() != "identifier" {
				continue
			}
			b := m.BindingOf(arg.Text(src), arg)
			if b == nil || b.Value == nil || b.IsParam || b.Unpack {
				continue
			}
			v := Unparen(b.Value)
			if v.Kind() != "call" || reported[v] {
				continue
			}
			why := ""
			if q := p.File.Qualify(v.Get("function")); rawAllocators[q] {
				why = "comes from `" + q + "`, not from the graph's pool"
			} else if isTensorFactory(p.File, v) && underMemPool(p.File, v) {
				why = "is allocated under `torch.cuda.use_mem_pool`, from a pool that is not the graph's"
			}
			if why == "" {
				continue
			}
			reported[v] = true
			sev := SeverityWarning
			p.ReportSeverity(v, sev, fmt.Sprintf("`%s` passed to kernel `%s` %s: once freed, its address is reused while the graph still replays it", arg.Text(src), kernel, why), nil)
		}
	}
}

func underMemPool(f *File, n *Node) bool {
	for x := n.Parent(); x != nil && !x.Is("function_definition", "lambda", "class_definition"); x = x.Parent() {
		if x.Kind() != "with_statement" {
			continue
		}
		found := false
		Walk(x, func(c *Node) bool {
			if found || c.Kind() == "block" {
				return false
			}
			if c.Kind() == "call" {
				if q := f.Qualify(c.Get("function")); q == "torch.cuda.use_mem_pool" || q == "torch.cuda.memory.use_mem_pool" {
					found = true
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// prepTemporaries reports, in replay-prep code, a temporary that is kept:
// stored on an object (where CG201 does not already report the binding),
// in a container, given to a constructor or a container method, or
// returned. It outlives the call that made it, outside any graph's pool.
func prepTemporaries(p *Pass) {
	src := p.Src()
	read := readsFor(p).Attrs
	m := newModel(p)
	reported := map[*Node]bool{}
	p.Walk(func(n *Node) bool {
		t := tempOf(p.File, n)
		if t == nil || reported[t.Expr] {
			return true
		}
		where := keptAt(p, m, t.Expr, read, 0, false)
		if where == "" {
			return true
		}
		// A temporary returned: where the replay-prep code that calls the
		// function keeps it decides (keptByCallers), where every such
		// caller can be read.
		callerRead := false
		if strings.HasPrefix(where, "returned") {
			w, atRead, known := keptByCallers(p, read, 0, map[*Function]bool{p.Fn: true})
			if known && w == "" {
				return false // each caller copies it, uses it or drops it
			}
			if known {
				where, callerRead = w, atRead
			}
		}
		reported[t.Expr] = true
		site := siteKey(p.File, p.Fn, "prep."+tempName(p, t.Expr))
		msg := fmt.Sprintf("temporary `%s` is made in replay-prep, outside the capture, and kept (%s): a graph that reads it replays an address that is freed and reused once it is replaced", short(t.Expr.Text(src)), where)
		var fix *Fix
		why := ""
		key := strconv.Quote(site)
		switch {
		case strings.HasPrefix(where, "returned"), strings.HasPrefix(where, "added to a container"), strings.HasPrefix(where, "stored in `"):
			why = "it is " + strings.SplitN(where, " (", 2)[0] + ", and one buffer per site would serve every call (every argument, every entry) while earlier results are still held"
		case strings.HasPrefix(where, "stored on `"):
			key = instanceKey(p, keptObject(p, t.Expr), site)
			if o := keptObject(p, t.Expr); o != nil {
				if held := attrHeldElsewhere(p, o.Parent().Get("attribute").Text(src), o.Parent().Parent()); held != "" {
					why = held + ", and the next call would overwrite a persistent buffer in place"
				} else if c := constructorWhy(p, o); c != "" {
					why = c
				}
			}
		}
		if why == "" {
			fix, why = checkedTempFix(p, t, key, Unsafe, "", nil)
		}
		if fix != nil {
			fix.Message = "copy into a persistent buffer under a stable key instead (unsafe: correct only when this code also ran before capture, so the graph captured the same buffer)"
		} else {
			msg = noFix(msg, why)
		}
		// The hazard is a graph reading the kept tensor. It is proved
		// where it is kept on an attribute that captured code reads (by
		// name); a temporary returned, or kept where no captured code
		// reads, is a graph's input only by assumption: the caller may
		// copy it into the graph's static buffer, or use it eagerly.
		sev := SeverityError
		if callerRead && p.PrepByCall() {
			return false // a caller's keep under a prep only assumed (a guess on a guess)
		}
		if callerRead {
			// Kept by a caller where captured code reads it: what CG201
			// reports of a binding in one function, and like it, a
			// conversion that may return its source binds the tensor
			// this function was given, new only by assumption.
			if s, what := noopAssumption(p, m, t, t.Expr); what != "" {
				sev = SeverityWarning
				msg += "; this assumes `" + short(s.Text(src)) + "` " + what
			}
		} else if !keptWhereRead(p, m, t.Expr, read, 0) {
			if p.PrepByCall() {
				return false // a guess on a guess (Pass.PrepByCall)
			}
			sev = SeverityWarning
			msg += "; this assumes a graph reads it: no captured code reads where it is kept"
		}
		p.ReportSeverity(t.Expr, sev, msg, fix)
		return false
	})
}

// keptByCallers follows a temporary that the pass's replay-prep function
// returns into the replay-prep code that calls it: each call from a
// function that runs as replay-prep, or from a replay-prep region, and
// where the call's result goes there (keptAt: stored on an object or in a
// container, given to a constructor; returned again, followed to that
// function's callers, up to 3 calls up). It returns the first place a
// caller keeps it, in words that name the caller ("" where no caller keeps
// it: each copies it into a tensor, uses it or drops it), whether captured
// code reads that place (keptWhereRead, through resolved calls only), and
// known: false where the function has no replay-prep caller the call graph
// shows (a root of the context: a configured or a framework's hook, whose
// caller is not the project's), or a call of it has no site to read.
func keptByCallers(p *Pass, read map[string]bool, depth int, seen map[*Function]bool) (where string, atRead, known bool) {
	if depth > 2 || p.Fn == nil || p.Proj == nil || p.Proj.G == nil {
		return "", false, false
	}
	callers := 0
	for _, e := range p.Proj.G.In[p.Fn] {
		if e.Caller == nil {
			continue
		}
		var region *Region
		if !p.A.Has(e.Caller, ReplayPrep) {
			for _, r := range p.A.Regions {
				if r.Ctx == ReplayPrep && r.Fn == e.Caller && e.Site != nil && inAny(r.Stmts, e.Site) {
					region = r
					break
				}
			}
			if region == nil {
				continue // set-up or eager code: not the replay-prep run
			}
		}
		if e.Site == nil || e.Site.Kind() != "call" {
			return "", false, false
		}
		callers++
		q := p.For(e.Caller)
		q.Region = region // For keeps the pass's context: replay-prep
		qm := newModel(q)
		budget := maxFollow
		w, unknown := resultKept(q, qm, e.Site, read, 0, &budget)
		switch {
		case unknown:
			return "", false, false
		case w == "":
			continue
		case strings.HasPrefix(w, "returned"):
			if seen[e.Caller] {
				continue // a recursion: its other callers decide
			}
			seen[e.Caller] = true
			w2, r2, k2 := keptByCallers(q, read, depth+1, seen)
			if !k2 {
				return "", false, false
			}
			if w2 == "" {
				continue
			}
			w, atRead = w2, r2 && e.Kind.Strength() >= Resolved.Strength()
		default:
			atRead = e.Kind.Strength() >= Resolved.Strength() && keptWhereRead(q, qm, e.Site, read, 0)
		}
		return "returned to `" + e.Caller.FullName() + "`, which " + keptVerb(w), atRead, true
	}
	return "", false, callers > 0
}

// resultKept is keptAt for the result of a call in a caller
// (keptByCallers), where no finding may rest on what it cannot see: where
// the caller keeps e beyond its own call (keptAt's words; "returned from a
// replay-prep function" where it returns it), "" where every use is seen
// and none keeps it, and unknown where a use may keep it unseen: a call of
// project code or of an unknown callable it is passed to, a comprehension
// or a loop over it, an element read out of the container it is in, a
// view or an alias of it that goes where these cannot follow. Uses that
// keep nothing: a copy into a tensor (`buf.copy_(e)`, `buf[...] = e`), a
// torch function, a tensor's method or a kernel that takes it, arithmetic
// and comparisons, metadata (`e.shape`), a method that computes a new value
// (`e.sum()`), a statement that drops it.
func resultKept(p *Pass, m *model, e *Node, read map[string]bool, depth int, budget *int) (string, bool) {
	src := p.Src()
	*budget--
	if depth > 16 || *budget < 0 {
		return "", true
	}
	for x := e; ; {
		par := x.Parent()
		if par == nil {
			return "", true
		}
		switch par.Kind() {
		case "parenthesized_expression", "expression_list", "list", "tuple", "dictionary", "set", "conditional_expression", "boolean_operator":
			x = par // the value, or a container or choice that holds it
			continue
		case "pair":
			if par.Get("value") != x {
				return "", true
			}
			x = par
			continue
		case "expression_statement", "binary_operator", "unary_operator", "comparison_operator", "not_operator", "if_statement", "while_statement", "assert_statement":
			return "", false // dropped, or a new value computed from it
		case "return_statement":
			if p.Region != nil {
				return "", false
			}
			return "returned from a replay-prep function", false
		case "attribute":
			if par.Get("object") != x {
				return "", true
			}
			name := par.Get("attribute").Text(src)
			if metaAttrs[name] || harmlessUses[name] {
				return "", false
			}
			call := par.Parent()
			if call == nil || call.Kind() != "call" || call.Get("function") != par {
				return "", true // a field of it: where it goes is not followed
			}
			if aliasMethods[name] || viewMethods[name] || strings.HasSuffix(name, "_") {
				x = call // the tensor itself, a view of it, or a conversion that may return it
				continue
			}
			if tensorMethods[name] || metaMethods[name] || hostReads[name] {
				return "", false // a new value computed from it
			}
			return "", true
		case "subscript":
			if par.Get("value") != x {
				return "", false // an index: read, not kept
			}
			x = par // a view or an item of it
			continue
		case "keyword_argument", "argument_list":
			call := callOfArg(par)
			if call == nil {
				return "", true
			}
			recv, name, _ := methodCall(call, src)
			if recv != nil && ContainerStores[name] && (!TensorHomonyms[name] || holdsContainer(p, recv)) {
				return "added to a container with `." + name + "()`", false
			}
			if recv != nil && name == "set_" {
				return "stored on `" + short(recv.Text(src)) + "` (`.set_()` shares its storage)", false
			}
			if recv != nil && (m.Kind(recv) == KTensor || tensorOnlyMethods[name] || strings.HasSuffix(name, "_") && !ContainerStores[name]) {
				return "", false // a tensor's method (copy_ and the in-place ops) reads it
			}
			if _, ok := p.Proj.KernelName(p.File, call); ok {
				return "", false
			}
			callee := Unparen(call.Get("function"))
			if callee != nil && callee.Is("identifier", "attribute") {
				q := p.File.Qualify(callee)
				if strings.HasPrefix(q, "torch.") && !strings.HasPrefix(q, "torch.nn.") {
					return "", false // a torch op reads its inputs
				}
				last := lastName(callee.Text(src))
				if p.Proj.ClassOf(p.File, callee) != nil || last != "" && last[0] >= 'A' && last[0] <= 'Z' {
					return "given to the constructor `" + short(callee.Text(src)) + "(...)`", false
				}
			}
			// Project code: where each callee's parameter goes.
			where, unknown, alias := passedKept(p, call, x, read, depth, budget)
			if unknown || where != "" {
				return where, unknown
			}
			if alias {
				x = call // the callee returns it, or a view of it
				continue
			}
			return "", false
		case "assignment":
			if par.Get("right") != x {
				return "", true
			}
			l := par.Get("left")
			switch l.Kind() {
			case "attribute":
				return "stored on `" + short(l.Text(src)) + "`", false
			case "subscript":
				if m.Kind(l.Get("value")) == KTensor {
					return "", false // an item assignment into a tensor copies the values
				}
				return "stored in `" + short(l.Text(src)) + "`", false
			case "identifier", "pattern_list", "tuple_pattern", "list_pattern":
				// Follow each name bound: where its value goes after.
				var names []*Node
				if l.Kind() == "identifier" {
					names = []*Node{l}
				} else {
					for _, c := range l.NamedChildren() {
						if c.Kind() != "identifier" {
							return "", true
						}
						names = append(names, c)
					}
				}
				where, unknown := "", false
				for _, n := range names {
					readsOfBinding(p, m, par, n.Text(src), func(y *Node) bool {
						where, unknown = resultKept(p, m, y, read, depth+1, budget)
						return where != "" || unknown
					})
					if where != "" || unknown {
						break
					}
				}
				return where, unknown
			}
			return "", true
		}
		return "", true
	}
}

// maxFollow bounds the uses resultKept reads for one call's result (its
// locals, their aliases, the callees it is passed to): past it, unknown.
const maxFollow = 400

// passedKept follows argument arg of call (a call of project code, in the
// pass's function) into each function the call graph says it runs: where
// that function keeps the parameter arg binds (resultKept of each of its
// reads), and alias where it returns it (or a view of it), so that the
// call's result is the argument. unknown where the call has no callee the
// graph knows, cannot be matched to the parameters, or a callee's use of
// it cannot be followed.
func passedKept(p *Pass, call, arg *Node, read map[string]bool, depth int, budget *int) (where string, unknown, alias bool) {
	if depth > 12 || *budget < 0 || p.Proj == nil || p.Proj.G == nil {
		return "", true, false
	}
	edges := p.Proj.G.Callees(call)
	if len(edges) == 0 {
		return "", true, false
	}
	for _, e := range edges {
		param, ok := contexts.ParamFor(p.Proj.G, p.Fn, call, e.Callee, arg)
		if !ok {
			return "", true, false
		}
		if usedInNested(e.Callee, param) {
			return "", true, false // a closure's use is not followed
		}
		q := p.For(e.Callee)
		qm := newModel(q)
		qsrc := q.Src()
		done := false
		walkCode(bodyStmts(e.Callee), func(y *Node) bool {
			if done {
				return false
			}
			if y.Kind() != "identifier" || y.Text(qsrc) != param || fieldName(y) || bindTarget(y) {
				return true
			}
			if b := qm.BindingOf(param, y); b == nil || !b.IsParam {
				return true
			}
			w, unk := resultKept(q, qm, y, read, depth+1, budget)
			switch {
			case unk:
				unknown, done = true, true
			case strings.HasPrefix(w, "returned"):
				alias = true
			case w != "":
				where, done = "passed to `"+e.Callee.FullName()+"`, which "+keptVerb(w), true
			}
			return true
		})
		if unknown || where != "" {
			return where, unknown, false
		}
	}
	return "", false, alias
}

// usedInNested: name occurs in a def, lambda or class nested in fn's body.
func usedInNested(fn *Function, name string) bool {
	src := fn.File.Src
	found := false
	for _, st := range bodyStmts(fn) {
		Walk(st, func(n *Node) bool {
			if found {
				return false
			}
			if n.Is("function_definition", "lambda", "class_definition") {
				Walk(n, func(c *Node) bool {
					if c.Kind() == "identifier" && c.Text(src) == name {
						found = true
					}
					return !found
				})
				return false
			}
			return true
		})
	}
	return found
}

// keptVerb turns keptAt's words into a clause about a caller ("stored on
// `x`" -> "stores it on `x`").
func keptVerb(w string) string {
	for _, r := range [][2]string{{"stored ", "stores it "}, {"added ", "adds it "}, {"given ", "gives it "}, {"returned to ", "returns it to "}, {"passed to ", "passes it to "}} {
		if strings.HasPrefix(w, r[0]) {
			return r[1] + strings.TrimPrefix(w, r[0])
		}
	}
	return "keeps it (" + w + ")"
}

// readsOfBinding calls fn for each read of local name, in source order,
// that the assignment par binds (no later binding in between), until fn
// returns true.
func readsOfBinding(p *Pass, m *model, par *Node, name string, fn func(use *Node) bool) {
	src := p.Src()
	done := false
	walkCode(bodyStmts(p.Fn), func(y *Node) bool {
		if done {
			return false
		}
		if y.Kind() == "identifier" && y.Start >= par.End && y.Text(src) == name && !fieldName(y) && !bindTarget(y) {
			if b := m.BindingOf(name, y); b != nil && b.Start == int(stmtOf(par).Start) {
				done = fn(y)
			}
		}
		return true
	})
}

// bindTarget: identifier y is what an assignment or a loop binds, not a
// read of it.
func bindTarget(y *Node) bool {
	x := y
	for x.Parent() != nil && x.Parent().Is("pattern_list", "tuple_pattern", "list_pattern", "parenthesized_expression") {
		x = x.Parent()
	}
	par := x.Parent()
	return par != nil && par.Is("assignment", "augmented_assignment", "for_statement", "for_in_clause") && par.Get("left") == x
}

// fieldName: identifier y names an attribute (`obj.y`) or a keyword
// (`f(y=...)`), not a variable.
func fieldName(y *Node) bool {
	par := y.Parent()
	return par != nil && (par.Kind() == "attribute" && par.Get("attribute") == y || par.Kind() == "keyword_argument" && par.Get("name") == y)
}

// callOfArg is the call whose argument list par (an argument_list, or a
// keyword_argument in one) is, or nil.
func callOfArg(par *Node) *Node {
	if par.Kind() == "keyword_argument" {
		par = par.Parent()
	}
	if par == nil || par.Parent() == nil || par.Parent().Kind() != "call" {
		return nil
	}
	return par.Parent()
}

// keptWhereRead reports whether expression x (a temporary, or what holds
// it: a container literal, a constructor's result) ends up on an attribute
// that captured code reads (capturedAttrs, by name): assigned to it or to
// an item of it, appended to it, or bound to a local that is.
func keptWhereRead(p *Pass, m *model, x *Node, read map[string]bool, depth int) bool {
	src := p.Src()
	if depth > 4 {
		return false
	}
	// readAttr: an attribute, or an item of one, that captured code reads.
	readAttr := func(n *Node) bool {
		for n = Unparen(n); n != nil && n.Kind() == "subscript"; n = Unparen(n.Get("value")) {
		}
		return n != nil && n.Kind() == "attribute" && read[n.Get("attribute").Text(src)]
	}
	for next := x; next != nil && next.Parent() != nil; {
		x = next
		par := x.Parent()
		next = par
		switch par.Kind() {
		case "parenthesized_expression", "expression_list", "list", "tuple", "dictionary", "pair", "set":
			continue
		case "keyword_argument", "argument_list":
			call := callOfArg(par)
			if call == nil {
				return false
			}
			if recv, name, _ := methodCall(call, src); recv != nil && ContainerStores[name] {
				return readAttr(recv)
			}
			next = call // a constructor's or a call's result holds it: where that goes
			continue
		case "assignment":
			if par.Get("right") != x {
				return false
			}
			l := par.Get("left")
			if l.Kind() == "identifier" {
				found := false
				readsOfBinding(p, m, par, l.Text(src), func(y *Node) bool {
					found = keptWhereRead(p, m, y, read, depth+1)
					return found
				})
				return found
			}
			return readAttr(l)
		}
		return false
	}
	return false
}

// keptAt says where expression e (a temporary) is kept beyond the call, or
// "" when it is only used and dropped. byCall: e is a call of a function
// that returns the temporary (keptByCallers), whose binding to an attribute
// CG201 does not report (it reports a new tensor it sees made).
func keptAt(p *Pass, m *model, e *Node, read map[string]bool, depth int, byCall bool) string {
	src := p.Src()
	if depth > 4 {
		return ""
	}
	for x := e; x.Parent() != nil; x = x.Parent() {
		par := x.Parent()
		switch par.Kind() {
		case "parenthesized_expression", "expression_list":
			continue
		case "list", "tuple", "dictionary", "pair", "set":
			continue // a container holding it: where the container goes decides
		case "subscript":
			if par.Get("value") != x {
				return ""
			}
			continue // a view or an item of it: where that goes decides
		case "return_statement":
			if p.Region != nil {
				return ""
			}
			return "returned from a replay-prep function"
		case "keyword_argument", "argument_list":
			call := callOfArg(par)
			if call == nil {
				return ""
			}
			callee := Unparen(call.Get("function"))
			if recv, name, _ := methodCall(call, src); ContainerStores[name] && (!TensorHomonyms[name] || holdsContainer(p, recv)) {
				return "added to a container with `." + name + "()`"
			}
			if callee != nil && callee.Is("identifier", "attribute") {
				last := lastName(callee.Text(src))
				if p.Proj.ClassOf(p.File, callee) != nil || last != "" && last[0] >= 'A' && last[0] <= 'Z' && !strings.HasPrefix(p.File.Qualify(callee), "torch.") {
					return "given to the constructor `" + short(callee.Text(src)) + "(...)`"
				}
			}
			return ""
		case "assignment":
			if par.Get("right") != x {
				return ""
			}
			l := par.Get("left")
			switch l.Kind() {
			case "attribute":
				attr := l.Get("attribute").Text(src)
				if read[attr] && !freshObject(p, m, l.Get("object"), attr, par) && x == e && !byCall {
					return "" // CG201 reports this binding
				}
				return "stored on `" + short(l.Text(src)) + "`"
			case "subscript":
				if m.Kind(l.Get("value")) == KTensor {
					return "" // an item assignment into a tensor copies the values
				}
				return "stored in `" + short(l.Text(src)) + "`"
			case "identifier":
				// Follow the local: where its value goes after the binding.
				where := ""
				readsOfBinding(p, m, par, l.Text(src), func(y *Node) bool {
					where = keptAt(p, m, y, read, depth+1, byCall)
					return where != ""
				})
				return where
			}
			return ""
		}
		return ""
	}
	return ""
}

// tempName names a temporary for its buffer site: the attribute or local it
// is bound to, else its source's text.
func tempName(p *Pass, e *Node) string {
	src := p.Src()
	for x := e; x.Parent() != nil; x = x.Parent() {
		if x.Parent().Kind() == "assignment" && x.Parent().Get("right") == x {
			l := x.Parent().Get("left")
			if l.Kind() == "identifier" {
				return l.Text(src)
			}
			if l.Kind() == "attribute" {
				return l.Get("attribute").Text(src)
			}
		}
		if x.Parent().Kind() == "keyword_argument" {
			return x.Parent().Get("name").Text(src)
		}
		if x.Parent().Is("expression_statement", "block") {
			break
		}
	}
	r := []rune(short(e.Text(src)))
	out := make([]rune, 0, len(r))
	for _, c := range r {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			out = append(out, c)
		} else if len(out) > 0 && out[len(out)-1] != '_' {
			out = append(out, '_')
		}
	}
	return strings.Trim(string(out), "_")
}

// escapes reports whether local name, bound by a, is used other than as a
// kernel argument or for its shape after the assignment.
func escapes(p *Pass, name string, a *assignment, src []byte) bool {
	esc := false
	for _, s := range bodyStmts(p.Fn) {
		Walk(s, func(n *Node) bool {
			if esc {
				return false
			}
			if n.Kind() != "identifier" || n.Text(src) != name || n.Start < a.Stmt.End || n == a.Target {
				return true
			}
			par := n.Parent()
			if par == nil {
				esc = true
				return false
			}
			switch {
			case par.Kind() == "attribute" && par.Get("object") == n:
				if !harmlessUses[par.Get("attribute").Text(src)] {
					esc = true
				}
			case par.Kind() == "argument_list":
				if _, ok := p.Proj.KernelName(p.File, par.Parent()); !ok {
					esc = true
				}
			case par.Kind() == "keyword_argument" && par.Get("value") == n:
				if _, ok := p.Proj.KernelName(p.File, par.Parent().Parent()); !ok {
					esc = true
				}
			case par.Kind() == "assignment" && par.Get("left") == n:
				// rebound: later uses are of another value
			default:
				esc = true
			}
			return false
		})
	}
	return esc
}
