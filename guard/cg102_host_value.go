package guard

import "fmt"

var ruleHostValueBaked = register(&Rule{
	ID: "CG102", Name: "host-value-baked", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "a Python value read from tensor data or a CPU mirror flows into a launch argument, grid, allocation shape or slice bound in captured code",
	Doc: `## What it does
Follows Python values that come from tensor data or from a CPU mirror of it (` + "`int(x.max())`, `x.item()`" + `,
` + "`x.tolist()`" + `, names ending in ` + "`_cpu`" + ` or ` + "`_host`" + `) into a kernel launch argument or grid, a torch
operation's argument, an allocation shape, or a slice bound, in captured code.

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
		hostNames := map[string]bool{} // locals ever bound to a host value
		for _, a := range assignmentsIn(bodyStmts(p.Fn), src) {
			if hostValue(p.File, a.value, nil) != "" {
				hostNames[a.name] = true
			}
		}
		reported := map[*Node]bool{}
		check := func(n *Node, where string) {
			if n == nil || reported[n] {
				return
			}
			if why := hostValue(p.File, n, hostNames); why != "" {
				reported[n] = true
				p.Report(n, fmt.Sprintf("host value `%s` is baked into %s at capture (%s): every replay reuses it", short(n.Text(src)), where, why), nil)
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
