package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

var ruleRebindInsteadOfCopy = &Rule{
	ID: "CG201", Name: "rebind-instead-of-copy", Severity: SeverityError, Fix: "sometimes",
	Contexts: []Context{ReplayPrep, PostCapture, Captured},
	Summary:  "code that runs after capture binds a new tensor to state that captured code reads",
	Doc:      doc("cg201_rebind_instead_of_copy.md"),
	Run:      runRebind,
}

func runRebind(p *Pass) {
	src := p.Src()
	reads := readsFor(p)
	read := reads.Attrs
	m := newModel(p)
	if p.Ctx == Captured {
		runFreshState(p)
		return
	}
	localRebind(p, m)
	p.Walk(func(n *Node) bool {
		if n.Kind() == "call" {
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
			if len(pos) < 2 || pos[0].Kind() != "string" || Unparen(pos[1]).Kind() == "none" {
				return true
			}
			attr := strings.Trim(pos[0].Text(src), "\"'")
			if p.PrepByCall() && p.Fn != nil && (p.Fn.Name == "__init__" || isName(Unparen(recv), p.Fn.Self(), src) && constructing(p, p.Fn) != nil) {
				return false // a constructor registering its new object's tensors (Pass.PrepByCall)
			}
			if read[attr] && !firstBinding(p, n, attr) {
				msg := fmt.Sprintf("`%s` binds a new tensor to `%s`, which captured code reads: the graph keeps reading the tensor it captured, or its memory once this binding frees it; copy the new values into it (`%s.data.copy_(...)`)", short(n.Text(src)), attr, attr)
				if p.Ctx == PostCapture {
					p.ReportAssuming(n, msg, nil, reloadAssumption)
				} else {
					p.Report(n, msg, nil)
				}
			}
			return false
		}
		if n.Kind() != "assignment" {
			return true
		}
		left, right := n.Get("left"), Unparen(n.Get("right"))
		if left == nil || right == nil || left.Kind() != "attribute" || right.Kind() == "none" {
			return true
		}
		attr := left.Get("attribute").Text(src)
		obj := left.Get("object")
		isData := attr == "data" // param.data = ...: whatever the value, the parameter's storage changes
		if !isData && !isTensorFactory(p.File, right) && !tensorArithmetic(m, right) {
			return true
		}
		if isData && viewOfItself(right, obj, src) {
			return true // p.data = p.data.view(...): the same storage, the same address
		}
		if isData && freshModuleTensor(p, m, obj, n) {
			return true // tmp = nn.Linear(1, 1); tmp.weight.data = w: a parameter made here
		}
		t := tempOf(p.File, right)
		selfRebind := t != nil && Unparen(t.Source).Text(src) == left.Text(src)
		if !read[attr] && !isData && !selfRebind {
			return true
		}
		if !isData && !selfRebind && !readFromSameObject(p.A, reads, obj, attr) {
			return true // another class's attribute of that name
		}
		if isData && p.PrepByCall() && !paramReadByCapture(p, obj) {
			return true // a guess on a guess (Pass.PrepByCall)
		}
		if !isData && handedToReplay(p, obj) {
			return true // the step's input, handed to the call that replays (Pass.PrepByCall)
		}
		if !isData && freshObject(p, m, obj, attr, n) {
			return true // the first binding of an object this function made: nothing captured it yet
		}
		if !isData && p.Fn != nil && p.Fn.Self() != "" && isName(Unparen(obj), p.Fn.Self(), src) && newObjectOnly(p) {
			// A constructor, or code it runs on self, binds the attributes
			// of the object being made (a reference wrapper a test builds
			// between capture and replay, a workspace made on first use):
			// nothing captured that object (newObjectOnly).
			return true
		}
		if firstBinding(p, n, left.Text(src)) {
			return true // `if self.w is None: self.w = ...`: bound once, before the capture read it
		}
		msg := fmt.Sprintf("`%s` binds a new tensor to `%s`, which captured code reads: the graph keeps reading the tensor it captured, or its memory once this binding frees it", short(n.Text(src)), left.Text(src))
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
					Applicability: Safe, Edits: []TextEdit{{Start: int(n.Start), End: int(n.End),
						NewText: fmt.Sprintf("%s.copy_(%s)", left.Text(src), right.Text(src))}}}
			} else {
				why = "`" + left.Text(src) + ".copy_(...)` would keep the old shape, dtype and layout, and capguard cannot prove the new tensor has them (a transpose, a view, a cast or a repacking would raise or be undone)"
			}
		case lazyAllocation(p, n, left) != "":
			why = lazyAllocation(p, n, left)
			lazy = true
		case knownBuffer(p.A, attr) && (t == nil || allocatedInInit(p, left) || !runsOutsidePrep(p)):
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
		noop := noopConversion(p, m, t, right, left)
		switch {
		case sev == SeverityWarning:
			p.ReportAssuming(n, msg, fix, reloadAssumption)
		case noop != "":
			p.ReportAssuming(n, msg, fix, noop)
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
	reads := readsAfterReplay(p.A)
	writes := prepWrites(p.A)
	if len(reads) == 0 && len(writes) == 0 {
		return
	}
	m := newModel(p)
	p.Walk(func(n *Node) bool {
		if n.Kind() != "assignment" {
			return true
		}
		left, right := n.Get("left"), Unparen(n.Get("right"))
		if left == nil || right == nil || left.Kind() != "attribute" || right.Kind() != "call" && right.Kind() != "binary_operator" {
			return true
		}
		attr := left.Get("attribute").Text(src)
		var reader *prepWrite
		sameReader := false
		if rs := reads[attr]; len(rs) > 0 && right.Kind() == "call" {
			reader, sameReader = sameObjectUse(p, left.Get("object"), rs)
		}
		if reader == nil && len(writes[attr]) == 0 || attr == "data" {
			return true
		}
		if recv, name, _ := methodCall(right, src); recv != nil && viewMethods[name] {
			return true // a view of what the graph reads: not new memory of its own
		}
		if !isTensorFactory(p.File, right) && m.Kind(right) != KTensor {
			return true
		}
		if reader == nil {
			prepFilled(p, n, left, right, writes[attr])
			return false
		}
		msg := fmt.Sprintf("`%s` binds a tensor made in captured code to `%s`, which `%s` reads after `.replay()`: every capture and every eager run rebinds it, so after a replay it can hold another graph's (or a previous run's) tensor; write into a buffer allocated once (`%s[...].copy_(...)`)",
			short(n.Text(src)), left.Text(src), reader.Fn.FullName(), left.Text(src))
		var assumes []string
		if !sameReader {
			assumes = append(assumes, "assumes the `."+attr+"` that "+reader.Fn.FullName()+" reads after `.replay()` (`"+short(reader.Attr.Text(reader.Fn.File.Src))+"`) is this object's (the name matches; the objects are not proved the same)")
		}
		switch {
		case p.Region != nil:
			// The capture region's own statement: it runs only under this
			// capture, again only when the capture runs in a loop.
			if !inLoop(p.Region.Node) {
				return false
			}
		case captureInLoop(p.A):
		default:
			assumes = append(assumes, "assumed: the code is captured more than once or also runs eagerly")
		}
		if len(assumes) == 0 {
			p.Report(n, msg, nil)
		} else {
			p.ReportAssuming(n, msg, nil, assumes[0], assumes[1:]...)
		}
		return false
	})
}

// sameObjectUse picks, among uses of an attribute matched to obj's by
// name (reads after a `.replay()`, replay-prep fills), the one that may be
// obj's: one whose object is proved of a class obj may have (same true),
// else one whose classes, or obj's, are unknown (same false), else none
// (every use's object is of another class).
func sameObjectUse(p *Pass, obj *Node, uses []prepWrite) (*prepWrite, bool) {
	classes := instanceClasses(p, obj)
	var first *prepWrite
	for i := range uses {
		r := &uses[i]
		theirs := instanceClasses(p, r.Attr.Get("object"))
		if len(classes) > 0 && len(theirs) > 0 {
			for c := range theirs {
				if classes[c] {
					return r, true
				}
			}
			continue // another class's attribute of that name
		}
		if first == nil {
			first = r
		}
	}
	return first, false
}

// prepFilled: captured code binds new memory to `obj.attr`
// (`self.lens = torch.clamp(self.lens, max=w)`) that replay-prep fills in
// place (`seq.lens.copy_(new)` before `.replay()`). After the capture the
// attribute holds the graph's own output: the fill lands there, the replay
// recomputes it from the tensor the capture read, which nothing refreshes,
// and the graph runs on the inputs of the capture (measured on an H200:
// testdata/gpu/probes/cg201_prep_fills_output_pos.py replays stale). Only
// new memory a replay writes counts: an out-of-place torch op, arithmetic
// or a filling factory, not `torch.empty` (no kernel writes it), nor a
// conversion or `.contiguous()` that returns the tensor itself when it has
// the layout already, nor a constructor's first binding of its object.
// The attributes match by name; where both objects' classes are known, an
// error when they share one and nothing when they do not; else a warning
// that names the assumption.
func prepFilled(p *Pass, n, left, right *Node, writes []prepWrite) {
	src := p.Src()
	if p.Fn != nil && p.Fn.Name == "__init__" && isName(Unparen(left.Get("object")), p.Fn.Self(), src) {
		return // the object being made: its first binding
	}
	fresh := right.Kind() == "binary_operator" // x - 1 of a tensor (the caller checked it is one)
	if right.Kind() == "call" {
		q := p.File.Qualify(right.Get("function"))
		switch {
		case strings.Contains(q, "empty"):
			// torch.empty launches no kernel: a replay does not write the
			// memory, so it does not undo a fill.
		case torchOpFresh(q), allocators[q], likeFactories[q], hostBuilders[q], randomFactories[q]:
			fresh = true
		default:
			if recv, name, _ := methodCall(right, src); recv != nil && freshMethods[name] {
				fresh = true
			}
		}
	}
	if !fresh {
		return
	}
	// The fill's own context is half the proof: a fill whose function runs
	// before a replay only through a guessed chain is a guess. A proved
	// fill of a proved object is preferred.
	var proved []prepWrite
	for _, w := range writes {
		if len(w.Assumes) == 0 {
			proved = append(proved, w)
		}
	}
	w, same := sameObjectUse(p, left.Get("object"), proved)
	if w == nil || !same {
		if w2, same2 := sameObjectUse(p, left.Get("object"), writes); w2 != nil && (w == nil || same2) {
			w, same = w2, same2
		}
	}
	if w == nil {
		return
	}
	msg := fmt.Sprintf("`%s` binds new memory made in captured code to `%s`, which `%s` fills in place before a replay: after the capture `%s` is the graph's own output, so the fill lands there and the replay overwrites it from the tensor the capture read, which nothing refreshes; keep the result under another name",
		short(n.Text(src)), left.Text(src), w.Fn.FullName(), left.Text(src))
	var assumes []string
	if !same {
		assumes = append(assumes, "assumes the `."+left.Get("attribute").Text(src)+"` that "+w.Fn.FullName()+" fills is this object's (the name matches; the objects are not proved the same)")
	}
	assumes = append(assumes, w.Assumes...)
	if len(assumes) == 0 {
		p.Report(n, msg, nil)
		return
	}
	p.ReportAssuming(n, msg, nil, assumes[0], assumes[1:]...)
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
	if r != nil && r.Kind() == "attribute" && r.Get("attribute").Text(src) == "data" {
		r = Unparen(r.Get("object")) // w.data.set_(...): w's storage
	}
	if r == nil || r.Kind() != "attribute" || !read[r.Get("attribute").Text(src)] {
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
	want := blankless(Unparen(obj).Text(src))
	n := Unparen(right)
	views := 0
	for n != nil {
		t := blankless(n.Text(src))
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

// firstBinding: the binding runs only while the attribute is unbound, under
// `if X.attr is None:`, `if not hasattr(X, "attr"):` or
// `if getattr(X, "attr", None) is None:`: it binds once, the first time
// (set-up, before any capture could read the attribute), and never again.
func firstBinding(p *Pass, n *Node, target string) bool {
	src := p.Src()
	target = blankless(target)
	obj, attr := target, ""
	if i := strings.LastIndexByte(target, '.'); i > 0 {
		obj, attr = target[:i], target[i+1:]
	} else {
		attr = target // register_buffer("w", ...): the object is the receiver
		obj = ""
		if recv, _, _ := methodCall(n, src); recv != nil {
			obj = blankless(Unparen(recv).Text(src))
		}
	}
	for x := n.Parent(); x != nil; x = x.Parent() {
		if x.Is("function_definition", "lambda", "class_definition") {
			return false
		}
		if x.Kind() != "if_statement" {
			continue
		}
		// Only the branch taken while unbound: the consequence.
		if c := x.Get("consequence"); c == nil || n.Start < c.Start || n.End > c.End {
			continue
		}
		if unboundTest(Unparen(x.Get("condition")), obj, attr, src) && !resetAttrs(p)[attr] {
			return true
		}
		if a := runsOnce(x, obj, src); a != "" && !resetAttrs(p)[a] {
			return true
		}
	}
	return false
}

// resetAttrs are the attribute names the project unbinds outside a
// constructor (`self.n = None`, `del self.n`, `delattr(self, "n")`, by
// name, whatever the object): a guard testing that one is unbound runs
// again after each reset (a dispatcher that clears its per-step size at the
// end of every step), so it is no first-binding guard.
func resetAttrs(p *Pass) map[string]bool {
	return p.Proj.Memo("cg201.resetAttrs", func() any {
		out := map[string]bool{}
		for _, f := range p.Proj.Files {
			if f.Tree == nil {
				continue
			}
			src := f.Src
			for _, fn := range f.Funcs {
				if fn.Name == "__init__" || fn.Name == "__new__" {
					continue
				}
				walkCode(bodyStmts(fn), func(n *Node) bool {
					switch n.Kind() {
					case "assignment":
						l, r := Unparen(n.Get("left")), Unparen(n.Get("right"))
						if l != nil && r != nil && l.Kind() == "attribute" && r.Kind() == "none" {
							out[l.Get("attribute").Text(src)] = true
						}
					case "delete_statement":
						Walk(n, func(x *Node) bool {
							if x.Kind() == "attribute" && x.Parent() != nil && x.Parent().Kind() != "attribute" {
								out[x.Get("attribute").Text(src)] = true
							}
							return true
						})
						return false
					case "call":
						if fnode := Unparen(n.Get("function")); fnode != nil && fnode.Text(src) == "delattr" {
							if args := positional(n.Get("arguments")); len(args) == 2 {
								out[strings.Trim(args[1].Text(src), "\"'")] = true
							}
						}
					}
					return true
				})
			}
		}
		return out
	}).(map[string]bool)
}

// runsOnce is the attribute of obj that if statement x tests is unbound
// and whose consequence binds it in a statement of its own block (so on
// every path through it), or "": the branch runs once, the first time
// (unless the project resets that attribute: resetAttrs), and so does every
// other binding in it (`if not hasattr(self, "w_uv"): self.w_uv = ...;
// self.w_uk = ...` binds w_uk once too).
func runsOnce(x *Node, obj string, src []byte) string {
	c := x.Get("consequence")
	if c == nil || obj == "" {
		return ""
	}
	cond := Unparen(x.Get("condition"))
	for _, st := range c.NamedChildren() {
		if st.Kind() == "expression_statement" && len(st.NamedChildren()) == 1 {
			st = st.NamedChildren()[0]
		}
		if st.Kind() != "assignment" {
			continue
		}
		l := Unparen(st.Get("left"))
		if l == nil || l.Kind() != "attribute" || blankless(Unparen(l.Get("object")).Text(src)) != obj {
			continue
		}
		if a := l.Get("attribute").Text(src); unboundTest(cond, obj, a, src) {
			return a
		}
	}
	return ""
}

func unboundTest(c *Node, obj, attr string, src []byte) bool {
	if c == nil {
		return false
	}
	norm := func(n *Node) string { return blankless(Unparen(n).Text(src)) }
	switch c.Kind() {
	case "boolean_operator":
		// `if a is None or b is None:` binds each under its own test; an
		// `and` needs every part to hold, so one part is enough.
		return c.Children()[1].Kind() == "and" && (unboundTest(Unparen(c.Get("left")), obj, attr, src) || unboundTest(Unparen(c.Get("right")), obj, attr, src))
	case "not_operator":
		a := Unparen(c.Get("argument"))
		if a != nil && a.Kind() == "call" && norm(a.Get("function")) == "hasattr" {
			args := positional(a.Get("arguments"))
			return len(args) == 2 && norm(args[0]) == obj && strings.Trim(args[1].Text(src), "\"'") == attr
		}
	case "comparison_operator":
		t := blankless(c.Text(src))
		if !strings.HasSuffix(t, "isNone") {
			return false
		}
		l := c.NamedChildren()[0]
		if norm(l) == obj+"."+attr {
			return true
		}
		if l.Kind() == "call" && norm(l.Get("function")) == "getattr" {
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
		if left == nil || left.Kind() != "attribute" {
			return false
		}
	} else if isParameterCall(p.File, right) {
		return true
	}
	return registered(p.A, left.Get("attribute").Text(src))
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
		if x.Kind() == "assignment" {
			l := x.Get("left")
			if l != nil && l.Kind() == "attribute" && l.Get("attribute").Text(init.File.Src) == attr &&
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
	for _, e := range p.Proj.G.In[p.Fn] {
		if e.Caller == nil || p.A.Has(e.Caller, ReplayPrep) || p.A.Has(e.Caller, PostCapture) {
			continue
		}
		inRegion := false
		for _, r := range p.A.Regions {
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

// copyIntoFix rewrites `obj.attr = expr` as a copy into the tensor the
// attribute already holds. The fix is safe only where capguard can prove
// that tensor exists with the new value's shape and dtype (both are
// allocated in the project with one shape, and the conversion copies): then
// it copies the whole tensor and nothing a reader can see changes but the
// values. Otherwise it copies the first rows, which keeps the old shape and
// dtype, and is unsafe.
func copyIntoFix(p *Pass, assign, left, from *Node, t *Temp) (*Fix, string) {
	src := p.Src()
	dst := left.Text(src)
	s := from.Text(src)
	if provenSameTensor(p, left, t) {
		return &Fix{
			Message:       "copy into the tensor the graph captured (same shape and dtype, allocated once) instead of rebinding it",
			Applicability: Safe,
			Edits:         []TextEdit{{Start: int(assign.Start), End: int(assign.End), NewText: fmt.Sprintf("%s.copy_(%s)", dst, s)}},
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
	if from.Is("identifier", "attribute") && simpleExpr(from) {
		text = fmt.Sprintf("%s[: %s.shape[0]].copy_(%s)", dst, s, s)
	} else {
		tmp := "new_" + left.Get("attribute").Text(src)
		indent := lineIndent(src, int(assign.Start))
		text = fmt.Sprintf("%s = %s\n%s%s[: %s.shape[0]].copy_(%s)", tmp, s, indent, dst, tmp, tmp)
	}
	return &Fix{
		Message:       "copy into the tensor the graph captured (its first rows; copy_ converts the dtype) instead of rebinding it (unsafe: the captured tensor keeps its own shape and dtype, which capguard cannot prove match the new value's)",
		Applicability: Unsafe,
		Edits:         []TextEdit{{Start: int(assign.Start), End: int(assign.End), NewText: text}},
	}, ""
}

// noopConversion: a conversion to a tensor's own dtype (or `.contiguous()`
// of a contiguous tensor) returns the tensor itself, so the attribute is
// bound to the converted tensor, not to a new one. That tensor is new only
// where the function made it (conversionSourceFresh); otherwise a binding
// `self.lens = lens.to(torch.int32)` of an int32 argument is
// `self.lens = lens`, which binds the caller's tensor (a rebinding only
// where the caller passes another one, which nothing here proves), and
// `self.indptr = self.indptr_buf.to(torch.int32)` binds the object's own
// persistent buffer. Proved a copy where the source is an attribute the
// project allocates everywhere with another dtype. "" when there is no such
// assumption; else what the finding assumes.
func noopConversion(p *Pass, m *model, t *Temp, right, left *Node) string {
	if left == nil || left.Kind() != "attribute" {
		return ""
	}
	s, what := noopAssumption(p, m, t, right)
	if what == "" {
		return ""
	}
	src := p.Src()
	if s.Kind() == "attribute" && Unparen(s.Get("object")).Text(src) == Unparen(left.Get("object")).Text(src) {
		return "assumes `" + short(s.Text(src)) + "` " + what + ", the object's own buffer"
	}
	return "assumes `" + short(s.Text(src)) + "` " + what + ", and then this binds `" + short(s.Text(src)) +
		"`, a tensor this function did not make (a rebinding only where it changes between replays, which nothing here proves)"
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
	if s.Kind() != "attribute" {
		return false
	}
	sshape, sdtype, ok := onlyAllocation(p.Proj, s.Get("attribute").Text(src), nil)
	return ok && sshape == dshape && sdtype != ddtype
}

// allocationOf is the shape and dtype text of `torch.empty/zeros/ones(shape, dtype=D, ...)`.
func allocationOf(f *File, n *Node) (shape, dtype string, ok bool) {
	if n == nil || n.Kind() != "call" {
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
		parts = append(parts, blankless(a.Text(f.Src)))
	}
	return strings.Join(parts, ","), f.Qualify(d), true
}

// simpleExpr: a name, an attribute chain or a subscript of one, no calls.
func simpleExpr(n *Node) bool {
	ok := true
	Walk(n, func(x *Node) bool {
		if x.Kind() == "call" || x.Kind() == "await" || x.Kind() == "lambda" || strings.Contains(x.Kind(), "comprehension") {
			ok = false
		}
		return ok
	})
	return ok
}

// newObjectOnly: p's function binds the attributes of an object being made
// (constructing: a constructor, a private method only constructors call on
// self, a closure that never leaves the constructor's calls), and no
// construction of it replaces state (madeIntoState). Where the code is
// replay-prep only by a call that replays (Pass.PrepByCall), the
// replacement is not looked for: a guess on a guess.
func newObjectOnly(p *Pass) bool {
	ctors := constructing(p, p.Fn)
	if ctors == nil {
		return false
	}
	if p.PrepByCall() {
		return true
	}
	for _, c := range ctors {
		if madeIntoState(p, c) {
			return false
		}
	}
	return true
}

// madeIntoState: some construction of the constructor ctor's class stores
// the new object into an attribute or an item (`self.inp = StepInput(x)`,
// `self.metas[i] = Meta(...)`), or does not bind it to a plain local: the
// object may replace one a graph read.
func madeIntoState(p *Pass, ctor *index.Function) bool {
	if p.Proj == nil || p.Proj.G == nil {
		return true
	}
	in := p.Proj.G.In[ctor]
	if len(in) == 0 {
		return true
	}
	for _, e := range in {
		if e.Site == nil || e.Caller == nil {
			return true
		}
		call := e.Site
		parent := call.Parent()
		for parent != nil && parent.Kind() == "parenthesized_expression" {
			parent = parent.Parent()
		}
		if parent == nil || parent.Kind() != "assignment" || Unparen(parent.Get("right")) != call {
			// super().__init__(...), an argument, a return: followed
			// nowhere here.
			return true
		}
		if l := Unparen(parent.Get("left")); l == nil || l.Kind() != "identifier" {
			return true
		}
	}
	return false
}

// tensorArithmetic: an operator on a tensor (`meta.indices - 1`, `a * s`),
// which the value model proves is one, makes a new tensor, as a factory
// does: bound to an attribute, it replaces the tensor captured code read.
func tensorArithmetic(m *model, n *Node) bool {
	n = Unparen(n)
	return n != nil && n.Kind() == "binary_operator" && m.Kind(n) == KTensor
}

// paramReadByCapture: `owner.name` (the tensor whose `.data` a statement
// rebinds) is an attribute captured code reads from an object that may be
// owner (readFromSameObject).
func paramReadByCapture(p *Pass, param *Node) bool {
	param = Unparen(param)
	if param == nil || param.Kind() != "attribute" {
		return false
	}
	name := param.Get("attribute").Text(p.Src())
	rs := readsFor(p)
	return rs.Attrs[name] && readFromSameObject(p.A, rs, param.Get("object"), name)
}

// handedToReplay: in a region before a call that replays (Pass.PrepByCall),
// the object whose attribute is bound is one the step hands to that call
// (`state.cu_seqlens = t; runner.replay(ids, state)`), whose parameter the
// callee reads. A graph cannot read an object the step made for itself, so
// a replay path that takes the step's object reads it on the host and
// copies it into the buffers its graph captured (`static.copy_(state.x)`);
// that the graph reads the attribute named is the rule's own guess (one
// abstract object a class: the captured object and the step's are one
// value to the analysis), a guess on a guess there.
func handedToReplay(p *Pass, obj *Node) bool {
	r := p.ByCallRegion()
	if r == nil || r.ByCall == nil || r.Node == nil || r.Node.Kind() != "call" || r.ByCall.Body == nil {
		return false
	}
	classes := instanceClasses(p, obj)
	if len(classes) == 0 {
		return false
	}
	callee := r.ByCall
	for i, prm := range callee.Params {
		if prm.Kind != index.Positional || i == 0 && callee.Class != nil && callee.Self() != "" {
			continue // the receiver is the runner, not what the step hands it
		}
		arg := paramArg(r.Node, callee, i, r.Fn.File.Src)
		if arg != nil && covers(instanceClasses(p, arg), classes) && readsName(callee, prm.Name) {
			return true
		}
	}
	return false
}

// covers: every class of want is in have.
func covers(have, want map[*Class]bool) bool {
	for k := range want {
		if !have[k] {
			return false
		}
	}
	return true
}

// readsName: fn's body loads the name (a parameter it passes on or reads).
func readsName(fn *Function, name string) bool {
	for _, st := range fn.BodyStmts() {
		if mentions(st, name, fn.File.Src) {
			return true
		}
	}
	return false
}

// localRebind reports, in a region before a `.replay()` of a graph that
// the same function captured into a local (`with torch.cuda.graph(g):
// out = model(x)`, later `x = torch.cat(...)`, `g.replay()`), an
// assignment that binds a new tensor to a local name the capture read
// from outside itself: the graph reads the tensor bound at capture, and
// the replay never sees the new one (the attribute form is the rest of
// this rule; testdata/gpu/local_graph's cg201_local_* cases). A for loop around the replay
// whose target the capture read rebinds it too, where it walks a device
// tensor: each element is a view at another address.
func localRebind(p *Pass, m *model) {
	r := p.Region
	if r == nil || r.Ctx != ReplayPrep || r.ByCall != nil || p.Fn == nil || r.Node == nil {
		return
	}
	src := p.Src()
	for _, c := range p.A.Regions {
		if c.Fn != p.Fn || c.Ctx != Captured || c.Node == nil || c.Node.End > r.Node.Start {
			continue
		}
		lg := localGraphOf(p.Fn, c, src)
		if lg == nil || lg.taken || !slices.Contains(lg.replays, r.Node) {
			continue
		}
		reads := capturedLocals(m, c, src)
		if len(reads) == 0 {
			continue
		}
		rebind := func(at, target *Node, what string) {
			name := target.Text(src)
			read, ok := reads[name]
			if !ok || p.Skipped(at) {
				return
			}
			p.Report(at, fmt.Sprintf("%s binds a new tensor to `%s`, which the graph captured at line %d reads (line %d): `%s` at line %d replays with the tensor bound at capture and never sees this one; copy the new values into it (`%s.copy_(...)`)",
				what, name, p.File.Line(c.Node), p.File.Line(read), short(r.Node.Text(src)), p.File.Line(r.Node), name), nil)
		}
		// assignments reports the new tensors stmts bind to such a name
		// after from (a byte offset).
		seen := map[*Node]bool{}
		assignments := func(stmts []*Node, from int32) {
			for _, s := range stmts {
				Walk(s, func(n *Node) bool {
					switch n.Kind() {
					case "function_definition", "lambda", "class_definition":
						return false
					case "assignment":
						left, right := Unparen(n.Get("left")), Unparen(n.Get("right"))
						if !seen[n] && left != nil && left.Kind() == "identifier" && right != nil && n.Start > from &&
							(isTensorFactory(p.File, right) || tensorArithmetic(m, right)) {
							seen[n] = true
							rebind(n, left, "`"+short(n.Text(src))+"`")
						}
					}
					return true
				})
			}
		}
		assignments(r.Stmts, c.Node.End)
		// The loops around the replay that begin after the capture: what
		// their bodies bind after the replay reaches the next round's.
		for l := r.Node.Parent(); l != nil && l != p.Fn.Def; l = l.Parent() {
			if !l.Is("for_statement", "while_statement") || l.Start < c.Node.End {
				continue
			}
			if b := l.Get("body"); b != nil {
				assignments(b.NamedChildren(), r.Node.End)
			}
			if l.Kind() != "for_statement" {
				continue
			}
			t, it := Unparen(l.Get("left")), Unparen(l.Get("right"))
			if it != nil && it.Kind() == "call" && Unparen(it.Get("function")).Text(src) == "enumerate" {
				if a := positional(it.Get("arguments")); len(a) == 1 {
					it = Unparen(a[0])
					if t != nil && t.Is("pattern_list", "tuple_pattern") && len(t.NamedChildren()) == 2 {
						t = Unparen(t.NamedChildren()[1])
					} else {
						t = nil
					}
				}
			}
			if t != nil && t.Kind() == "identifier" && it != nil && m.Kind(it) == KTensor && !m.Dev(it).Host() {
				rebind(t, t, "the loop over `"+short(it.Text(src))+"`")
			}
		}
	}
}

// capturedLocals are the local names capture region c reads whose binding
// there was made before it (or is a parameter), each with its first read.
func capturedLocals(m *model, c *Region, src []byte) map[string]*Node {
	out := map[string]*Node{}
	for _, s := range c.Stmts {
		Walk(s, func(n *Node) bool {
			switch n.Kind() {
			case "function_definition", "lambda", "class_definition":
				return false
			case "identifier":
				par := n.Parent()
				if par == nil || par.Kind() == "assignment" && par.Get("left") == n || par.Kind() == "keyword_argument" && par.Get("name") == n ||
					par.Kind() == "attribute" && par.Get("attribute") == n || par.Kind() == "for_statement" && par.Get("left") == n {
					return false
				}
				name := n.Text(src)
				if _, seen := out[name]; seen {
					return false
				}
				if b := m.BindingOf(name, n); b != nil && (b.IsParam || b.End <= int(c.Node.Start)) {
					out[name] = n
				}
			}
			return true
		})
	}
	return out
}
