package rules

import (
	"fmt"

	"github.com/cudagraph-capguard/capguard/guard/tensors"
)

var ruleHostSync = &Rule{
	ID: "CG101", Name: "host-sync-in-capture", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "a host synchronization (`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, `int(t)`, `torch.equal`, `torch.cuda.synchronize()`, `if tensor:`, `tok in [2, 7]`, a tensor as a slice bound) in captured code",
	Doc:      doc("cg101_host_sync_in_capture.md"),
	Run:      runHostSync,
}

func runHostSync(p *Pass) {
	src := p.Src()
	m := newModel(p)
	// onDevice: a tensor expression that may live on the GPU (a CPU
	// tensor's host read synchronizes nothing).
	onDevice := func(n *Node) bool {
		k := m.Kind(n)
		return (k == KTensor || k == KUnknown) && !m.Dev(n).Host()
	}
	truth := func(cond *Node) {
		for _, c := range truthOperands(Unparen(cond)) {
			if m.Kind(c) == KTensor && !m.Dev(c).Host() && !p.Skipped(c) {
				p.ReportCaptureError(c, "`"+short(c.Text(src))+"` uses a device tensor as a Python truth value in captured code: it synchronizes (capture fails), or the branch taken at capture is replayed forever", nil)
			}
		}
	}
	// index: t where Python needs an int (a slice bound, range(t), a
	// repeat count) calls its __index__, a host read like int(t).
	index := func(t *Node, where string) {
		if t != nil && m.Kind(t) == KTensor && !m.Dev(t).Host() {
			p.ReportCaptureError(t, fmt.Sprintf("`%s` is a device tensor used as %s: Python reads its value on the host (`__index__`) in captured code: it synchronizes (capture fails), or the value is frozen into every replay", short(t.Text(src)), where), nil)
		}
	}
	// membership: `x in c` where c is a device tensor, or a list or
	// tuple compared with a device tensor by `==` (tensors.Membership).
	membership := func(n *Node) {
		ops := n.Children()
		for i, op := range ops {
			if op.Named() || op.Kind() != "in" && op.Kind() != "not in" || i == 0 || i+1 >= len(ops) {
				continue
			}
			how, t := m.Membership(ops[i-1], ops[i+1])
			if how == tensors.MemberNone || t == nil || m.Dev(t).Host() || p.Skipped(n) {
				continue
			}
			test := short(n.Text(src))
			switch how {
			case tensors.MemberContains:
				p.ReportCaptureError(n, fmt.Sprintf("`%s` tests membership in the device tensor `%s`: `Tensor.__contains__` reads `(t == x).any()` on the host in captured code: it synchronizes (capture fails), or the answer is frozen into every replay", test, short(t.Text(src))), nil)
			case tensors.MemberEquals:
				p.ReportCaptureError(n, fmt.Sprintf("`%s` compares the device tensor `%s` with a list's or tuple's elements by `==` and reads each answer's truth on the host in captured code: it synchronizes (capture fails), or the answer is frozen into every replay (a set's `in` hashes and reads nothing)", test, short(t.Text(src))), nil)
			case tensors.MemberEqualsUnlessSame:
				p.ReportCaptureErrorFrom(n, nil, fmt.Sprintf("`%s` compares the device tensor `%s` with a list's or tuple's tensors by `==` and reads each answer's truth on the host in captured code: it synchronizes (capture fails), or the answer is frozen into every replay (a set's `in` hashes and reads nothing)", test, short(t.Text(src))), nil,
					fmt.Sprintf("assumes `%s` is not itself the first element the test meets: the `in` of a list or tuple tries identity before `==`, and only the same object met first skips every comparison", short(t.Text(src))))
			}
			return
		}
	}
	p.Walk(func(n *Node) bool {
		switch n.Kind() {
		case "call":
			recv, name, _ := methodCall(n, src)
			if recv != nil {
				switch {
				case hostReads[name]:
					if onDevice(recv) {
						p.ReportCaptureError(n, fmt.Sprintf("`.%s()` waits for the GPU and reads a tensor on the host in captured code: capture fails, or the value is frozen into every replay", name), nil)
					}
					return true
				case name == "synchronize":
					p.ReportCaptureError(n, "`"+short(n.Text(src))+"` synchronizes while the stream is capturing: capture fails", nil)
					return true
				}
			}
			callee := Unparen(n.Get("function"))
			switch q := p.File.Qualify(callee); q {
			case "torch.cuda.synchronize":
				p.ReportCaptureError(n, "`torch.cuda.synchronize()` in captured code: capture fails (operation not permitted when stream is capturing)", nil)
				return true
			case "torch.equal", "torch.allclose", "torch.is_nonzero":
				for _, a := range positional(n.Get("arguments")) {
					if m.Kind(a) != KMeta && !m.Dev(a).Host() && m.Kind(a) != KHostData {
						p.ReportCaptureError(n, "`"+short(n.Text(src))+"` compares tensors into a Python bool on the host in captured code: it synchronizes, and capture fails", nil)
						return true
					}
				}
			}
			if callee != nil && callee.Kind() == "identifier" && !m.Bound(callee.Text(src)) {
				switch fname := callee.Text(src); fname {
				case "range":
					for _, a := range positional(n.Get("arguments")) {
						index(a, "a bound of `range`")
					}
				case "int", "float", "bool":
					args := positional(n.Get("arguments"))
					if len(args) == 1 && m.Kind(args[0]) == KTensor && !m.Dev(args[0]).Host() {
						p.ReportCaptureError(n, fmt.Sprintf("`%s` reads a device tensor's value on the host in captured code: it synchronizes (capture fails), or the value is frozen into every replay", short(n.Text(src))), nil)
						return true
					}
				}
			}
		case "slice":
			// x[:t]: Python turns a slice bound into an int with
			// __index__, which reads a tensor's value on the host.
			for _, b := range n.NamedChildren() {
				index(b, "a slice bound")
			}
		case "binary_operator":
			// [False] * t: a sequence repeated a tensor's value times.
			if op := n.Get("operator"); op != nil && op.Text(src) == "*" {
				l, r := Unparen(n.Get("left")), Unparen(n.Get("right"))
				if l != nil && l.Is("list", "tuple", "string") {
					index(r, "a repeat count")
				} else if r != nil && r.Is("list", "tuple", "string") {
					index(l, "a repeat count")
				}
			}
		case "comparison_operator":
			membership(n)
		case "if_statement", "while_statement", "elif_clause":
			truth(n.Get("condition"))
		case "assert_statement":
			if c := n.NamedChildren(); len(c) > 0 {
				truth(c[0])
			}
		case "conditional_expression":
			if c := n.NamedChildren(); len(c) == 3 {
				truth(c[1])
			}
		}
		return true
	})
}

// truthOperands are the expressions whose truth value a condition reads:
// the condition itself, or the operands of not / and / or.
func truthOperands(c *Node) []*Node {
	if c == nil {
		return nil
	}
	switch c.Kind() {
	case "not_operator":
		return truthOperands(Unparen(c.Get("argument")))
	case "boolean_operator":
		return append(truthOperands(Unparen(c.Get("left"))), truthOperands(Unparen(c.Get("right")))...)
	}
	return []*Node{c}
}
