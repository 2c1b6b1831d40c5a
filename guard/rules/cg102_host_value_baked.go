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
	Doc: `## What it does
Follows Python values that come from tensor data or from a CPU mirror of it (` + "`int(x.max())`, `x.item()`" + `,
` + "`x.tolist()`" + `, names ending in ` + "`_cpu`" + ` or ` + "`_host`" + `) into a kernel launch argument or grid, a torch
operation's argument, an allocation shape, or a slice bound, in captured code. A local holds a host value
from the first statement that binds it to one (or, in a loop, from anywhere in the loop): a read of the
parameter before it is rebound is not one. A call to a project function (resolved, not guessed) that
returns such a value is one too (` + "`bound = longest(st)`" + ` where ` + "`longest`" + ` returns ` + "`int(st.lens_cpu.max())`" + `). So is a read of a memo
(a module global or an attribute) that the file fills with such a value (` + "`_MAX_LEN[t.data_ptr()] = int(t.max())`" + `):
under capture it returns what an earlier call read. Not host values: shapes, sizes, ` + "`numel()`" + ` and products of
them, config lookups by string key, numbers parsed from strings, a flag parameter with a literal default
(whatever its name), a keyword argument's name, and a tensor built on the host from Python numbers and
read back. torch's ` + "`is_*`" + ` predicates (` + "`torch.is_tensor(v)`" + `) launch
nothing, so their arguments bake nothing.

## Why it matters
Capture records the value the host computed once; every replay reuses it. When the batch changes, the
kernel runs with the old bound. Measured on an H200: a reader that clamped with
` + "`int(seq_lens_cpu.max())`" + ` diverged from eager in 2 of 5 replays at batch size 4.

## Example
` + "```python" + `
max_len = int(seq_lens_cpu.max())
sl = torch.clamp(seq_lens, max=max_len)       # CG102
out = torch.empty((bs, max_len), device=dev)  # CG102
` + "```" + `

## Fix
Pass device tensors and bound inside the kernel, or capture one graph per value (bucket) and choose the
graph by that value at replay. There is no automatic fix.`,
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
