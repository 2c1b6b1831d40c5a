package guard

var ruleDataDependentShape = register(&Rule{
	ID: "CG104", Name: "data-dependent-shape", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "an operation whose output shape depends on tensor data (`nonzero()`, one-argument `torch.where`, `masked_select`, boolean-mask indexing, `unique`, `repeat_interleave` without `output_size`) in captured code",
	Doc: `## What it does
Finds operations whose output size depends on tensor values: ` + "`nonzero()`, `torch.argwhere`" + `,
one-argument ` + "`torch.where(cond)`, `masked_select`" + `, indexing with a boolean mask, ` + "`unique`" + `,
` + "`unique_consecutive`" + `, and ` + "`repeat_interleave`" + ` with tensor repeats and no ` + "`output_size`" + `.

## Why it matters
The output size must be read back to the host to allocate the result: a synchronization that capture
forbids, or, if it succeeds during warm-up, a size frozen into the graph while the data changes.

## Example
` + "```python" + `
idx = torch.nonzero(mask)             # CG104
kept = logits[logits > threshold]     # CG104
` + "```" + `

## Fix
Use fixed-size forms: ` + "`torch.where(cond, a, b)`" + `, masks multiplied in, ` + "`repeat_interleave(..., output_size=N)`" + `
with N fixed per graph, or a top-k of fixed k. There is no automatic fix.`,
	Run: func(p *Pass) {
		src := p.Src()
		masks := map[string]bool{}
		for _, a := range assignmentsIn(bodyStmts(p.Fn), src) {
			masks[a.name] = isBoolMask(p, Unparen(a.value), nil)
		}
		p.Walk(func(n *Node) bool {
			switch n.Kind {
			case "call":
				q := p.File.Qualify(n.Get("function"))
				recv, name, args := methodCall(n, src)
				if recv == nil {
					args = n.Get("arguments")
					if len(q) > 6 && q[:6] == "torch." {
						name = q[6:]
					}
				}
				switch name {
				case "nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "nonzero_static":
					if name == "nonzero_static" {
						return true
					}
					p.Report(n, "`"+short(n.Text(src))+"` has a data-dependent output shape in captured code: it syncs to size its result", nil)
					return false
				case "where":
					if recv == nil && args != nil && len(positional(args)) == 1 {
						p.Report(n, "one-argument `torch.where` has a data-dependent output shape in captured code", nil)
						return false
					}
				case "repeat_interleave":
					if args == nil || keyword(args, "output_size", src) != nil {
						return true
					}
					pos := positional(args)
					rep := (*Node)(nil)
					if recv != nil && len(pos) >= 1 {
						rep = pos[0]
					} else if recv == nil && len(pos) >= 2 {
						rep = pos[1]
					}
					if rep == nil {
						rep = keyword(args, "repeats", src)
					}
					if rep != nil && Unparen(rep).Kind != "integer" {
						p.Report(n, "`repeat_interleave` with tensor repeats and no `output_size` has a data-dependent shape in captured code", nil)
						return false
					}
				}
			case "subscript":
				for _, s := range n.All("subscript") {
					if isBoolMask(p, Unparen(s), masks) {
						p.Report(n, "boolean-mask indexing `"+short(n.Text(src))+"` has a data-dependent output shape in captured code", nil)
						return false
					}
				}
			}
			return true
		})
	},
})

func isBoolMask(p *Pass, n *Node, masks map[string]bool) bool {
	if n == nil {
		return false
	}
	switch n.Kind {
	case "comparison_operator":
		// `x > 0` on tensors; `a is None` and `in` tests are not masks.
		for _, c := range n.Children {
			if !c.Named {
				switch c.Kind {
				case "is", "in", "not", "is not", "not in":
					return false
				}
			}
		}
		return true
	case "unary_operator":
		return n.Children[0].Kind == "~"
	case "identifier":
		return masks[n.Text(p.Src())]
	case "call":
		_, name, _ := methodCall(n, p.Src())
		return name == "isnan" || name == "isinf" || name == "logical_not" || name == "bool"
	}
	return false
}
