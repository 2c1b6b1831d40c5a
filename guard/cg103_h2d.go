package guard

import "strings"

var ruleH2DFromHost = register(&Rule{
	ID: "CG103", Name: "h2d-from-host-temporary", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "a host-to-device copy from a host temporary (`torch.tensor(...)`, `from_numpy`, `.cuda()`, `.to(device)` of host data, `pin_memory`) in captured code",
	Doc: `## What it does
Finds tensors made from host data in captured code: ` + "`torch.tensor(...)`, `torch.as_tensor(...)`" + `,
` + "`torch.from_numpy(...)`, `.pin_memory()`" + ` or ` + "`pin_memory=True`" + `, ` + "`.cuda()`" + `, and ` + "`.to(device)`" + ` of
host data (a CPU mirror, a list, a freshly built host tensor).

## Why it matters
Capture records a copy from the host address the temporary had at capture. The host tensor is freed
after the call; each replay copies whatever is at that address now. Measured on an H200:
` + "`torch.tensor(lst, pin_memory=True).to(dev, non_blocking=True)`" + ` during capture diverged in 5 of 5
replays at every batch size.

## Example
` + "```python" + `
sl = torch.tensor(seq_lens_list, dtype=torch.int32, pin_memory=True).to(dev, non_blocking=True)  # CG103
` + "```" + `

## Fix
Keep a persistent pinned host buffer and a persistent device buffer; in replay-prep fill the host buffer
and ` + "`copy_`" + ` it into the device buffer outside the graph (or into a static input the graph reads).
There is no automatic fix.`,
	Run: func(p *Pass) {
		src := p.Src()
		p.Walk(func(n *Node) bool {
			if n.Kind != "call" {
				return true
			}
			q := p.File.Qualify(n.Get("function"))
			recv, name, args := methodCall(n, src)
			switch {
			case name == "to" && recv != nil && movesToDevice(p.File, args) && hostish(p, recv):
				p.Report(n, "`"+short(n.Text(src))+"` copies a host temporary to the device in captured code: replays copy from a freed host address", nil)
				return false
			case name == "cuda" && recv != nil:
				p.Report(n, "`.cuda()` copies host data to the device in captured code: replays copy from a freed host address", nil)
				return false
			case name == "pin_memory" && recv != nil:
				p.Report(n, "`.pin_memory()` makes a host temporary in captured code: a captured copy from it replays a freed host address", nil)
				return false
			case hostBuilders[q]:
				p.Report(n, "`"+q+"(...)` builds a tensor from host data in captured code: the captured copy replays from a freed host address", nil)
				return false
			}
			if pm := keyword(n.Get("arguments"), "pin_memory", src); pm != nil && pm.Text(src) == "True" {
				p.Report(n, "`pin_memory=True` makes a host temporary in captured code: a captured copy from it replays a freed host address", nil)
				return false
			}
			return true
		})
	},
})

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
	case a.Kind == "string":
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
	switch n.Kind {
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
