package rules

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

var ruleH2DFromHost = &Rule{
	ID: "CG103", Name: "h2d-from-host-temporary", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "a host-to-device copy from a host temporary (`torch.tensor(...)`, `from_numpy`, `.cuda()`, `.to(device)` of host data, `pin_memory`) in captured code",
	Doc:      doc("cg103_h2d_from_host_temporary.md"),
	Run:      runH2D,
}

// runH2D reports copies of host data to the device. It reasons about where
// data lives only: a tensor built without a device on a CPU default
// device is a host tensor, and making one copies nothing; moving it (or a
// list, a NumPy array, a pinned buffer) to the device is the copy.
func runH2D(p *Pass) {
	src := p.Src()
	m := newModel(p)
	host := func(n *Node) bool {
		if emptyHost(p, n) {
			return false // no element: nothing to copy (probe cg103_empty_move_neg)
		}
		if kept, _ := keptPinned(p, m, src, n); kept {
			return false // a pinned buffer the program keeps and refreshes elsewhere (probe cg103_kept_pinned_neg)
		}
		switch m.Kind(n) {
		case KHostData, KHostRead:
			return true
		}
		return m.Dev(n).Host() || hostish(p, n)
	}
	isKept := func(n *Node) bool {
		kept, _ := keptPinned(p, m, src, n)
		return kept
	}
	// consequence says what the GPU does with a copy from src (nil: host
	// data that is not a tensor): a pinned source replays from a freed
	// address, a pageable one fails capture.
	// failing says the copy's only outcome is a failed capture
	// (ReportCaptureError): Python data goes through a pageable staging
	// tensor, and a host tensor a module-level name keeps is no temporary
	// (pageable, the capture fails; pinned, each replay copies what it
	// holds then).
	consequence := func(from *Node) (why string, failing bool) {
		if from != nil {
			if _, w := keptPinned(p, m, src, from); w != "" {
				return "`" + short(w) + "` is written on the host in the same function, which under capture runs once: every replay copies what that write left", false
			}
		}
		if from != nil && m.Dev(from) == DevPinned {
			return "replays copy from a freed host address", false
		}
		if from != nil && m.Dev(from) == DevCPU {
			if kept, _ := keptBuffer(p, m, src, from, true); kept {
				return "capture fails (torch copies from pageable host memory only outside capture; a pinned tensor the module keeps would replay what it holds then)", true
			}
		}
		return "capture fails (torch copies from pageable host memory only outside capture); from a pinned temporary, replays would copy from a freed host address", from == nil
	}
	report := func(n *Node, msg string, from *Node) {
		why, failing := consequence(from)
		if failing {
			p.ReportCaptureError(n, msg+why, nil)
		} else {
			p.Report(n, msg+why, nil)
		}
	}
	p.Walk(func(n *Node) bool {
		if n.Kind() != "call" {
			return true
		}
		q := p.File.Qualify(n.Get("function"))
		recv, name, args := methodCall(n, src)
		switch {
		case name == "to" && recv != nil && movesToDevice(p.File, args) && !m.Dev(n).Host() && host(recv):
			report(n, "`"+short(n.Text(src))+"` copies host memory to the device in captured code: ", recv)
			return false
		case name == "cuda" && recv != nil && host(recv):
			report(n, "`.cuda()` copies host data to the device in captured code: ", recv)
			return false
		case name == "copy_" && recv != nil && !m.Dev(recv).Host() && m.Kind(recv) != KHostData:
			if a := positional(args); len(a) > 0 && (m.Dev(a[0]).Host() || m.Kind(a[0]) == KHostData) && !isKept(a[0]) {
				report(n, "`"+short(n.Text(src))+"` copies host memory into a device tensor in captured code: ", a[0])
				return false
			}
		case name == "new_tensor" && recv != nil && !m.Dev(recv).Host():
			report(n, "`"+short(n.Text(src))+"` builds a device tensor from host data in captured code: ", nil)
			return false
		case hostBuilders[q] && q != "torch.from_numpy":
			if a := positional(args); len(a) > 0 && m.Kind(a[0]) == KTensor && keyword(args, "device", src) == nil {
				return true // torch.as_tensor(t) of a tensor: no copy
			}
			if a := positional(args); len(a) > 0 && emptyLiteral(a[0]) {
				return true // `torch.tensor([], device=...)`: no element, nothing copied (probe cg103_empty_literal_neg)
			}
			sized := ""
			if _, legacy := legacyCtors[q]; legacy {
				switch sizes(m, args) {
				case isSize:
					return true // `torch.cuda.FloatTensor(n, k)`: allocates, copies nothing
				case maybeSize:
					sized = "`" + short(positional(args)[0].Text(src)) + "` is data (a list, a tuple, an array), not a size: given a size, `" + q + "` only allocates"
				}
			}
			if d := m.FactoryDevice(n); !d.Host() {
				c, _ := consequence(nil)
				pinned := false
				if pm := keyword(args, "pin_memory", src); pm != nil && pm.Text(src) == "True" {
					c = "replays copy from a freed host address"
					pinned = true
				}
				msg := "`" + q + "(...)` builds a device tensor from host data in captured code: " + c
				switch {
				case sized != "":
					p.ReportAssuming(n, msg, nil, "assumes "+sized)
				case pinned:
					p.Report(n, msg, nil)
				default:
					// Python data goes through a pageable staging tensor:
					// the capture fails (probe cg103_device_literal_pos).
					p.ReportCaptureError(n, msg, nil)
				}
				return false
			}
		}
		return true
	})
}

// keptPinned: n is a pinned tensor the program keeps past the call, an
// attribute or a module-level name (or an element, slice or view of one:
// `self.host[i]`, `Cls.out_cpu[:n]`), or a local bound to one. Capture
// records a copy from its address, which stays the buffer's: each replay
// copies what the buffer holds then, as a copy from a static input does
// (probe cg103_kept_pinned_neg). Only a temporary's address is freed after
// the call (probe cg103_pinned_h2d_pos). written is the buffer's name where
// the function itself writes it on the host (`pin[:5] = ...`,
// `pin.copy_(...)`): in captured code that write runs once, at capture,
// and every replay copies what it left.
func keptPinned(p *Pass, m *model, src []byte, n *Node) (kept bool, written string) {
	if m.Dev(n) != DevPinned {
		return false, ""
	}
	return keptBuffer(p, m, src, n, false)
}

// keptBuffer: n is a tensor the program keeps past the call, whatever its
// memory (keptPinned), and the function does not write it on the host;
// written as keptPinned's. moduleOnly takes only a module-level name (or
// an element, slice or view of one, or a local bound to one): an
// attribute may be bound to a new temporary on every call.
func keptBuffer(p *Pass, m *model, src []byte, n *Node, moduleOnly bool) (kept bool, written string) {
	var names []string
	for i := 0; i < 8 && !kept; i++ {
		n = Unparen(n)
		switch {
		case n == nil:
			return false, ""
		case n.Kind() == "subscript":
			n = n.Get("value")
		case n.Kind() == "call":
			recv, name, _ := methodCall(n, src)
			if recv == nil || !viewMethods[name] {
				return false, ""
			}
			n = recv
		case n.Kind() == "attribute":
			if moduleOnly {
				return false, ""
			}
			names = append(names, n.Text(src))
			kept = true
		case n.Kind() == "identifier":
			names = append(names, n.Text(src))
			b := m.BindingOf(n.Text(src), n)
			if b == nil {
				kept = !m.Bound(n.Text(src)) // a module-level name
				if kept && moduleOnly && !moduleName(p.Fn, n.Text(src)) {
					return false, "" // an enclosing function's local: bound anew on each of its calls
				}
				continue
			}
			if b.IsParam || b.Value == nil || b.Unpack {
				return false, ""
			}
			n = b.Value
		default:
			return false, ""
		}
	}
	if !kept || p.Fn == nil {
		return kept, ""
	}
	// The buffer a target or an in-place call's receiver writes: its
	// name, through subscripts and views.
	buffer := func(t *Node) string {
		for i := 0; i < 8; i++ {
			t = Unparen(t)
			if t == nil {
				return ""
			}
			if t.Kind() == "subscript" {
				t = t.Get("value")
				continue
			}
			if recv, name, _ := methodCall(t, src); recv != nil && viewMethods[name] {
				t = recv
				continue
			}
			return t.Text(src)
		}
		return ""
	}
	named := func(t string) bool {
		for _, x := range names {
			if x == t {
				return true
			}
		}
		return false
	}
	walkCode(p.Fn.BodyStmts(), func(x *Node) bool {
		if written != "" {
			return false
		}
		switch x.Kind() {
		case "assignment", "augmented_assignment":
			if l := Unparen(x.Get("left")); l != nil && l.Kind() == "subscript" && named(buffer(l)) {
				written = buffer(l)
			}
		case "call":
			if recv, name, _ := methodCall(x, src); recv != nil && strings.HasSuffix(name, "_") && !strings.HasPrefix(name, "_") && named(buffer(recv)) {
				written = buffer(recv)
			}
		}
		return true
	})
	return written == "", written
}

// moduleName: name, read in fn, is a module-level name of fn's file, not
// a local of a function fn is nested in.
func moduleName(fn *Function, name string) bool {
	if fn == nil {
		return false
	}
	for o := fn.Outer; o != nil; o = o.Outer {
		if o.Kind != index.TopLevel && o.Locals[name] {
			return false
		}
	}
	return fn.File.Top.Locals[name]
}

// sizeArgs says whether a legacy constructor's arguments are sizes.
type sizeArgs uint8

const (
	notSize   sizeArgs = iota // data: a list, a tuple, an array, a host read
	isSize                    // sizes: it allocates
	maybeSize                 // one argument the value model cannot tell
)

// sizes: torch's legacy constructors (`torch.cuda.FloatTensor(...)`) take
// either sizes or one piece of data. Two or more positional arguments
// are sizes; so is one the value model knows as a number or a shape
// (metadata: `num_features` from an int, `x.shape`, `x.size()`, which the
// constructor reads as sizes too); a list, a tuple, an array or a value
// read from a tensor is data.
func sizes(m *model, args *Node) sizeArgs {
	pos := positional(args)
	switch {
	case len(pos) >= 2:
		return isSize
	case len(pos) == 0:
		return notSize
	}
	a := Unparen(pos[0])
	if a.Is("list", "tuple", "list_comprehension", "generator_expression", "dictionary", "set") {
		return notSize
	}
	switch m.Kind(a) {
	case KMeta:
		return isSize
	case KHostData, KHostRead, KTensor:
		return notSize
	}
	return maybeSize
}

// emptyHost: n builds a host tensor with no element (`torch.Tensor()`,
// `torch.tensor([])`, `torch.LongTensor(())`): moving it copies no bytes,
// so capture goes on (probe cg103_empty_move_neg).
func emptyHost(p *Pass, n *Node) bool {
	n = Unparen(n)
	if n == nil || n.Kind() != "call" || !hostBuilders[p.File.Qualify(n.Get("function"))] {
		return false
	}
	args := n.Get("arguments")
	if args == nil {
		return false
	}
	pos := positional(args)
	return len(pos) == 0 && len(args.NamedChildren()) == 0 || len(pos) == 1 && emptyLiteral(pos[0])
}

// emptyLiteral: `[]`, `()` or a list or tuple of only such (`[[]]`): a
// literal with no element, whose tensor holds no host data to copy.
func emptyLiteral(n *Node) bool {
	n = Unparen(n)
	if n == nil || !n.Is("list", "tuple") {
		return false
	}
	for _, c := range n.NamedChildren() {
		if c.Kind() == "comment" {
			continue
		}
		if !emptyLiteral(c) {
			return false
		}
	}
	return true
}

// movesToDevice: `.to(dev)`, `.to("cuda")`, `.to(device=...)`, `.to(x.device)`.
func movesToDevice(f *File, args *Node) bool {
	if args == nil {
		return false
	}
	if keyword(args, "device", f.Src) != nil {
		return true
	}
	pos := positional(args)
	if len(pos) == 0 {
		return false
	}
	a := Unparen(pos[0])
	t := strings.ToLower(a.Text(f.Src))
	switch {
	case a.Kind() == "string":
		return strings.Contains(t, "cuda")
	case isDtype(f, a):
		return false
	case strings.Contains(t, "dev") || strings.Contains(t, "cuda"):
		return true
	}
	return false
}

// hostish reports whether an expression is host data: a CPU mirror, a
// tensor built from Python data, a list, `.cpu()` or `.pin_memory()`.
func hostish(p *Pass, n *Node) bool {
	src := p.Src()
	n = Unparen(n)
	switch n.Kind() {
	case "list", "list_comprehension", "tuple":
		return true
	case "identifier", "attribute":
		t := n.Text(src)
		return cpuMirror(t) || strings.HasSuffix(t, "_np") || strings.HasSuffix(t, "_list")
	case "call":
		q := p.File.Qualify(n.Get("function"))
		if hostBuilders[q] {
			return true
		}
		recv, name, _ := methodCall(n, src)
		if name == "cpu" || name == "pin_memory" || name == "numpy" {
			return true
		}
		if recv != nil {
			return hostish(p, recv)
		}
	}
	return false
}
