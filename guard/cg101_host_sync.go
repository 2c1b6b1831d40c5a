package guard

import "fmt"

var ruleHostSync = register(&Rule{
	ID: "CG101", Name: "host-sync-in-capture", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "a host synchronization (`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, `torch.cuda.synchronize()`, `if tensor:`) in captured code",
	Doc: `## What it does
Finds operations that wait for the GPU and read a value back to the host in code that runs under
stream capture: ` + "`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, `torch.cuda.synchronize()`" + `, a stream or
event ` + "`.synchronize()`" + `, and a tensor used as a Python truth value (` + "`if mask.any():`" + `).

## Why it matters
A synchronization is not permitted while a stream is capturing: capture fails ("operation not permitted
when stream is capturing"), or, where the value was read during warm-up, the graph bakes that one value
into every replay. The same ` + "`.item()`" + ` in a training loop or eager preprocessing is fine, which is why
capguard reports it only where the code is captured.

## Example
` + "```python" + `
def decode_step(self, batch):
    max_len = batch.seq_lens.max().item()   # CG101
` + "```" + `

## Fix
Keep the value on the device (` + "`torch.amax`" + ` into a buffer the kernel reads), or compute it before capture
from data that is fixed for the graph (its batch size bucket). There is no automatic fix.`,
	Run: func(p *Pass) {
		src := p.Src()
		tensors := tensorLocals(p)
		p.Walk(func(n *Node) bool {
			switch n.Kind {
			case "call":
				recv, name, _ := methodCall(n, src)
				if recv != nil {
					switch {
					case hostReads[name]:
						p.Report(n, fmt.Sprintf("`.%s()` waits for the GPU and reads a tensor on the host in captured code: capture fails, or the value is frozen into every replay", name), nil)
						return true
					case name == "synchronize":
						p.Report(n, "`"+short(n.Text(src))+"` synchronizes while the stream is capturing: capture fails", nil)
						return true
					}
				}
				if q := p.File.Qualify(n.Get("function")); q == "torch.cuda.synchronize" {
					p.Report(n, "`torch.cuda.synchronize()` in captured code: capture fails (operation not permitted when stream is capturing)", nil)
				}
			case "if_statement", "while_statement", "elif_clause":
				cond := Unparen(n.Get("condition"))
				if cond != nil && truthOfTensor(p, cond, tensors) {
					p.Report(cond, "`"+short(cond.Text(src))+"` uses a tensor as a Python truth value in captured code: it synchronizes, and the branch taken at capture is replayed forever", nil)
				}
			}
			return true
		})
	},
})

// tensorLocals are names bound to tensor-making expressions in the pass's function.
func tensorLocals(p *Pass) map[string]bool {
	out := map[string]bool{}
	for _, a := range assignmentsIn(bodyStmts(p.Fn), p.Src()) {
		v := Unparen(a.value)
		if isTensorFactory(p.File, v) || isTensorPredicate(p, v) {
			out[a.name] = true
		} else {
			delete(out, a.name)
		}
	}
	return out
}

func isTensorPredicate(p *Pass, n *Node) bool {
	recv, name, _ := methodCall(n, p.Src())
	if recv != nil && (name == "any" || name == "all") {
		return true
	}
	if n.Kind == "call" {
		switch p.File.Qualify(n.Get("function")) {
		case "torch.any", "torch.all", "torch.equal", "torch.allclose", "torch.isin":
			return true
		}
	}
	return false
}

func truthOfTensor(p *Pass, cond *Node, tensors map[string]bool) bool {
	switch cond.Kind {
	case "identifier":
		return tensors[cond.Text(p.Src())]
	case "not_operator":
		return truthOfTensor(p, Unparen(cond.Get("argument")), tensors)
	case "call":
		return isTensorPredicate(p, cond)
	}
	return false
}
