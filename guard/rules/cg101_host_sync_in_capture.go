package rules

import (
	"fmt"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/tensors"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

var ruleHostSync = &analysis.Rule{
	ID: "CG101", Name: "host-sync-in-capture", Severity: analysis.SeverityError,
	Contexts: []analysis.Context{analysis.Captured, analysis.Claimed, analysis.Launcher},
	Summary:  "a host synchronization (`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, `int(t)`, `torch.equal`, `torch.cuda.synchronize()`, `if tensor:`) in captured code",
	Doc:      doc("cg101_host_sync_in_capture.md"),
	Run:      runHostSync,
}

func runHostSync(p *analysis.Pass) {
	src := p.Src()
	m := tensors.NewModel(p)
	// onDevice: a tensor expression that may live on the GPU (a CPU
	// tensor's host read synchronizes nothing).
	onDevice := func(n *analysis.Node) bool {
		k := m.Kind(n)
		return (k == tensors.KTensor || k == tensors.KUnknown) && !m.Dev(n).Host()
	}
	truth := func(cond *analysis.Node) {
		for _, c := range truthOperands(analysis.Unparen(cond)) {
			if m.Kind(c) == tensors.KTensor && !m.Dev(c).Host() {
				p.Report(c, "`"+analysis.Short(c.Text(src))+"` uses a device tensor as a Python truth value in captured code: it synchronizes (capture fails), or the branch taken at capture is replayed forever", nil)
			}
		}
	}
	p.Walk(func(n *analysis.Node) bool {
		switch n.Kind {
		case "call":
			recv, name, _ := tensors.MethodCall(n, src)
			if recv != nil {
				switch {
				case torchapi.HostReads[name]:
					if onDevice(recv) {
						p.Report(n, fmt.Sprintf("`.%s()` waits for the GPU and reads a tensor on the host in captured code: capture fails, or the value is frozen into every replay", name), nil)
					}
					return true
				case name == "synchronize":
					p.Report(n, "`"+analysis.Short(n.Text(src))+"` synchronizes while the stream is capturing: capture fails", nil)
					return true
				}
			}
			callee := analysis.Unparen(n.Get("function"))
			switch q := p.File.Qualify(callee); q {
			case "torch.cuda.synchronize":
				p.Report(n, "`torch.cuda.synchronize()` in captured code: capture fails (operation not permitted when stream is capturing)", nil)
				return true
			case "torch.equal", "torch.allclose", "torch.is_nonzero":
				for _, a := range tensors.Positional(n.Get("arguments")) {
					if m.Kind(a) != tensors.KMeta && !m.Dev(a).Host() && m.Kind(a) != tensors.KHostData {
						p.Report(n, "`"+analysis.Short(n.Text(src))+"` compares tensors into a Python bool on the host in captured code: it synchronizes, and capture fails", nil)
						return true
					}
				}
			}
			if callee != nil && callee.Kind == "identifier" && !m.Bound(callee.Text(src)) {
				switch fname := callee.Text(src); fname {
				case "int", "float", "bool":
					args := tensors.Positional(n.Get("arguments"))
					if len(args) == 1 && m.Kind(args[0]) == tensors.KTensor && !m.Dev(args[0]).Host() {
						p.Report(n, fmt.Sprintf("`%s` reads a device tensor's value on the host in captured code: it synchronizes (capture fails), or the value is frozen into every replay", analysis.Short(n.Text(src))), nil)
						return true
					}
				}
			}
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
func truthOperands(c *analysis.Node) []*analysis.Node {
	if c == nil {
		return nil
	}
	switch c.Kind {
	case "not_operator":
		return truthOperands(analysis.Unparen(c.Get("argument")))
	case "boolean_operator":
		return append(truthOperands(analysis.Unparen(c.Get("left"))), truthOperands(analysis.Unparen(c.Get("right")))...)
	}
	return []*analysis.Node{c}
}
