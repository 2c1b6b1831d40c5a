package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

var ruleDerivedOutsideCapture = &Rule{
	ID: "CG202", Name: "derived-outside-capture", Severity: SeverityError, Fix: "sometimes",
	Contexts: []Context{Captured},
	Summary:  "a tensor derived from the static inputs before the capture region is read by captured code",
	Doc:      doc("cg202_derived_outside_capture.md"),
	Run: func(p *Pass) {
		runDerived(p)
		runWarmUps(p)
	},
}

func derivation(p *Pass, m *model, n *Node) (pure, ok bool) {
	n = Unparen(n)
	if fromNoInput(p, m, n, 0) {
		// Built from sizes and constants only (a random operand scaled,
		// a buffer cast): no input it could go stale against.
		return false, false
	}
	if n == nil || n.Kind() != "call" {
		if n != nil && n.Kind() == "binary_operator" {
			return true, hasTensorOperand(p, n)
		}
		return false, false
	}
	if tempOf(p.File, n) != nil {
		return true, true
	}
	q := p.File.Qualify(n.Get("function"))
	if torchOp(q) && !allocators[q] && !likeFactories[q] && !shapeDraws[q] {
		return true, hasTensorOperand(p, n.Get("arguments"))
	}
	_, name, _ := methodCall(n, p.Src())
	if derivingMethods[name] {
		return true, true
	}
	callee := Unparen(n.Get("function"))
	if callee != nil && callee.Is("identifier", "attribute") {
		last := lastName(callee.Text(p.Src()))
		cls := p.Proj.ClassOf(p.File, callee)
		if cls != nil && !isModuleClass(p.File, cls) || strings.HasSuffix(last, "Metadata") || strings.HasSuffix(last, "Meta") {
			data, splat := dataArgs(p, m, n.Get("arguments"))
			if cls != nil && !splat && len(data) > 0 && allAliases(p, m, data) && len(keepingClasses(p, callee, data)) == len(p.Proj.ClassesOf(p.File, callee)) {
				// An object holding the inputs themselves (a tensor, a
				// slice, a view of one), whose constructor computes nothing
				// from them, aliases them as a tuple of views does:
				// refreshing them in place refreshes it (every class the
				// name may denote).
				return false, false
			}
			return false, splat || len(data) > 0
		}
	}
	return false, false
}

// keepingClasses are the classes callee may denote whose constructors keep
// the data arguments data without computing from them (keepsArgs).
func keepingClasses(p *Pass, callee *Node, data []dataArg) []*Class {
	var out []*Class
	for _, c := range p.Proj.ClassesOf(p.File, callee) {
		if keepsArgs(p, c, data) {
			out = append(out, c)
		}
	}
	return out
}

// keptByAnother: n builds an object through a name that denotes several
// classes (definitions under an import-time condition), some of whose
// constructors keep their data arguments while another computes from
// them; the assumption that names the one that keeps, else "".
func keptByAnother(p *Pass, m *model, n *Node) string {
	n = Unparen(n)
	if n == nil || n.Kind() != "call" {
		return ""
	}
	callee := Unparen(n.Get("function"))
	if callee == nil || !callee.Is("identifier", "attribute") || len(p.Proj.ClassesOf(p.File, callee)) < 2 {
		return ""
	}
	data, splat := dataArgs(p, m, n.Get("arguments"))
	if splat || len(data) == 0 || !allAliases(p, m, data) {
		return ""
	}
	keep := keepingClasses(p, callee, data)
	if len(keep) == 0 {
		return ""
	}
	c := keep[0]
	line, _ := c.File.Pos(int(c.Node.Start))
	return fmt.Sprintf("assumes `%s` is a class whose constructor computes from its arguments: %s (line %d), which the name may also be, keeps them (a definition chosen at import time)", short(callee.Text(p.Src())), c.File.Name+"."+c.Qual, line)
}

// fromNoInput: n makes a tensor from sizes and constants alone: a draw of
// a shape (shapeDraws), an allocator, or such a tensor scaled by a
// constant, cast, made contiguous, reshaped or filled in place with a draw
// (`(torch.randn(n, k) / 8).contiguous()`, `torch.empty(n).uniform_(-1, 1)`).
func fromNoInput(p *Pass, m *model, n *Node, depth int) bool {
	n = Unparen(n)
	if n == nil || depth > 16 {
		return false
	}
	switch n.Kind() {
	case "integer", "float", "true", "false", "none", "string":
		return true
	case "unary_operator":
		return fromNoInput(p, m, n.Get("argument"), depth+1)
	case "binary_operator":
		l, r := n.Get("left"), n.Get("right")
		return fromNoInput(p, m, l, depth+1) && (fromNoInput(p, m, r, depth+1) || m.Kind(r) == KMeta) ||
			fromNoInput(p, m, r, depth+1) && m.Kind(l) == KMeta
	case "call":
		q := p.File.Qualify(n.Get("function"))
		if shapeDraws[q] || allocators[q] && !rawAllocators[q] {
			return true
		}
		recv, name, _ := methodCall(n, p.Src())
		if recv == nil || !fromNoInput(p, m, recv, depth+1) {
			return false
		}
		switch name {
		case "contiguous", "to", "float", "half", "bfloat16", "double", "int", "long", "clone", "detach",
			"requires_grad_", "view", "reshape", "t", "transpose", "permute", "mul", "div", "add", "sub",
			"mul_", "div_", "add_", "sub_", "abs", "normal_", "uniform_", "fill_", "zero_":
		default:
			return false
		}
		if args := n.Get("arguments"); args != nil {
			for _, a := range args.NamedChildren() {
				if a.Kind() == "keyword_argument" {
					a = a.Get("value")
				}
				if !fromNoInput(p, m, a, depth+1) && m.Kind(a) != KMeta && !isDtype(p.File, a) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// shapeDraws draw random numbers into a tensor of a given shape (or of
// another tensor's shape): like an allocator, they take sizes, not data,
// so a draw made before the region is built from no input (a test's
// operand, a fixed weight), not derived from the static inputs. Draws
// that take tensors (torch.normal(mean, std), bernoulli, multinomial)
// are derivations.
var shapeDraws = map[string]bool{
	"torch.rand": true, "torch.randn": true, "torch.randint": true, "torch.randperm": true,
	"torch.rand_like": true, "torch.randn_like": true, "torch.randint_like": true,
}

// isModuleClass: a class with a base named like torch's nn.Module. Making a
// module (its parameters) before capture is set-up, not a derivation.
func isModuleClass(f *File, c *Class) bool {
	for _, b := range c.Bases {
		if strings.HasSuffix(b.Text(c.File.Src), "Module") {
			return true
		}
	}
	return false
}

// hasDataArg: an object built from an argument that may be a tensor (the
// value model says a tensor, or does not know): a metadata object over the
// inputs. One built only from sizes, flags and other constants (a wrapper
// that allocates its own buffers, `Attn(max_tokens, max_bs, use_graph=True)`)
// derives nothing from the inputs.
func hasDataArg(p *Pass, m *model, args *Node) bool {
	data, splat := dataArgs(p, m, args)
	return splat || len(data) > 0
}

// allAliases: every data argument reads the memory of a tensor it names
// (aliasArg), none computes a new one.
func allAliases(p *Pass, m *model, data []dataArg) bool {
	for _, d := range data {
		if !aliasArg(p, m, d.value, 0) {
			return false
		}
	}
	return true
}

// keepsArgs: constructing cls with these arguments computes nothing from
// them: its __init__ (and __post_init__) are the project's and call no
// tensor method on the parameters the arguments bind (computesFrom), or it
// has none and no base outside the project (a dataclass, a plain record).
func keepsArgs(p *Pass, cls *Class, data []dataArg) bool {
	h := p.Proj.G.H
	init := h.Lookup(cls, "__init__")
	if init == nil && len(h.External(cls)) > 0 {
		return false // an outside base's constructor: unseen
	}
	if init != nil {
		for _, d := range data {
			param := d.keyword
			if d.pos >= 0 && d.pos+1 < len(init.Params) {
				param = init.Params[d.pos+1].Name
			}
			if param == "" || derivesFrom(init, param) {
				return false // a positional argument past the parameters (*args) is unseen
			}
		}
	}
	// A dataclass's fields are its arguments; __post_init__ reads them
	// through self.
	if post := h.Lookup(cls, "__post_init__"); post != nil && len(post.Params) > 0 && derivesFrom(post, post.Params[0].Name) {
		return false
	}
	return true
}

// derivesFrom: fn calls a tensor method that computes new data (not a
// view, a layout view of the contiguous inputs, or metadata) on its
// parameter name or on an attribute of it (`seq_lens.max()`,
// `self.scale.float()`), or a torch function that computes from it
// (torchCallOn).
func derivesFrom(fn *Function, name string) bool {
	return methodCallOn(fn, name, true, func(meth string) bool {
		return !viewMethods[meth] && !layoutViews[meth] && !metaMethods[meth] &&
			(tensorOnlyMethods[meth] || derivingMethods[meth] || hostReads[meth])
	}) || torchCallOn(fn, name, true)
}

// torchCallOn: fn's body passes its parameter name to a torch function
// that computes a new tensor from its operands (torchOp; not an
// allocator, a `*_like` factory or a draw of a shape): `torch.cumsum(lens,
// 0)`, `torch.clamp(x, max=m)`. So does it through the attribute of self
// that it bound to the parameter (`self.lens = lens; torch.cumsum(self.lens,
// -1, out=buf)`), or with attrs through any attribute of name
// (`torch.sum(self.scale)` for a __post_init__'s self). A constructor that
// computes so is no record of its arguments (CG202's keepsArgs): a
// derivation read as one missed a metadata object whose constructor takes
// the cumulative lengths with torch.cumsum (2026-12-04).
func torchCallOn(fn *Function, name string, attrs bool) bool {
	src := fn.File.Src
	body := fn.BodyStmts()
	// The attributes of self the body binds to the parameter itself.
	held := map[string]bool{}
	self := ""
	if fn.Class != nil && len(fn.Params) > 0 && fn.Params[0].Name != name {
		self = fn.Params[0].Name
	}
	if self != "" {
		walkCode(body, func(x *Node) bool {
			if x.Kind() == "assignment" {
				l, r := Unparen(x.Get("left")), Unparen(x.Get("right"))
				if l != nil && r != nil && l.Kind() == "attribute" && r.Kind() == "identifier" && r.Text(src) == name {
					if o := Unparen(l.Get("object")); o != nil && o.Kind() == "identifier" && o.Text(src) == self {
						held[l.Get("attribute").Text(src)] = true
					}
				}
			}
			return true
		})
	}
	reads := func(a *Node) bool {
		a = Unparen(a)
		if a == nil {
			return false
		}
		if a.Kind() == "keyword_argument" {
			if k := a.Get("name"); k != nil && k.Text(src) == "out" {
				return false // where it writes, not what it reads
			}
			a = Unparen(a.Get("value"))
		}
		if a == nil {
			return false
		}
		if a.Kind() == "identifier" {
			return a.Text(src) == name
		}
		if a.Kind() == "attribute" {
			o := Unparen(a.Get("object"))
			if o == nil || o.Kind() != "identifier" {
				return false
			}
			if attrs && o.Text(src) == name {
				return true
			}
			return self != "" && o.Text(src) == self && held[a.Get("attribute").Text(src)]
		}
		return false
	}
	found := false
	walkCode(body, func(x *Node) bool {
		if found || x.Kind() != "call" {
			return !found
		}
		q := fn.File.Qualify(x.Get("function"))
		if !torchOp(q) || allocators[q] || likeFactories[q] || shapeDraws[q] {
			return true
		}
		if args := x.Get("arguments"); args != nil {
			for _, a := range args.NamedChildren() {
				if reads(a) {
					found = true
					return false
				}
			}
		}
		return true
	})
	return found
}

// aliasArg: expression a is a tensor's own memory, not a value computed
// from it: a name whose binding is not itself a derivation, an attribute,
// a basic-indexing slice of one, or a view method of one
// (`in_q.view(torch.int8)`, `buf[:n]`, `x.narrow(0, 0, n)`).
func aliasArg(p *Pass, m *model, a *Node, depth int) bool {
	a = Unparen(a)
	if a == nil || depth > 8 {
		return false
	}
	switch a.Kind() {
	case "identifier":
		// The tensor the name is bound to: a parameter, a buffer, an alias;
		// not a name bound to a derivation (`x32 = x.to(torch.int32)`).
		if b := m.BindingOf(a.Text(p.Src()), a); b != nil && !b.IsParam && b.Value != nil {
			if _, derived := derivation(p, m, b.Value); derived {
				return false
			}
		}
		return true
	case "attribute":
		return true
	case "subscript":
		kids := a.NamedChildren()
		if len(kids) < 2 {
			return false // a subscript the parser recovered from an error
		}
		for _, i := range kids[1:] {
			if i.Kind() != "slice" && m.Kind(i) != KMeta {
				return false // advanced indexing by a tensor: a gather, a copy
			}
		}
		return aliasArg(p, m, a.Get("value"), depth+1)
	case "call":
		recv, name, _ := methodCall(a, p.Src())
		return recv != nil && viewMethods[name] && aliasArg(p, m, recv, depth+1)
	}
	return false
}

// dataArg is an argument that may be tensor data: its value, and the
// parameter it binds (its keyword, or its position among the positional
// arguments, -1 for a keyword).
type dataArg struct {
	value   *Node
	keyword string
	pos     int
}

// dataArgs are the arguments hasDataArg counts as possible tensor data
// (options such as `dtype=` and values the model knows to be metadata or
// host data left out), and whether a splat hides what is passed.
func dataArgs(p *Pass, m *model, args *Node) (out []dataArg, splat bool) {
	if args == nil {
		return nil, false
	}
	src := p.Src()
	pos := 0
	for _, a := range args.NamedChildren() {
		d := dataArg{value: a, pos: -1}
		switch a.Kind() {
		case "comment":
			continue
		case "keyword_argument":
			d.keyword = a.Get("name").Text(src)
			switch d.keyword {
			case "dtype", "device", "layout", "requires_grad", "pin_memory", "memory_format":
				continue
			}
			d.value = a.Get("value")
		case "list_splat", "dictionary_splat":
			return out, true
		default:
			d.pos = pos
			pos++
		}
		if !hasTensorOperand(p, d.value) {
			continue
		}
		switch m.Kind(d.value) {
		case KMeta, KHostData:
			continue
		}
		out = append(out, d)
	}
	return out, false
}

// hasTensorOperand: n reads a value of the program (a name, an attribute),
// so what it computes may be derived from the inputs. Options that only
// say how to build the result (`dtype=torch.float32`, `device="cuda"`) and
// torch's own constants (`torch.float32`, `torch.int64`) are not operands:
// `torch.linspace(-1, 1, 192, dtype=torch.float32, device="cuda")` is a
// constant of the program, the same on every replay.
func hasTensorOperand(p *Pass, n *Node) bool {
	found := false
	src := p.Src()
	Walk(n, func(x *Node) bool {
		if found {
			return false
		}
		if x.Kind() == "keyword_argument" {
			switch x.Get("name").Text(src) {
			case "dtype", "device", "layout", "requires_grad", "pin_memory", "memory_format":
				return false
			}
		}
		if x.Kind() == "identifier" || x.Kind() == "attribute" {
			if q := p.File.Qualify(x); strings.HasPrefix(q, "torch.") && torchConstant(q) {
				return false
			}
			found = true
			return false
		}
		return true
	})
	return found
}

// torchConstant: a dtype or other constant of torch's namespace
// (`torch.float32`, `torch.bfloat16`, `torch.strided`), not a function or
// module.
func torchConstant(q string) bool {
	last := q[strings.LastIndexByte(q, '.')+1:]
	switch last {
	case "strided", "sparse_coo", "contiguous_format", "channels_last", "preserve_format", "inf", "nan", "pi", "e":
		return true
	}
	for _, t := range []string{"float", "bfloat", "int", "uint", "bool", "complex", "half", "double", "long", "short", "cfloat", "cdouble", "chalf"} {
		if strings.HasPrefix(last, t) && strings.Trim(last[len(t):], "0123456789_efmnuz") == "" {
			return true
		}
	}
	return false
}

func runDerived(p *Pass) {
	r := p.Region
	if r == nil || r.Ctx != Captured {
		return
	}
	src := p.Src()
	m := newModel(p)
	pre := precedingStmts(p.Fn, r.Node) // stops before the anchor (the with, or the capture_begin statement)
	stmts := append([]*Node{}, r.Stmts...)
	// Closures the region calls read the function's locals too.
	for _, g := range p.A.RegionCallees(r) {
		if g.Outer == p.Fn {
			stmts = append(stmts, bodyStmts(g)...)
		}
	}
	readsOutside := regionReadsBeforeRebind(r.Stmts, stmts, src)
	assigns := assignmentsIn(pre, src)
	last := map[string]assignment{}
	for _, a := range assigns {
		last[a.Name] = a
	}
	for _, a := range assigns {
		if last[a.Name].Stmt != a.Stmt || !readsOutside[a.Name] {
			continue
		}
		if !rebinds(r.Node, a.Name, src) && (writtenAfter(p.Fn, a.Name, r, src) != "" || keptBeside(p.Fn, a, r, src)) {
			// Written after the region, or kept beside the graph (stored,
			// returned, passed on): a static input of the graph, which the
			// code refreshes before each replay, not a derived value.
			continue
		}
		if m.Kind(a.Value) == KMeta {
			// A constant or tensor metadata (a shape, a dtype, a scale
			// computed from sizes): fixed for the graph's inputs, the same
			// on every replay.
			continue
		}
		pure, ok := derivation(p, m, a.Value)
		msg := fmt.Sprintf("`%s` is derived from the inputs before the capture region and read inside it: replays never recompute it", a.Name)
		if !ok {
			// A constant (or a buffer) built before the region from no
			// input: the same on every replay, but the graph reads its
			// memory, which is Python's to free. Measured on an H200
			// (probe cg202_const_local_pos): a local that dies when the
			// capturing function returns is reused and every replay reads
			// garbage; kept alive (stored, returned, or replayed from the
			// same function) it replays clean (cg202_const_kept_neg).
			if !builtBeforeCapture(p, m, a.Value) || keptAlive(p.Fn, a, r, src) {
				continue
			}
			pure = true
			msg = fmt.Sprintf("`%s` is built before the capture region and read inside it, but nothing keeps it alive once this function returns: the graph keeps reading its memory after Python frees it", a.Name)
		}
		assumed := ""
		if ok && graphLocal(p.Fn, r, src) {
			settled, handed := sourcesSettled(p, m, a.Value, r, readsOutside, stmts)
			if settled {
				// The graph lives and replays only in this function, and
				// nothing the derivation reads changes after the capture
				// (no write after the region, none by the graph): every
				// replay sees the inputs it was derived from.
				continue
			}
			// Where no write is proved but a source is handed to code
			// that may write into it, that a replay sees other inputs
			// rests on that code writing: an assumption ("" where a
			// write is proved).
			assumed = handed
		}
		// An object of a project class built from arguments none of which
		// the value model proves a tensor (a process group, a config, a
		// handle it cannot tell apart from one): that it derives data from
		// the inputs is an assumption, not a proof. A runner or workspace
		// built from such arguments holds its own state.
		if ok && assumed == "" {
			assumed = keptByAnother(p, m, a.Value)
		}
		if args, cls := projectObjectArgs(p, a.Value); args != nil && ok && assumed == "" {
			if unknown := unprovedDataArgs(p, m, args, cls); unknown != "" {
				assumed = fmt.Sprintf("assumes `%s` derives tensor data from `%s`, which the value model cannot tell from a size, a handle or a config (then the object is set-up, the same on every replay)", short(a.Value.Text(src)), unknown)
			}
		}
		var fix *Fix
		switch effects := sideEffects(p, a.Value); {
		case effects != "":
			// Moving or recomputing it in the graph would draw or act again
			// on every replay (or twice, in a recompute): no fix.
			msg += "; " + effects + ", so capguard offers no fix: compute it inside the region by hand if that is what the step means"
		default:
			fix = moveIntoRegion(p, a, r, pure)
		}
		if assumed != "" {
			p.ReportAssuming(a.Stmt, msg, fix, assumed)
			continue
		}
		p.Report(a.Stmt, msg, fix)
	}
}

// projectObjectArgs are the arguments of n when it builds an object of a
// project class that is not a module (derivation's object case), else nil.
func projectObjectArgs(p *Pass, n *Node) (*Node, *Class) {
	n = Unparen(n)
	if n == nil || n.Kind() != "call" {
		return nil, nil
	}
	callee := Unparen(n.Get("function"))
	if callee == nil || !callee.Is("identifier", "attribute") {
		return nil, nil
	}
	if cls := p.Proj.ClassOf(p.File, callee); cls != nil && !isModuleClass(p.File, cls) {
		return n.Get("arguments"), cls
	}
	return nil, nil
}

// unprovedDataArgs is the first argument hasDataArg counts as possible
// tensor data when none is proved to be data, else "". An argument is
// proved data when the value model says it is a tensor (KTensor), or when
// the class's __init__ computes from the parameter it binds with a tensor
// method (`self.max_len = seq_lens.max()`).
func unprovedDataArgs(p *Pass, m *model, args *Node, cls *Class) string {
	data, splat := dataArgs(p, m, args)
	if splat {
		return "" // what a splat holds is not known either way: keep the error as before
	}
	init := cls.Methods["__init__"]
	for _, d := range data {
		if m.Kind(d.value) == KTensor {
			return ""
		}
		param := d.keyword
		if d.pos >= 0 && init != nil && d.pos+1 < len(init.Params) {
			param = init.Params[d.pos+1].Name
		}
		if init != nil && param != "" && computesFrom(init, param) {
			return ""
		}
	}
	if len(data) == 0 {
		return ""
	}
	return short(data[0].value.Text(p.Src()))
}

// computesFrom: fn calls a tensor method on its parameter name
// (`seq_lens.max()`, `x.cumsum(0)`), or a torch function that computes
// from it (torchCallOn: `torch.cumsum(lens, 0)`).
func computesFrom(fn *Function, name string) bool {
	return methodCallOn(fn, name, false, func(meth string) bool {
		return tensorOnlyMethods[meth] || derivingMethods[meth] || hostReads[meth]
	}) || torchCallOn(fn, name, false)
}

// methodCallOn: fn's body calls a method that counts on name (or, with
// attrs, on an attribute of name: `self.scale.float()`).
func methodCallOn(fn *Function, name string, attrs bool, counts func(meth string) bool) bool {
	src := fn.File.Src
	found := false
	walkCode(fn.BodyStmts(), func(x *Node) bool {
		if found {
			return false
		}
		if x.Kind() == "call" {
			recv, meth, _ := methodCall(x, src)
			root := Unparen(recv)
			if attrs {
				root = attrRoot(root)
			}
			if root != nil && root.Kind() == "identifier" && root.Text(src) == name && counts(meth) {
				found = true
			}
		}
		return true
	})
	return found
}

// regionReadsBeforeRebind are the names the region reads while they still
// hold the value bound before it: read before any rebinding inside the
// region (an assignment, a tuple unpacking, a for target, a with ... as,
// a walrus). own are the region's statements, whose order is known; all
// adds the closures it calls, whose reads count wherever the name is not
// rebound in the region first.
func regionReadsBeforeRebind(own, all []*Node, src []byte) map[string]bool {
	rebound := map[string]int{} // name -> offset of its first rebinding in the region
	var targets func(t *Node, at int)
	targets = func(t *Node, at int) {
		Walk(t, func(x *Node) bool {
			if x.Kind() == "identifier" {
				if _, ok := rebound[x.Text(src)]; !ok {
					rebound[x.Text(src)] = at
				}
				return false
			}
			// Only the names of a pattern bind; `a.b = ...` and `a[i] = ...` read a.
			return x.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "list_splat_pattern", "parenthesized_expression", "list_splat", "as_pattern_target")
		})
	}
	isTarget := map[*Node]bool{}
	for _, s := range own {
		walkCode([]*Node{s}, func(n *Node) bool {
			var t *Node
			switch n.Kind() {
			case "assignment":
				t = n.Get("left")
			case "for_statement", "for_in_clause":
				t = n.Get("left")
			case "as_pattern":
				for _, a := range n.All("alias") {
					targets(a, int(n.End))
					markTargets(a, isTarget)
				}
			case "named_expression":
				t = n.Get("name")
			}
			if t != nil {
				at := n.End // the value is read before the target binds
				if n.Kind() == "for_statement" || n.Kind() == "for_in_clause" {
					if r := n.Get("right"); r != nil {
						at = r.End
					}
				}
				targets(t, int(at))
				markTargets(t, isTarget)
			}
			return true
		})
	}
	out := map[string]bool{}
	for _, s := range all {
		Walk(s, func(n *Node) bool {
			if n.Kind() != "identifier" || isTarget[n] || !syntax.NameRef(n) {
				return true
			}
			name := n.Text(src)
			if at, ok := rebound[name]; ok && (int(n.Start) >= at || !inAny(own, n)) {
				return true
			}
			out[name] = true
			return true
		})
	}
	return out
}

// sideEffects says why evaluating n again (in the graph, or a second time)
// would change what the program does: a random draw, an in-place update, a
// host read, an allocation from host data; "" when it is a pure function
// of its operands.
func sideEffects(p *Pass, n *Node) string {
	src := p.Src()
	why := ""
	Walk(n, func(x *Node) bool {
		if why != "" || x.Kind() == "lambda" {
			return false
		}
		if x.Kind() != "call" {
			return true
		}
		q := p.File.Qualify(x.Get("function"))
		_, name, _ := methodCall(x, src)
		switch {
		case randomFactories[q] || strings.HasPrefix(name, "rand") || name == "normal_" || name == "uniform_" ||
			name == "bernoulli_" || name == "exponential_" || name == "multinomial" || name == "bernoulli":
			why = "it draws random numbers (`" + short(x.Text(src)) + "`)"
		case strings.HasSuffix(name, "_") && !strings.HasSuffix(name, "__"):
			why = "it updates a tensor in place (`" + short(x.Text(src)) + "`)"
		case hostReads[name]:
			why = "it reads the device on the host (`" + short(x.Text(src)) + "`)"
		case hostBuilders[q]:
			why = "it copies host data (`" + short(x.Text(src)) + "`)"
		}
		return why == ""
	})
	return why
}

// moveIntoRegion moves (or, when code before the region uses it, copies)
// the statement to the top of the capture region.
func moveIntoRegion(p *Pass, a assignment, r *Region, pure bool) *Fix {
	src := p.Src()
	stmt := a.Stmt
	anchor := r.Node
	if stmt.Parent() != anchor.Parent() || stmt.Kind() != "expression_statement" {
		return nil
	}
	start := lineStartOf(src, int(stmt.Start))
	end := lineEndOf(src, int(stmt.End))
	if strings.TrimSpace(string(src[start:stmt.Start])) != "" || strings.TrimSpace(strings.TrimRight(string(src[stmt.End:end]), "\r\n")) != "" &&
		!strings.HasPrefix(strings.TrimSpace(string(src[stmt.End:end])), "#") {
		return nil // shares its line with other code
	}
	var insertAt int
	var indent string
	if r.IsWith() {
		first := r.Stmts
		if len(first) == 0 {
			return nil
		}
		insertAt = lineStartOf(src, int(first[0].Start))
		indent = lineIndent(src, int(first[0].Start))
	} else {
		insertAt = lineEndOf(src, int(anchor.End))
		indent = lineIndent(src, int(anchor.Start))
	}
	used := false
	for _, s := range anchor.Parent().NamedChildren() {
		if s.Start <= stmt.Start || s.Start >= anchor.Start {
			continue
		}
		Walk(s, func(n *Node) bool {
			if n.Kind() == "identifier" && n.Text(src) == a.Name {
				used = true
			}
			return !used
		})
	}
	// A moved statement takes its trailing comment along; a recomputed copy
	// does not (the comment, a suppression perhaps, stays with the original).
	copyEnd := end
	if used {
		copyEnd = int(stmt.End)
	}
	text := reindent(string(src[start:copyEnd]), lineIndent(src, int(stmt.Start)), indent)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	edits := []TextEdit{{Start: insertAt, End: insertAt, NewText: text}}
	msg := "move the derivation into the capture region, so replays recompute it from the static inputs"
	if used {
		msg = "recompute the derivation at the top of the capture region (the code before it still uses the eager value)"
	} else {
		edits = append([]TextEdit{{Start: start, End: end}}, edits...)
	}
	if !pure && used {
		return nil // a recompute would run project code twice
	}
	app := Safe
	if !pure {
		app = Unsafe
		msg += "; unsafe: the derivation calls project code that may have side effects"
	}
	return &Fix{Message: msg, Applicability: app, Edits: edits}
}

// reindent replaces the leading indent `from` of each line by `to`.
func reindent(text, from, to string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, from) {
			lines[i] = to + l[len(from):]
		}
	}
	return strings.Join(lines, "")
}

// builtBeforeCapture: a torch factory call that reads no input (a
// constant like `torch.linspace(-1, 1, n, dtype=..., device=...)`) or
// allocates (`torch.zeros(...)`, `torch.empty_like(x)`).
func builtBeforeCapture(p *Pass, m *model, n *Node) bool {
	n = Unparen(n)
	if n != nil && fromNoInput(p, m, n, 0) {
		// A draw or a buffer scaled or cast: on the device where the call
		// that makes it is.
		dev := false
		Walk(n, func(x *Node) bool {
			if x.Kind() == "call" {
				if q := p.File.Qualify(x.Get("function")); shapeDraws[q] || allocators[q] {
					dev = dev || onDevice(p, x)
				}
			}
			return !dev
		})
		return dev
	}
	if n == nil || n.Kind() != "call" {
		return false
	}
	q := p.File.Qualify(n.Get("function"))
	if !onDevice(p, n) {
		return false // host memory: what a captured copy reads of it is CG103's
	}
	if allocators[q] && !randomFactories[q] || likeFactories[q] {
		return true
	}
	return torchOp(q) && !hasTensorOperand(p, n.Get("arguments"))
}

// torchOp: a torch function that computes a device tensor from its
// arguments, neither a CUDA runtime call (torch.cuda.*, torch.device), a
// build from host data (torch.tensor) nor a random draw.
func torchOp(q string) bool {
	return strings.HasPrefix(q, "torch.") && !objectBuilder(q) && q != "torch.device" &&
		!hostBuilders[q] && !randomFactories[q]
}

// keptAlive: the function keeps the local a binds past its own return, or
// replays while it lives: it stores it (an attribute, an item, a
// container method), returns or yields it, passes it to a call after the
// region, or calls .replay() after the region.
func keptAlive(fn *Function, a assignment, r *Region, src []byte) bool {
	return kept(fn, a, r, src, true)
}

// keptBeside: the function keeps the local beside the graph (stores it,
// returns it, passes it on after the region), as it keeps a static input.
func keptBeside(fn *Function, a assignment, r *Region, src []byte) bool {
	return kept(fn, a, r, src, false)
}

func kept(fn *Function, a assignment, r *Region, src []byte, replays bool) bool {
	// A local that holds it (`inputs = {"ids": ids}`, `state = (ids, pos)`)
	// keeps it where that local is kept: follow such names, a few deep.
	// What comes before the binding uses the name's earlier value
	// (`self.graphs[bs] = {"lens": lens}` then `lens = Lens(lens)`): it
	// keeps that value, not this one, unless a loop runs it again after
	// the binding.
	from := 0
	if a.Stmt != nil {
		from = int(a.Stmt.Start)
		if loop := enclosingLoop(a.Stmt); loop != nil {
			from = int(loop.Start)
		}
	}
	names := []string{a.Name}
	seen := map[string]bool{a.Name: true}
	for i := 0; i < len(names) && i < 8; i++ {
		if keptName(fn, names[i], from, r, src, replays, func(holder string) {
			if !seen[holder] {
				seen[holder] = true
				names = append(names, holder)
			}
		}) {
			return true
		}
	}
	return false
}

// closureReplays: name is a function defined in fn's body whose own code
// calls `.replay()` (a replay helper the test or benchmark calls).
func closureReplays(fn *Function, name string, src []byte) bool {
	found := false
	for _, st := range bodyStmts(fn) {
		d := st
		if d.Kind() == "decorated_definition" {
			d = d.Get("definition")
		}
		if d == nil || d.Kind() != "function_definition" || d.Get("name") == nil || d.Get("name").Text(src) != name {
			continue
		}
		Walk(d.Get("body"), func(x *Node) bool {
			if x.Kind() == "attribute" && x.Get("attribute").Text(src) == "replay" {
				found = true
			}
			return !found
		})
	}
	return found
}

// keptName: the function keeps the local name (see keptAlive) after
// offset from; holder is told each plain local assigned an expression that
// mentions it.
func keptName(fn *Function, name string, from int, r *Region, src []byte, replays bool, holder func(string)) bool {
	kept := false
	walkCode(bodyStmts(fn), func(n *Node) bool {
		if kept || n.Start >= r.Node.Start && n.End <= r.Node.End && n != r.Node {
			// What the region computes from it is the graph's, not it.
			return false
		}
		if int(n.End) <= from {
			return false // before the binding (from): an earlier value's use
		}
		switch n.Kind() {
		case "attribute":
			// `run = g.replay` (a bound method kept to call later): a replay
			// in this function as much as `g.replay()` is.
			if replays && n.Start >= r.Node.End && n.Get("attribute").Text(src) == "replay" && (n.Parent() == nil || n.Parent().Kind() != "call" || n.Parent().Get("function") != n) {
				kept = true
			}
		case "assignment":
			if l := n.Get("left"); l != nil && mentions(n.Get("right"), name, src) {
				if l.Kind() != "identifier" {
					kept = true
				} else if l.Text(src) != name && holds(n.Get("right"), name, src) {
					holder(l.Text(src))
				}
			}
		case "return_statement", "yield":
			if mentions(n, name, src) {
				kept = true
			}
		case "call":
			fnode := Unparen(n.Get("function"))
			if replays && n.Start >= r.Node.End && fnode != nil && fnode.Kind() == "identifier" && closureReplays(fn, fnode.Text(src), src) {
				// `def replay(): g.replay()` called here: a replay while
				// this function's locals live.
				kept = true
			}
			if fnode != nil && fnode.Kind() == "attribute" {
				switch fnode.Get("attribute").Text(src) {
				case "replay":
					if replays && n.Start >= r.Node.End {
						kept = true
					}
				case "append", "extend", "add", "insert", "update", "setdefault", "register_buffer":
					if mentions(n.Get("arguments"), name, src) {
						kept = true
					}
				}
			}
			if !kept && n.Start >= r.Node.End && mentions(n.Get("arguments"), name, src) {
				kept = true
			}
		}
		return !kept
	})
	return kept
}

// holds: e is the name itself, or a container display (dict, list, tuple,
// set, `dict(k=v)`) that holds it as an element, a value or inside such an
// element: what e evaluates to keeps the name's object alive (an
// expression computed from it, `x.float()`, does not).
func holds(e *Node, name string, src []byte) bool {
	e = Unparen(e)
	if e == nil {
		return false
	}
	switch e.Kind() {
	case "identifier":
		return e.Text(src) == name
	case "dictionary", "list", "tuple", "set", "expression_list":
		for _, c := range e.NamedChildren() {
			if c.Kind() == "pair" {
				c = c.Get("value")
			}
			if holds(c, name, src) {
				return true
			}
		}
	case "call":
		if f := Unparen(e.Get("function")); f != nil && f.Kind() == "identifier" && (f.Text(src) == "dict" || f.Text(src) == "tuple" || f.Text(src) == "list") {
			if args := e.Get("arguments"); args != nil {
				for _, c := range args.NamedChildren() {
					if c.Kind() == "keyword_argument" {
						c = c.Get("value")
					}
					if holds(c, name, src) {
						return true
					}
				}
			}
		}
	}
	return false
}

// onDevice: a factory call given a device that is not the CPU
// (`device="cuda"`, `device=x.device`), or a *_like of another tensor.
func onDevice(p *Pass, call *Node) bool {
	src := p.Src()
	if likeFactories[p.File.Qualify(call.Get("function"))] {
		return true
	}
	args := call.Get("arguments")
	if args == nil {
		return false
	}
	for _, a := range args.NamedChildren() {
		if a.Kind() == "keyword_argument" && a.Get("name").Text(src) == "device" {
			v := strings.Trim(a.Get("value").Text(src), `"'`)
			return v != "cpu" && !strings.HasPrefix(v, "torch.device(\"cpu") && !strings.HasPrefix(v, "torch.device('cpu")
		}
	}
	return false
}

// sourcesSettled: every name the derivation v reads keeps its value from
// the capture on: the function writes into it nowhere after the region,
// hands it after the region to no code that may write into it
// (handedOnAfter), and the graph, where it reads it, writes into it in none
// of the region's statements (stmts: with the closures it calls). A write
// after the region, or one in the graph (WrittenIn), proves the name
// changes, as does a project function the name is handed to after the
// region that writes into it (WrittenFrom). Where nothing proves it but
// the name is handed on after the region, or handed in the graph to code
// that may write into it (handedIn), handed says that assumption; else
// handed is "".
func sourcesSettled(p *Pass, m *model, v *Node, r *Region, readsInRegion map[string]bool, stmts []*Node) (settled bool, handed string) {
	fn, src := p.Fn, p.Src()
	tensor := func(x *Node) bool { return m.Kind(x) == KTensor }
	// seen: a call that hands the local to project code capguard followed
	// to its end and found writing nothing into it is no assumption.
	seen := func(call *Node, name string) bool { return seesNoWrite(p.Proj, p.File, fn, call, name) }
	ok := true
	Walk(v, func(x *Node) bool {
		if !ok {
			return false
		}
		if x.Is("lambda") {
			ok = false
			return false
		}
		if x.Kind() == "identifier" && syntax.NameRef(x) {
			name := x.Text(src)
			if !fn.Locals[name] && !fn.HasParam(name) {
				return true // a module's name (an import, a function): no data of this call
			}
			switch {
			case writtenAfter(fn, name, r, src) != "" || writtenFrom(p.Proj, p.File, fn, name, int(r.Node.End)) != "":
				ok = false
			case readsInRegion[name] && writtenIn(p.Proj, p.File, fn, stmts, name, true) != "":
				ok = false
			case handed != "":
			default:
				if readsInRegion[name] {
					if at := handedIn(fn, stmts, name, seen, src); at != nil {
						handed = fmt.Sprintf("assumes `%s` (line %d) in the graph writes into `%s`: the graph lives and replays only in this function, which writes into no input of `%s` after the capture, so only a write by the graph would make a replay read other inputs than those it was derived from", short(at.Text(src)), fn.File.Line(at), name, short(v.Text(src)))
						break
					}
				}
				if at := handedOnAfter(fn, name, r, tensor, seen, src); at != nil {
					handed = fmt.Sprintf("assumes `%s` (line %d) writes into `%s`: the graph lives and replays only in this function, which itself writes into no input of `%s` after the capture", short(at.Text(src)), fn.File.Line(at), name, short(v.Text(src)))
				}
			}
		}
		return ok
	})
	if !ok {
		return false, ""
	}
	return handed == "", handed
}

// handedOnAfter: after region r, fn gives local name to code that may write
// into it (mayWriteUse). It returns that call or binding, else nil.
func handedOnAfter(fn *Function, name string, r *Region, tensor func(*Node) bool, seen func(*Node, string) bool, src []byte) *Node {
	var found *Node
	Walk(fn.Body, func(x *Node) bool {
		if found != nil || x.End <= r.Node.End {
			return false // before the region's end: not after it
		}
		if x.Kind() == "identifier" && x.Start >= r.Node.End && x.Text(src) == name && syntax.NameRef(x) {
			found = mayWriteUse(fn, x, false, tensor, src)
			if found != nil && seen(found, name) {
				found = nil
			}
		}
		return found == nil
	})
	return found
}

// handedIn: statements stmts give local name to code that may write into
// it (mayWriteUse, with reads).
// It returns that call or binding, else nil.
func handedIn(fn *Function, stmts []*Node, name string, seen func(*Node, string) bool, src []byte) *Node {
	var found *Node
	walkCode(stmts, func(x *Node) bool {
		if found != nil {
			return false
		}
		if x.Kind() == "identifier" && x.Text(src) == name && syntax.NameRef(x) {
			found = mayWriteUse(fn, x, true, nil, src)
			if found != nil && seen(found, name) {
				found = nil
			}
		}
		return found == nil
	})
	return found
}

// mayWriteUse: identifier x is handed to code that may write into what it
// holds: an argument of a call other than a torch function or a builtin (a
// test's `refill(inputs)`), a method call on it, or the value of an
// assignment (an alias written through later). A method with a trailing
// underscore is a write the callers prove (WrittenAfter, WrittenIn), so a
// method call counts only where it may write unseen: not with reads (in
// the graph, a method without one reads), nor on what tensor says is a
// tensor (whose methods without one read). It returns that call or
// assignment, else nil.
func mayWriteUse(fn *Function, x *Node, reads bool, tensor func(*Node) bool, src []byte) *Node {
	p := Unparen(x.Parent())
	for p != nil && p.Kind() == "parenthesized_expression" {
		p = p.Parent()
	}
	switch {
	case p == nil:
	case p.Kind() == "argument_list" || p.Kind() == "keyword_argument":
		call := p.Parent()
		if p.Kind() == "keyword_argument" && call != nil {
			call = call.Parent()
		}
		if call != nil && call.Kind() == "call" {
			q := fn.File.Qualify(call.Get("function"))
			if !strings.HasPrefix(q, "torch.") && !pureBuiltins[q] {
				return call
			}
		}
	case p.Kind() == "attribute" && p.Get("object") == x:
		if pp := p.Parent(); pp != nil && pp.Kind() == "call" && pp.Get("function") == p {
			if reads || tensor != nil && tensor(x) && !strings.HasSuffix(p.Get("attribute").Text(src), "_") {
				return nil
			}
			return pp // x.method(...): may write into it
		}
	case p.Kind() == "assignment" && Unparen(p.Get("right")) == x:
		return p
	}
	return nil
}

// pureBuiltins read their arguments without writing into them.
var pureBuiltins = map[string]bool{"len": true, "print": true, "float": true, "int": true, "bool": true, "str": true, "repr": true,
	"isinstance": true, "type": true, "id": true, "min": true, "max": true, "sum": true, "abs": true, "all": true, "any": true}

// warmedMemo is a tensor that one-time set-up a warm-up ran derives from
// the step's inputs and keeps on an object the step gets (warmedMemos).
type warmedMemo struct {
	target, from string // `state.starts`, `state.lens`
}

// runWarmUps finds, in a function that captures a graph and keeps it, a
// warm-up call before the region (the same callee, with the arguments of a
// call in the region) whose callee (or what it reaches) runs one-time
// set-up that derives a tensor from the step's inputs and keeps it on the
// captured call's own objects (`if not hasattr(state, "starts"):
// state.starts = torch.cumsum(state.lens, 0)`): under capture the set-up is
// skipped, so the graph reads the tensor the warm-up derived from its own
// batch, and no replay recomputes it. Reported on the warm-up call, where a
// copy of the state (`step(copy.copy(state))`) fixes it.
func runWarmUps(p *Pass) {
	r := p.Region
	if r == nil || r.Ctx != Captured || graphLocal(p.Fn, r, p.Src()) {
		// A graph that lives and replays only in the function that
		// captures it (a tuning loop, a test) replays the inputs it was
		// warmed up with: what the warm-up derived is what a replay would.
		return
	}
	for _, w := range p.WarmUps() {
		// One finding a warm-up call (findings at one node are one):
		// every memo its set-up leaves, in the order found.
		var parts, froms []string
		seen := map[string]bool{}
		for _, fn := range w.SetUp {
			for _, mm := range warmedMemos(p.For(fn)) {
				if seen[mm.target] {
					continue
				}
				seen[mm.target] = true
				parts = append(parts, fmt.Sprintf("`%s` from `%s` (in %s)", mm.target, mm.from, fn.FullName()))
				if !slices.Contains(froms, "`"+mm.from+"`") {
					froms = append(froms, "`"+mm.from+"`")
				}
			}
		}
		if len(parts) == 0 {
			continue
		}
		msg := fmt.Sprintf("this warm-up call runs one-time set-up on the objects the capture uses, which derives %s and keeps it: under capture the set-up is skipped, so the graph reads what the warm-up derived from its own batch, and replays never recompute it (warm up on a copy of the state, or derive it on every call)", strings.Join(parts, " and "))
		p.ReportAssuming(w.Call, msg, nil, fmt.Sprintf("assumes %s changes between replays (an input the replay refreshes)", strings.Join(froms, " and ")))
	}
}

// warmedMemos are the tensors that the set-up a warm-up ran in the pass's
// function (Pass.WarmedSetUp) derives from its inputs and keeps on an
// object it gets, and that the function reads outside the set-up (so the
// captured step reads what the warm-up left). A stored tensor counts as
// derived when the set-up computes it from a tensor the function gets (a
// parameter other than the receiver, an attribute of one) by a torch
// operation, or writes it by a
// kernel launch or an `out=` operation that also reads such a tensor; a
// buffer the set-up only allocates (and the step fills on every call) is
// not.
func warmedMemos(p *Pass) []warmedMemo {
	set := p.WarmedSetUp()
	if len(set) == 0 || p.Fn == nil || p.Fn.Body == nil {
		return nil
	}
	var out []warmedMemo
	src := p.Src()
	m := newModel(p)
	inSetUp := func(n *Node) bool {
		for _, s := range set {
			if n.Start >= s.Start && n.End <= s.End {
				return true
			}
		}
		return false
	}
	// The step's arguments, not its receiver: a module's lazy state
	// (`self.w_t = self.weight.t()`) is derived from its weights, which no
	// replay refreshes; what the captured call passes is its input.
	params := map[string]bool{}
	for _, prm := range p.Fn.Params {
		if prm.Name != p.Fn.Self() {
			params[prm.Name] = true
		}
	}
	// input: a tensor the function gets from its caller (a parameter or an
	// attribute of one), not one the set-up makes.
	input := func(n *Node) bool {
		n = Unparen(n)
		root := attrRoot(n)
		return root != nil && root.Kind() == "identifier" && params[root.Text(src)] && m.Kind(n) != KMeta
	}
	// firstInput is the first input n reads (`state.lens` of
	// `state.lens.flip(0)`), or "".
	firstInput := func(n *Node) string {
		from := ""
		Walk(n, func(x *Node) bool {
			if from != "" {
				return false
			}
			if par := x.Parent(); par != nil && par.Kind() == "call" && par.Get("function") == x {
				return true // state.lens.flip of state.lens.flip(0): the method, not a tensor
			}
			if x.Is("identifier", "attribute") && input(x) {
				from = x.Text(src)
				return false
			}
			return true
		})
		return from
	}
	// localValue: the value a local of the set-up is bound to there.
	localValue := func(name string) *Node {
		var v *Node
		for _, s := range set {
			Walk(s, func(x *Node) bool {
				if x.Kind() == "assignment" {
					if l := Unparen(x.Get("left")); l != nil && l.Kind() == "identifier" && l.Text(src) == name {
						v = Unparen(x.Get("right"))
					}
				}
				return true
			})
		}
		return v
	}
	// source is the input a derivation of value reads, or "".
	source := func(value *Node) string {
		value = Unparen(value)
		if value == nil {
			return ""
		}
		if value.Kind() == "identifier" {
			bound := localValue(value.Text(src))
			if bound == nil {
				return ""
			}
			q := p.File.Qualify(bound.Get("function"))
			if bound.Kind() == "call" && (allocators[q] || likeFactories[q]) {
				// A buffer the set-up allocates: derived only if the
				// set-up also writes it from an input.
				name := value.Text(src)
				found := ""
				for _, s := range set {
					Walk(s, func(x *Node) bool {
						if found != "" || x.Kind() != "call" {
							return found == ""
						}
						_, isKernel := p.Proj.KernelName(p.File, x)
						args := x.Get("arguments")
						if args == nil {
							return true
						}
						writes := isKernel
						if o := keyword(args, "out", src); o != nil && Unparen(o).Text(src) == name {
							writes = true
						}
						if !writes {
							return true
						}
						hasBuf, from := false, ""
						for _, a := range args.NamedChildren() {
							if a.Kind() == "keyword_argument" {
								a = a.Get("value")
							}
							a = Unparen(a)
							if a == nil {
								continue
							}
							if a.Text(src) == name {
								hasBuf = true
							} else if from == "" {
								from = firstInput(a)
							}
						}
						if hasBuf && from != "" {
							found = from
						}
						return found == ""
					})
				}
				return found
			}
			value = bound
		}
		if _, ok := derivation(p, m, value); !ok {
			return ""
		}
		return firstInput(value)
	}
	reported := map[string]bool{}
	for _, s := range set {
		Walk(s, func(x *Node) bool {
			if x.Kind() != "assignment" {
				return true
			}
			l := Unparen(x.Get("left"))
			if l == nil || l.Kind() != "attribute" {
				return true
			}
			target := l.Text(src)
			root := attrRoot(l)
			if root == nil || root.Kind() != "identifier" || !params[root.Text(src)] {
				return true
			}
			from := source(x.Get("right"))
			if from == "" {
				return true
			}
			var read *Node
			Walk(p.Fn.Body, func(y *Node) bool {
				if read != nil || y != p.Fn.Body && y.Is("function_definition", "class_definition", "lambda") {
					return false
				}
				if y.Kind() == "attribute" && y.Text(src) == target && !inSetUp(y) {
					read = y
				}
				return read == nil
			})
			if read == nil || reported[target] {
				return true
			}
			reported[target] = true
			out = append(out, warmedMemo{target, from})
			return true
		})
	}
	return out
}
