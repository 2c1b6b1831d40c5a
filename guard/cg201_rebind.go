package guard

import (
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
)

var ruleRebindInsteadOfCopy = register(&Rule{
	ID: "CG201", Name: "rebind-instead-of-copy", Severity: SeverityError, Fix: "sometimes",
	Contexts: []Context{ReplayPrep, PostCapture, Captured},
	Summary:  "code that runs after capture binds a new tensor to state that captured code reads",
	Doc: `## What it does
In code that runs between replays (replay-prep: the statements before a ` + "`.replay()`" + ` and what they
call, configured ` + "`replay-prep`" + ` functions, framework presets, weight reloads), finds an assignment that
binds a NEW tensor (a conversion, a factory, ` + "`torch.cat`, `nn.Parameter(...)`" + `...) to an attribute that captured
code reads (` + "`meta.page_table = pt.to(torch.int32)`, `self.w = self.w.contiguous()`, `layer.weight.data = ...`" + `,
` + "`self.register_parameter(\"w\", ...)`" + `). The first binding of an object the function itself made
(` + "`state = State(); state.idx = torch.zeros(...)`" + `) is set-up, not a rebind: no graph can have captured it.
It also finds ` + "`buf.set_(x)`" + ` (swaps the storage: an error) and ` + "`buf.resize_(...)`" + ` (reallocates when the new
size is larger than the storage: a warning that says so) on such an attribute.

Not a finding: a ` + "`.data`" + ` rebound to a view of its own storage (` + "`w.data = w.data.view(...)`, `w.data = w.t()`" + `,
a reshape of itself), and a binding under a first-binding guard (` + "`if self.w is None:`, `if not hasattr(self, \"w\"):`" + `),
which binds once, before capture. In a post-capture hook (a weight reload), rebinding a registered
parameter or buffer (` + "`self.w = nn.Parameter(...)`, `register_buffer`" + `, ` + "`.data`" + ` of one) is a warning: a
framework's layerwise reload copies registered parameters and buffers back into the captured tensors,
which the warning names as its assumption; a plain tensor attribute rebuilt there is not covered by any
copy-back and stays an error.

In captured code, ` + "`self.h = torch.cat(...)`" + ` binds a tensor of the graph's memory to persistent state: when
code that replays a graph reads ` + "`.h`" + ` after the ` + "`.replay()`" + `, it reads what the last capture (or eager run)
bound, not the graph just replayed. An error where the captures run in a loop (one graph per batch
size), a warning that names the assumption otherwise; a capture region's own statement only in a loop.

## Why it matters
The graph captured the address of the tensor the attribute held at capture. Rebinding the attribute
changes what Python sees, not what the graph reads: the replay reads the old tensor (stale data), or,
when the old tensor was freed, memory that now belongs to someone else. Measured on an H200: a
replay-prep path rebinding ` + "`meta.x = x.to(torch.int32)`" + ` made replays fault (CUDA error 717) or read stale data.

## Example
` + "```python" + `
def init_forward_metadata_replay_cuda_graph(self, bs, req_pool_indices, seq_lens):
    self.page_table = self.req_to_page[req_pool_indices].to(torch.int32)   # CG201
` + "```" + `

## Fix
Copy into the tensor the graph captured: ` + "`self.page_table[: src.shape[0]].copy_(src)`" + ` (copy_ converts
the dtype). capguard offers this where the attribute is known to hold a preallocated buffer (it is
assigned an allocation or a view of one elsewhere in the project). The fix is safe only where capguard
proves the captured tensor has the new value's shape and dtype (both allocated once, with one shape, and
the conversion copies): then it copies the whole tensor. Otherwise the prefix copy keeps the captured
tensor's own shape and dtype, which Python code reading the attribute sees, and is unsafe. Where the same
function also makes the first binding (it runs at set-up too), and for other conversions, it offers an
unsafe fix that binds a persistent buffer under a stable key, correct only when the same code also ran
before capture; stored on an instance, that buffer is keyed per instance. For ` + "`.data`" + ` rebinding it offers
` + "`weight.data.copy_(new)`" + ` only where the new tensor is proved to have the parameter's shape, dtype and layout
(` + "`torch.zeros_like(weight)`" + ` and kin, ` + "`weight.clone()`" + `; safe), and no fix otherwise: a transpose, a view, a cast or
a repacking would raise in the copy or be undone by it. A guarded (re)allocation
(` + "`if self.buf is None or self.buf.shape[0] < n: self.buf = torch.zeros(...)`" + `), a fresh allocation, an
attribute bound to None elsewhere, or one whose old value another holder keeps gets no fix; the finding
says why.`,
	Run: runRebind,
})

func runRebind(p *Pass) {
	src := p.Src()
	read := p.a.capturedAttrs()
	m := newModel(p)
	if p.Ctx == Captured {
		runFreshState(p)
		return
	}
	p.Walk(func(n *Node) bool {
		if n.Kind == "call" {
			// module.register_parameter("w", nn.Parameter(...)) and
			// register_buffer("w", t) bind a new tensor to the attribute too.
			recv, name, args := methodCall(n, src)
			if name == "resize_" || name == "set_" {
				reallocation(p, n, recv, name, read)
				return true
			}
			if name != "register_parameter" && name != "register_buffer" {
				return true
			}
			pos := positional(args)
			if len(pos) < 2 || pos[0].Kind != "string" || Unparen(pos[1]).Kind == "none" {
				return true
			}
			attr := strings.Trim(pos[0].Text(src), "\"'")
			if read[attr] && !firstBinding(p, n, attr) {
				msg := fmt.Sprintf("`%s` binds a new tensor to `%s`, which captured code reads: the graph keeps reading the tensor it captured; copy the new values into it (`%s.data.copy_(...)`)", short(n.Text(src)), attr, attr)
				if p.Ctx == PostCapture {
					p.ReportAssuming(n, msg, nil, reloadAssumption)
				} else {
					p.Report(n, msg, nil)
				}
			}
			return false
		}
		if n.Kind != "assignment" {
			return true
		}
		left, right := n.Get("left"), Unparen(n.Get("right"))
		if left == nil || right == nil || left.Kind != "attribute" || right.Kind == "none" {
			return true
		}
		attr := left.Get("attribute").Text(src)
		obj := left.Get("object")
		isData := attr == "data" // param.data = ...: whatever the value, the parameter's storage changes
		if !isData && !isTensorFactory(p.File, right) {
			return true
		}
		if isData && viewOfItself(right, obj, src) {
			return true // p.data = p.data.view(...): the same storage, the same address
		}
		t := tempOf(p.File, right)
		selfRebind := t != nil && Unparen(t.Source).Text(src) == left.Text(src)
		if !read[attr] && !isData && !selfRebind {
			return true
		}
		if !isData && freshObject(p, m, obj, attr, n) {
			return true // the first binding of an object this function made: nothing captured it yet
		}
		if firstBinding(p, n, left.Text(src)) {
			return true // `if self.w is None: self.w = ...`: bound once, before the capture read it
		}
		msg := fmt.Sprintf("`%s` binds a new tensor to `%s`, which captured code reads: the graph keeps reading the tensor it captured", short(n.Text(src)), left.Text(src))
		// A reload hook rebinding a registered parameter or buffer: a
		// framework's layerwise reload copies those back into the tensors
		// the graph captured. Not proved here: a warning.
		sev := p.Rule.Severity
		if p.Ctx == PostCapture && registeredTensor(p, left, right, isData) {
			sev = SeverityWarning
		}
		var fix *Fix
		source := right
		if t != nil {
			source = t.Source
		}
		why := ""
		lazy := false
		switch {
		case selfRebind:
			msg += "; convert it once at load time, before capture"
		case isData:
			// x.data.copy_(y) keeps x's shape, dtype and layout: the same
			// program only where y is proved to have them.
			if sameTensorMeta(p, right, obj.Text(src)) {
				fix = &Fix{Message: "copy the new values into the captured tensor with copy_ (the new tensor has its shape, dtype, device and layout)",
					Applicability: Safe, Edits: []TextEdit{{Start: n.Start, End: n.End,
						NewText: fmt.Sprintf("%s.copy_(%s)", left.Text(src), right.Text(src))}}}
			} else {
				why = "`" + left.Text(src) + ".copy_(...)` would keep the old shape, dtype and layout, and capguard cannot prove the new tensor has them (a transpose, a view, a cast or a repacking would raise or be undone)"
			}
		case lazyAllocation(p, n, left) != "":
			why = lazyAllocation(p, n, left)
			lazy = true
		case p.a.knownBuffer(attr) && (t == nil || allocatedInInit(p, left) || !runsOutsidePrep(p)):
			// A function that also runs before the capture (set-up) makes
			// the first binding itself: a copy_ there has nothing to copy
			// into, so it gets the persistent buffer below.
			fix, why = copyIntoFix(p, n, left, source, t)
		case t != nil:
			site := siteKey(p.File, p.Fn, strings.ReplaceAll(short(obj.Text(src)), ".", "_")+"."+attr)
			fix, why = checkedTempFix(p, t, instanceKey(p, obj, site), Unsafe, "", nil)
			if held := attrHeldElsewhere(p, attr, n); fix != nil && held != "" {
				fix, why = nil, held+", and the next call would overwrite a persistent buffer in place"
			}
			if c := constructorWhy(p, obj); fix != nil && c != "" {
				fix, why = nil, c
			}
			if fix != nil {
				fix.Message = "bind a persistent buffer filled with copy_ under a stable key (unsafe: correct only when this code also ran before capture, so the graph captured the same buffer)"
			}
		}
		if why != "" {
			msg = noFix(msg, why)
		}
		switch {
		case sev == SeverityWarning:
			p.ReportAssuming(n, msg, fix, reloadAssumption)
		case lazy:
			// A grow-only or first-use allocation rebinds only when its
			// guard holds after capture: a buffer sized before capture
			// never is.
			p.ReportAssuming(n, msg, fix, "assumes the guarded (re)allocation runs after capture; once the buffer is allocated large enough before capture it never does")
		default:
			p.ReportSeverity(n, sev, msg, fix)
		}
		return false
	})
}

// runFreshState: in captured code, `obj.attr = <a new tensor>` binds a
// tensor of the graph's private memory to persistent state; when code that
// replays a graph reads `.attr` after the `.replay()`, it reads whatever
// the LAST capture (or eager run) bound, not the graph just replayed
// (measured on an H200: testdata/gpu/probes/cg201_fresh_output_pos.py
// replays stale; writing into a buffer allocated once replays clean,
// cg201_kept_output_neg.py). An error where a capture runs in a loop (one
// graph per batch size: every capture rebinds it), else a warning that
// names the assumption.
func runFreshState(p *Pass) {
	src := p.Src()
	reads := p.a.readsAfterReplay()
	if len(reads) == 0 {
		return
	}
	m := newModel(p)
	p.Walk(func(n *Node) bool {
		if n.Kind != "assignment" {
			return true
		}
		left, right := n.Get("left"), Unparen(n.Get("right"))
		if left == nil || right == nil || left.Kind != "attribute" || right.Kind != "call" {
			return true
		}
		attr := left.Get("attribute").Text(src)
		reader := reads[attr]
		if reader == nil || attr == "data" {
			return true
		}
		if recv, name, _ := methodCall(right, src); recv != nil && viewMethods[name] {
			return true // a view of what the graph reads: not new memory of its own
		}
		if !isTensorFactory(p.File, right) && m.kind(right) != KTensor {
			return true
		}
		msg := fmt.Sprintf("`%s` binds a tensor made in captured code to `%s`, which `%s` reads after `.replay()`: every capture and every eager run rebinds it, so after a replay it can hold another graph's (or a previous run's) tensor; write into a buffer allocated once (`%s[...].copy_(...)`)",
			short(n.Text(src)), left.Text(src), reader.FullName(), left.Text(src))
		switch {
		case p.Region != nil:
			// The capture region's own statement: it runs only under this
			// capture, again only when the capture runs in a loop.
			if inLoop(p.Region.Node) {
				p.Report(n, msg, nil)
			}
		case p.a.captureInLoop():
			p.Report(n, msg, nil)
		default:
			p.ReportAssuming(n, msg, nil, "assumed: the code is captured more than once or also runs eagerly")
		}
		return false
	})
}

// readsAfterReplay maps attribute names to a function that reads the
// attribute after a graph's `.replay()` call in its body.
func (a *analysis) readsAfterReplay() map[string]*Function {
	if a.afterReplay != nil {
		return a.afterReplay
	}
	a.afterReplay = map[string]*Function{}
	for _, f := range a.proj.Files {
		if !strings.Contains(string(f.Src), ".replay()") {
			continue
		}
		for _, fn := range f.Funcs {
			var replay *Node
			walkCode(fn.BodyStmts(), func(x *Node) bool {
				if replay == nil && x.Kind == "call" {
					if recv, name, args := methodCall(x, f.Src); recv != nil && name == "replay" && len(args.NamedChildren()) == 0 && a.graphObject(recv) {
						replay = x
					}
				}
				if replay != nil && x.Kind == "attribute" && x.Start > replay.End {
					if par := x.Parent; par != nil && par.Kind == "assignment" && par.Get("left") == x {
						return true
					}
					if at := x.Get("attribute").Text(f.Src); a.afterReplay[at] == nil {
						a.afterReplay[at] = fn
					}
				}
				return true
			})
		}
	}
	return a.afterReplay
}

// graphObject: the receiver of `.replay()` is not a project object with a
// replay method of its own.
func (a *analysis) graphObject(recv *Node) bool {
	for _, v := range a.proj.g.Values(Unparen(recv)) {
		switch v.Kind {
		case flow.VInst, flow.VClass, flow.VModule, flow.VFunc, flow.VBound:
			return false
		}
	}
	return true
}

// captureInLoop: a capture region of the project runs in a loop (one graph
// per batch size), so captured code runs under capture more than once.
func (a *analysis) captureInLoop() bool {
	for _, r := range a.regions {
		if r.Ctx == Captured && inLoop(r.Node) {
			return true
		}
	}
	return false
}

// inLoop: statement n runs in a loop of its function.
func inLoop(n *Node) bool {
	if n == nil {
		return false
	}
	for x := n.Parent; x != nil && !x.Is("function_definition", "lambda", "class_definition"); x = x.Parent {
		if x.Is("for_statement", "while_statement") {
			return true
		}
	}
	return false
}

// reloadAssumption is what a post-capture finding on a registered
// parameter or buffer assumes.
const reloadAssumption = "assumed: this reload hook runs on a live engine with no copy-back; a framework's layerwise weight reload copies registered parameters and buffers back into the captured tensors, which makes this rebind harmless"

// reallocation reports `buf.resize_(...)` and `buf.set_(...)` in code that
// runs between replays, on an attribute captured code reads: set_ swaps the
// tensor's storage for another; resize_ reallocates it when the new size is
// larger than the storage (measured on an H200: both replay stale data,
// testdata/gpu/probes/cg201_set_pos.py, cg201_resize_pos.py).
func reallocation(p *Pass, call, recv *Node, name string, read map[string]bool) {
	src := p.Src()
	r := Unparen(recv)
	if r != nil && r.Kind == "attribute" && r.Get("attribute").Text(src) == "data" {
		r = Unparen(r.Get("object")) // w.data.set_(...): w's storage
	}
	if r == nil || r.Kind != "attribute" || !read[r.Get("attribute").Text(src)] {
		return
	}
	if name == "set_" {
		p.Report(call, fmt.Sprintf("`%s` swaps the storage of `%s`, which captured code reads: the graph keeps reading the storage it captured; copy the new values into it (`%s.copy_(...)`)", short(call.Text(src)), r.Text(src), r.Text(src)), nil)
		return
	}
	p.ReportAssuming(call, fmt.Sprintf("`%s` may reallocate the storage of `%s`, which captured code reads: the graph keeps reading the storage it captured; allocate the largest size before capture and copy into a view of it", short(call.Text(src)), r.Text(src)), nil, "assumed: the new size is larger than the storage")
}

// viewOfItself: the value bound to obj.data is a view of obj's own
// storage (`w.data = w.data.view(shape)`, `w.data = w.t()`,
// `w.data = w.data.reshape(-1)`): the address the graph captured stays.
func viewOfItself(right, obj *Node, src []byte) bool {
	want := strings.Join(strings.Fields(Unparen(obj).Text(src)), "")
	n := Unparen(right)
	views := 0
	for n != nil {
		t := strings.Join(strings.Fields(n.Text(src)), "")
		if views > 0 && (t == want || t == want+".data") {
			return true
		}
		recv, name, _ := methodCall(n, src)
		if recv == nil || !viewMethods[name] && !layoutViews[name] {
			return false
		}
		views++
		n = Unparen(recv)
	}
	return false
}

// layoutViews return a view of their receiver when its layout allows one
// (a parameter's contiguous storage does): with viewMethods, the methods
// that keep a `.data` rebind on the same storage.
var layoutViews = map[string]bool{"reshape": true, "reshape_as": true, "view_as": true, "flatten": true, "movedim": true, "swapaxes": true}

// firstBinding: the binding runs only while the attribute is unbound, under
// `if X.attr is None:`, `if not hasattr(X, "attr"):` or
// `if getattr(X, "attr", None) is None:`: it binds once, the first time
// (set-up, before any capture could read the attribute), and never again.
func firstBinding(p *Pass, n *Node, target string) bool {
	src := p.Src()
	target = strings.Join(strings.Fields(target), "")
	obj, attr := target, ""
	if i := strings.LastIndexByte(target, '.'); i > 0 {
		obj, attr = target[:i], target[i+1:]
	} else {
		attr = target // register_buffer("w", ...): the object is the receiver
		obj = ""
		if recv, _, _ := methodCall(n, src); recv != nil {
			obj = strings.Join(strings.Fields(Unparen(recv).Text(src)), "")
		}
	}
	for x := n.Parent; x != nil; x = x.Parent {
		if x.Is("function_definition", "lambda", "class_definition") {
			return false
		}
		if x.Kind != "if_statement" {
			continue
		}
		// Only the branch taken while unbound: the consequence.
		if c := x.Get("consequence"); c == nil || n.Start < c.Start || n.End > c.End {
			continue
		}
		if unboundTest(Unparen(x.Get("condition")), obj, attr, src) {
			return true
		}
	}
	return false
}

func unboundTest(c *Node, obj, attr string, src []byte) bool {
	if c == nil {
		return false
	}
	norm := func(n *Node) string { return strings.Join(strings.Fields(Unparen(n).Text(src)), "") }
	switch c.Kind {
	case "boolean_operator":
		// `if a is None or b is None:` binds each under its own test; an
		// `and` needs every part to hold, so one part is enough.
		return c.Children[1].Kind == "and" && (unboundTest(Unparen(c.Get("left")), obj, attr, src) || unboundTest(Unparen(c.Get("right")), obj, attr, src))
	case "not_operator":
		a := Unparen(c.Get("argument"))
		if a != nil && a.Kind == "call" && norm(a.Get("function")) == "hasattr" {
			args := positional(a.Get("arguments"))
			return len(args) == 2 && norm(args[0]) == obj && strings.Trim(args[1].Text(src), "\"'") == attr
		}
	case "comparison_operator":
		t := strings.Join(strings.Fields(c.Text(src)), "")
		if !strings.HasSuffix(t, "isNone") {
			return false
		}
		l := c.NamedChildren()[0]
		if norm(l) == obj+"."+attr {
			return true
		}
		if l.Kind == "call" && norm(l.Get("function")) == "getattr" {
			args := positional(l.Get("arguments"))
			return len(args) >= 2 && norm(args[0]) == obj && strings.Trim(args[1].Text(src), "\"'") == attr
		}
	}
	return false
}

// registeredTensor: the rebind binds a registered nn.Parameter or buffer:
// the value is `nn.Parameter(...)`, or the project registers the attribute
// (`register_parameter("w", ...)`, `register_buffer("w", ...)`, an
// `X.w = nn.Parameter(...)` binding), or it assigns `.data` of one.
func registeredTensor(p *Pass, left, right *Node, isData bool) bool {
	src := p.Src()
	if isData {
		left = Unparen(left.Get("object"))
		if left == nil || left.Kind != "attribute" {
			return false
		}
	} else if isParameterCall(p.File, right) {
		return true
	}
	return p.a.registered(left.Get("attribute").Text(src))
}

func isParameterCall(f *File, n *Node) bool {
	n = Unparen(n)
	if n == nil || n.Kind != "call" {
		return false
	}
	q := f.Qualify(n.Get("function"))
	return q == "torch.nn.Parameter" || q == "torch.nn.parameter.Parameter" || q == "torch.nn.Buffer" || lastName(q) == "Parameter"
}

// registered reports whether the project registers an attribute called
// attr as a parameter or buffer of a module.
func (a *analysis) registered(attr string) bool {
	if a.registry == nil {
		a.registry = map[string]bool{}
		for _, f := range a.proj.Files {
			if !strings.Contains(string(f.Src), "Parameter") && !strings.Contains(string(f.Src), "register_") {
				continue
			}
			Walk(f.Tree.Root, func(n *Node) bool {
				switch n.Kind {
				case "assignment":
					if l := n.Get("left"); l != nil && l.Kind == "attribute" && isParameterCall(f, n.Get("right")) {
						a.registry[l.Get("attribute").Text(f.Src)] = true
					}
				case "call":
					if _, name, args := methodCall(n, f.Src); name == "register_parameter" || name == "register_buffer" {
						if pos := positional(args); len(pos) > 0 && pos[0].Kind == "string" {
							a.registry[strings.Trim(pos[0].Text(f.Src), "\"'")] = true
						}
					}
				}
				return true
			})
		}
	}
	return a.registry[attr]
}

// allocatedInInit reports whether left is self.<attr> and the class's
// __init__ binds self.<attr> to a buffer: the tensor the graph captured
// exists before any rebinding.
func allocatedInInit(p *Pass, left *Node) bool {
	src := p.Src()
	self := p.Fn.Self()
	if self == "" || !isName(Unparen(left.Get("object")), self, src) {
		return false
	}
	cls := p.Fn.Owner()
	if cls == nil || cls.Methods["__init__"] == nil {
		return false
	}
	init := cls.Methods["__init__"]
	attr := left.Get("attribute").Text(src)
	found := false
	walkCode(init.BodyStmts(), func(x *Node) bool {
		if x.Kind == "assignment" {
			l := x.Get("left")
			if l != nil && l.Kind == "attribute" && l.Get("attribute").Text(init.File.Src) == attr &&
				isName(Unparen(l.Get("object")), init.Self(), init.File.Src) && isBufferExpr(init.File, Unparen(x.Get("right"))) {
				found = true
			}
		}
		return !found
	})
	return found
}

// runsOutsidePrep reports whether the pass's replay-prep function is also
// called from code that is not replay-prep (set-up, warm-up): a call from a
// function without the replay-prep context, outside any replay-prep region.
func runsOutsidePrep(p *Pass) bool {
	if p.Region != nil || p.Fn == nil {
		return false
	}
	for _, e := range p.Proj.g.In[p.Fn] {
		if e.Caller == nil || p.a.has(e.Caller, ReplayPrep) || p.a.has(e.Caller, PostCapture) {
			continue
		}
		inRegion := false
		for _, r := range p.a.regions {
			if r.Ctx == ReplayPrep && r.Fn == e.Caller && inAny(r.Stmts, e.Site) {
				inRegion = true
			}
		}
		if !inRegion {
			return true
		}
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
	if obj == nil || obj.Kind != "identifier" {
		return false
	}
	b := m.bindingAt(obj.Text(src), assign.Start)
	if b == nil || b.isParam || b.unpack || b.value == nil {
		return false
	}
	v := Unparen(b.value)
	if v.Kind != "call" || m.kind(v) == KTensor {
		return false
	}
	callee := Unparen(v.Get("function"))
	if callee == nil || !callee.Is("identifier", "attribute") {
		return false
	}
	cname := lastName(callee.Text(src))
	isClass := p.Proj.classOf(p.File, callee) != nil || cname != "" && cname[0] >= 'A' && cname[0] <= 'Z' ||
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
		if !fresh || x.Start >= assign.Start || x.End <= b.end {
			return x.End > b.end && x.Start < assign.Start
		}
		if x.Kind == "identifier" && x.Text(src) == name {
			par := x.Parent
			ok := par != nil && par.Kind == "attribute" && par.Get("object") == x &&
				par.Parent != nil && par.Parent.Kind == "assignment" && par.Parent.Get("left") == par &&
				par.Get("attribute").Text(src) != attr
			if !ok {
				fresh = false
			}
		}
		return true
	})
	return fresh
}

// copyIntoFix rewrites `obj.attr = expr` as a copy into the tensor the
// attribute already holds. The fix is safe only where capguard can prove
// that tensor exists with the new value's shape and dtype (both are
// allocated in the project with one shape, and the conversion copies): then
// it copies the whole tensor and nothing a reader can see changes but the
// values. Otherwise it copies the first rows, which keeps the old shape and
// dtype, and is unsafe.
func copyIntoFix(p *Pass, assign, left, source *Node, t *Temp) (*Fix, string) {
	src := p.Src()
	dst := left.Text(src)
	s := source.Text(src)
	if provenSameTensor(p, left, t) {
		return &Fix{
			Message:       "copy into the tensor the graph captured (same shape and dtype, allocated once) instead of rebinding it",
			Applicability: Safe,
			Edits:         []TextEdit{{Start: assign.Start, End: assign.End, NewText: fmt.Sprintf("%s.copy_(%s)", dst, s)}},
		}, ""
	}
	// The prefix copy runs only where the attribute holds a tensor.
	if boundToNone(p.Proj, left.Get("attribute").Text(src)) {
		return nil, "`" + left.Get("attribute").Text(src) + "` is bound to None elsewhere, so a copy into it can fail"
	}
	if r := Unparen(assign.Get("right")); freshAllocation(p, r) {
		return nil, "the new value is a fresh allocation (a new buffer), which a copy into the old one could not give its shape"
	}
	if t != nil {
		if why := tempNoFix(p, t); why != "" {
			return nil, why
		}
	}
	var text string
	if source.Is("identifier", "attribute") && simpleExpr(source) {
		text = fmt.Sprintf("%s[: %s.shape[0]].copy_(%s)", dst, s, s)
	} else {
		tmp := "new_" + left.Get("attribute").Text(src)
		indent := lineIndent(src, assign.Start)
		text = fmt.Sprintf("%s = %s\n%s%s[: %s.shape[0]].copy_(%s)", tmp, s, indent, dst, tmp, tmp)
	}
	return &Fix{
		Message:       "copy into the tensor the graph captured (its first rows; copy_ converts the dtype) instead of rebinding it (unsafe: the captured tensor keeps its own shape and dtype, which capguard cannot prove match the new value's)",
		Applicability: Unsafe,
		Edits:         []TextEdit{{Start: assign.Start, End: assign.End, NewText: text}},
	}, ""
}

// provenSameTensor: the attribute assigned is, everywhere else in the
// project, an allocation of one shape and dtype D; the new value converts
// to D an attribute that is everywhere an allocation of that same shape
// and of another dtype (so the conversion copies).
func provenSameTensor(p *Pass, left *Node, t *Temp) bool {
	if t == nil || t.Dtype == "" || t.Reshape != "" {
		return false
	}
	src := p.Src()
	dshape, ddtype, ok := onlyAllocation(p.Proj, left.Get("attribute").Text(src), left)
	if !ok || ddtype != t.Dtype {
		return false
	}
	s := Unparen(t.Source)
	if s.Kind != "attribute" {
		return false
	}
	sshape, sdtype, ok := onlyAllocation(p.Proj, s.Get("attribute").Text(src), nil)
	return ok && sshape == dshape && sdtype != ddtype
}

// onlyAllocation: every binding of attribute attr in the project (but
// skip) is an allocation with one shape and dtype, given as text.
func onlyAllocation(proj *Project, attr string, skip *Node) (shape, dtype string, ok bool) {
	n := 0
	bad := false
	for _, f := range proj.Files {
		if bad || !strings.Contains(string(f.Src), "."+attr) {
			continue
		}
		Walk(f.Tree.Root, func(x *Node) bool {
			if bad {
				return false
			}
			if x.Kind != "assignment" {
				return true
			}
			l := x.Get("left")
			if l == nil || l.Kind != "attribute" || l == skip || l.Get("attribute").Text(f.Src) != attr {
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

// allocationOf is the shape and dtype text of `torch.empty/zeros/ones(shape, dtype=D, ...)`.
func allocationOf(f *File, n *Node) (shape, dtype string, ok bool) {
	if n == nil || n.Kind != "call" {
		return "", "", false
	}
	switch f.Qualify(n.Get("function")) {
	case "torch.empty", "torch.zeros", "torch.ones":
	default:
		return "", "", false
	}
	args := n.Get("arguments")
	d := keyword(args, "dtype", f.Src)
	pos := positional(args)
	if d == nil || len(pos) == 0 {
		return "", "", false
	}
	var parts []string
	for _, a := range pos {
		parts = append(parts, strings.Join(strings.Fields(a.Text(f.Src)), ""))
	}
	return strings.Join(parts, ","), f.Qualify(d), true
}

// simpleExpr: a name, an attribute chain or a subscript of one, no calls.
func simpleExpr(n *Node) bool {
	ok := true
	Walk(n, func(x *Node) bool {
		if x.Kind == "call" || x.Kind == "await" || x.Kind == "lambda" || strings.Contains(x.Kind, "comprehension") {
			ok = false
		}
		return ok
	})
	return ok
}

// lineIndent is the leading whitespace of the line holding offset off.
func lineIndent(src []byte, off int) string {
	start := lineStartOf(src, off)
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// capturedAttrs is the set of attribute names read by captured code.
func (a *analysis) capturedAttrs() map[string]bool {
	if a.attrsRead != nil {
		return a.attrsRead
	}
	a.attrsRead = map[string]bool{}
	collect := func(f *File, stmts []*Node) {
		for _, s := range stmts {
			Walk(s, func(n *Node) bool {
				if n.Kind == "function_definition" || n.Kind == "class_definition" {
					return false
				}
				if n.Kind == "attribute" {
					if par := n.Parent; par != nil && par.Kind == "assignment" && par.Get("left") == n {
						return true
					}
					a.attrsRead[n.Get("attribute").Text(f.Src)] = true
				}
				return true
			})
		}
	}
	for fn, ctxs := range a.reached {
		if ctxs[Captured] != nil || ctxs[Claimed] != nil {
			collect(fn.File, bodyStmts(fn))
		}
	}
	for _, r := range a.regions {
		if r.Ctx == Captured {
			collect(r.Fn.File, r.Stmts)
		}
	}
	return a.attrsRead
}

// knownBuffer reports whether attribute attr is somewhere assigned a
// preallocated buffer or a view of one (an allocation, or a subscript of an
// attribute), as an assignment or as a constructor keyword.
func (a *analysis) knownBuffer(attr string) bool {
	if a.buffers == nil {
		a.buffers = map[string]bool{}
		for _, f := range a.proj.Files {
			Walk(f.Tree.Root, func(n *Node) bool {
				var name string
				var value *Node
				switch n.Kind {
				case "assignment":
					if l := n.Get("left"); l != nil && l.Kind == "attribute" {
						name, value = l.Get("attribute").Text(f.Src), Unparen(n.Get("right"))
					}
				case "keyword_argument":
					name, value = n.Get("name").Text(f.Src), Unparen(n.Get("value"))
				}
				if value != nil && isBufferExpr(f, value) {
					a.buffers[name] = true
				}
				return true
			})
		}
	}
	return a.buffers[attr]
}

func isBufferExpr(f *File, n *Node) bool {
	if n.Kind == "subscript" {
		v := Unparen(n.Get("value"))
		return v != nil && v.Kind == "attribute"
	}
	if n.Kind == "call" {
		return allocators[f.Qualify(n.Get("function"))]
	}
	return false
}
