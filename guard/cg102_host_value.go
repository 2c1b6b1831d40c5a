package guard

import (
	"fmt"
	"strings"
)

var ruleHostValueBaked = register(&Rule{
	ID: "CG102", Name: "host-value-baked", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
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
	Run: func(p *Pass) {
		src := p.Src()
		m := newModel(p)
		hostNames := hostBindings{} // the assignments that bind a local to a host value
		for _, a := range assignmentsIn(bodyStmts(p.Fn), src) {
			if hostValue(p.File, a.value, nil, m) != "" {
				hostNames[a.name] = append(hostNames[a.name], a.stmt)
			}
		}
		reported := map[*Node]bool{}
		check := func(n *Node, where string) {
			if n == nil || reported[n] || m.kind(n) == KTensor && where != "an allocation shape" {
				// A tensor argument is no Python value baked at capture (a
				// host tensor given to a device op is CG103's); a tensor
				// given as a size (`torch.arange(0, n * st)`) is read on
				// the host and stays one.
				return
			}
			if why := hostValue(p.File, n, hostNames, m); why != "" {
				reported[n] = true
				msg := fmt.Sprintf("host value `%s` is baked into %s at capture (%s): every replay reuses it", short(n.Text(src)), where, why)
				if strings.HasSuffix(why, mirrorWhy) {
					// Only the name says it is a per-step host copy: a value
					// set once (a scale read at load) is the same at every
					// replay.
					p.ReportAssuming(n, msg, nil, "assumes "+strings.TrimSuffix(why, mirrorWhy)+", named as a CPU mirror, changes between replays")
				} else {
					p.Report(n, msg, nil)
				}
			}
		}
		p.Walk(func(n *Node) bool {
			switch n.Kind {
			case "call":
				callee := Unparen(n.Get("function"))
				args := n.Get("arguments")
				if args == nil || args.Kind != "argument_list" {
					return true
				}
				if k, ok := p.Proj.kernelName(p.File, n); ok {
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
				_, meth, _ := methodCall(n, src)
				if hostPredicate(q) {
					return true
				}
				if (len(q) > 6 && q[:6] == "torch.") || tensorMethods[meth] {
					where := "an argument of `" + short(callee.Text(src)) + "`"
					if allocators[q] || allocators["torch."+meth] {
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
})

var allocators = map[string]bool{
	"torch.empty": true, "torch.zeros": true, "torch.ones": true, "torch.full": true, "torch.arange": true,
	"torch.randn": true, "torch.rand": true, "torch.new_empty": true, "torch.new_zeros": true, "torch.new_full": true,
}

// tensorMethods take device-side work arguments that capture bakes.
var tensorMethods = map[string]bool{
	"clamp": true, "clamp_": true, "narrow": true, "view": true, "reshape": true, "expand": true, "repeat": true,
	"fill_": true, "new_empty": true, "new_zeros": true, "new_full": true, "new_ones": true, "split": true,
	"chunk": true, "topk": true, "roll": true, "masked_fill": true, "masked_fill_": true, "add": true, "add_": true,
	"mul": true, "mul_": true, "sub": true, "sub_": true, "div": true, "div_": true, "index_fill_": true,
	"unflatten": true, "select": true, "lt": true, "le": true, "gt": true, "ge": true, "eq": true,
}

// hostPredicate: torch's type and state predicates (`torch.is_tensor(v)`,
// `torch.is_floating_point(x)`, `torch.is_grad_enabled()`) run on the host and
// launch nothing, so a host value in their arguments is baked into nothing.
func hostPredicate(q string) bool {
	last := q[strings.LastIndexByte(q, '.')+1:]
	return strings.HasPrefix(q, "torch.") && strings.HasPrefix(last, "is_")
}

// hostBindings are, by local name, the statements that bind it to a host
// value.
type hostBindings map[string][]*Node

// at says whether the local name read at use holds a host value there: a
// binding comes before the read in the source, or both are in one loop, so
// that a later iteration reads what an earlier one bound. A read before
// any binding (`assert torch.is_tensor(v)` ahead of `v = v.item()`) still
// sees the parameter.
func (h hostBindings) at(name string, use *Node) bool {
	for _, b := range h[name] {
		if b.End <= use.Start {
			return true
		}
		for l := use.Parent; l != nil; l = l.Parent {
			if l.Kind == "function_definition" || l.Kind == "lambda" {
				break
			}
			if (l.Kind == "for_statement" || l.Kind == "while_statement") && l.Start <= b.Start && b.End <= l.End {
				return true
			}
		}
	}
	return false
}
