package rules

import (
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/tensors"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

var ruleHostValueBaked = &analysis.Rule{
	ID: "CG102", Name: "host-value-baked", Severity: analysis.SeverityError,
	Contexts: []analysis.Context{analysis.Captured, analysis.Claimed, analysis.Launcher},
	Summary:  "a Python value read from tensor data or a CPU mirror flows into a launch argument, grid, allocation shape or slice bound in captured code",
	Doc:      doc("cg102_host_value_baked.md"),
	Run: func(p *analysis.Pass) {
		src := p.Src()
		m := tensors.NewModel(p)
		hostNames := tensors.HostBindings{} // the assignments that bind a local to a host value
		for _, a := range tensors.AssignmentsIn(analysis.BodyStmts(p.Fn), src) {
			if tensors.HostValue(p.File, a.Value, nil, m) != "" {
				hostNames[a.Name] = append(hostNames[a.Name], a.Stmt)
			}
		}
		reported := map[*analysis.Node]bool{}
		check := func(n *analysis.Node, where string) {
			if n == nil || reported[n] || m.Kind(n) == tensors.KTensor && where != "an allocation shape" {
				// A tensor argument is no Python value baked at capture (a
				// host tensor given to a device op is CG103's); a tensor
				// given as a size (`torch.arange(0, n * st)`) is read on
				// the host and stays one.
				return
			}
			if why := tensors.HostValue(p.File, n, hostNames, m); why != "" {
				reported[n] = true
				p.Report(n, fmt.Sprintf("host value `%s` is baked into %s at capture (%s): every replay reuses it", analysis.Short(n.Text(src)), where, why), nil)
			}
		}
		p.Walk(func(n *analysis.Node) bool {
			switch n.Kind {
			case "call":
				callee := analysis.Unparen(n.Get("function"))
				args := n.Get("arguments")
				if args == nil || args.Kind != "argument_list" {
					return true
				}
				if k, ok := p.Proj.KernelName(p.File, n); ok {
					if callee.Kind == "subscript" {
						for _, g := range callee.All("subscript") {
							check(g, "the launch grid of `"+k+"`")
						}
					}
					for _, a := range args.NamedChildren() {
						if a.Kind == "keyword_argument" {
							a = a.Get("value")
						}
						check(a, "an argument of kernel `"+k+"`")
					}
					return true
				}
				q := p.File.Qualify(callee)
				_, meth, _ := tensors.MethodCall(n, src)
				if hostPredicate(q) {
					return true
				}
				if (len(q) > 6 && q[:6] == "torch.") || torchapi.TensorMethods[meth] {
					where := "an argument of `" + analysis.Short(callee.Text(src)) + "`"
					if torchapi.Allocators[q] || torchapi.Allocators["torch."+meth] {
						where = "an allocation shape"
					}
					for _, a := range args.NamedChildren() {
						if a.Kind == "keyword_argument" {
							if nm := a.Get("name").Text(src); nm == "device" || nm == "dtype" {
								continue
							}
							a = a.Get("value")
						}
						check(a, where)
					}
				}
			case "slice":
				for _, b := range n.NamedChildren() {
					check(b, "a slice bound")
				}
			}
			return true
		})
	},
}

// hostPredicate: torch's type and state predicates (`torch.is_tensor(v)`,
// `torch.is_floating_point(x)`, `torch.is_grad_enabled()`) run on the host and
// launch nothing, so a host value in their arguments is baked into nothing.
func hostPredicate(q string) bool {
	last := q[strings.LastIndexByte(q, '.')+1:]
	return strings.HasPrefix(q, "torch.") && strings.HasPrefix(last, "is_")
}
