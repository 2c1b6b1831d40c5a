package guard

import (
	"fmt"
	"strings"
)

var ruleRebindInsteadOfCopy = register(&Rule{
	ID: "CG201", Name: "rebind-instead-of-copy", Severity: SeverityError, Fix: "sometimes",
	Contexts: []Context{ReplayPrep, PostCapture},
	Summary:  "code that runs after capture binds a new tensor to state that captured code reads",
	Doc: `## What it does
In code that runs between replays (replay-prep: the statements before a ` + "`.replay()`" + ` and what they
call, configured ` + "`replay-prep`" + ` functions, framework presets, weight reloads), finds an assignment that
binds a NEW tensor (a conversion, a factory, ` + "`torch.cat`" + `...) to an attribute that captured code reads
(` + "`meta.page_table = pt.to(torch.int32)`, `self.w = self.w.contiguous()`, `layer.weight.data = ...`" + `).

## Why it matters
The graph captured the address of the tensor the attribute held at capture. Rebinding the attribute
changes what Python sees, not what the graph reads: the replay reads the old tensor (stale data), or,
when the old tensor was freed, memory that now belongs to someone else. Measured on an H200: a
replay-prep path rebinding ` + "`meta.x = x.to(torch.int32)`" + ` made replays fault (CUDA error 717) or read stale data.

## Example
` + "```python" + `
def init_forward_metadata_replay_cuda_graph(self, bs, req_pool_indices, seq_lens):
    self.page_table = self.req_to_page[req_pool_indices].to(torch.int32)   # CG201
` + "```" + `

## Fix
Copy into the tensor the graph captured: ` + "`self.page_table[: src.shape[0]].copy_(src)`" + ` (copy_ converts
the dtype). capguard offers this where the attribute is known to hold a preallocated buffer (it is
assigned an allocation or a view of one elsewhere in the project). Otherwise it offers an unsafe fix that
binds a persistent buffer under a stable key, correct only when the same code also ran before capture.
For ` + "`.data`" + ` rebinding it offers ` + "`weight.data.copy_(new)`" + ` (unsafe: shapes must match).`,
	Run: runRebind,
})

func runRebind(p *Pass) {
	src := p.Src()
	read := p.a.capturedAttrs()
	p.Walk(func(n *Node) bool {
		if n.Kind != "assignment" {
			return true
		}
		left, right := n.Get("left"), Unparen(n.Get("right"))
		if left == nil || right == nil || left.Kind != "attribute" || !isTensorFactory(p.File, right) {
			return true
		}
		attr := left.Get("attribute").Text(src)
		obj := left.Get("object")
		t := tempOf(p.File, right)
		selfRebind := t != nil && Unparen(t.Source).Text(src) == left.Text(src)
		if !read[attr] && attr != "data" && !selfRebind {
			return true
		}
		msg := fmt.Sprintf("`%s` binds a new tensor to `%s`, which captured code reads: the graph keeps reading the tensor it captured", short(n.Text(src)), left.Text(src))
		var fix *Fix
		source := right
		if t != nil {
			source = t.Source
		}
		switch {
		case selfRebind:
			msg += "; convert it once at load time, before capture"
		case attr == "data":
			fix = &Fix{Message: "copy the new values into the captured tensor with copy_ (unsafe: shapes must match)",
				Applicability: Unsafe, Edits: []TextEdit{{Start: n.Start, End: n.End,
					NewText: fmt.Sprintf("%s.copy_(%s)", left.Text(src), source.Text(src))}}}
		case p.a.knownBuffer(attr):
			fix = copyIntoFix(p, n, left, source)
		case t != nil:
			site := siteKey(p.File, p.Fn, strings.ReplaceAll(short(obj.Text(src)), ".", "_")+"."+attr)
			fix = tempFix(t, site, Unsafe, src)
			fix.Message = "bind a persistent buffer filled with copy_ under a stable key (unsafe: correct only when this code also ran before capture, so the graph captured the same buffer)"
		}
		p.Report(n, msg, fix)
		return false
	})
}

// copyIntoFix rewrites `obj.attr = expr` as a prefix copy into the tensor
// the attribute already holds.
func copyIntoFix(p *Pass, assign, left, source *Node) *Fix {
	src := p.Src()
	dst := left.Text(src)
	s := source.Text(src)
	var text string
	if source.Is("identifier", "attribute") && simpleExpr(source) {
		text = fmt.Sprintf("%s[: %s.shape[0]].copy_(%s)", dst, s, s)
	} else {
		tmp := "new_" + left.Get("attribute").Text(src)
		indent := lineIndent(src, assign.Start)
		text = fmt.Sprintf("%s = %s\n%s%s[: %s.shape[0]].copy_(%s)", tmp, s, indent, dst, tmp, tmp)
	}
	return &Fix{
		Message:       "copy into the tensor the graph captured (its first rows; copy_ converts the dtype) instead of rebinding it",
		Applicability: Safe,
		Edits:         []TextEdit{{Start: assign.Start, End: assign.End, NewText: text}},
	}
}

// simpleExpr: a name, an attribute chain or a subscript of one, no calls.
func simpleExpr(n *Node) bool {
	ok := true
	Walk(n, func(x *Node) bool {
		if x.Kind == "call" || x.Kind == "await" || x.Kind == "lambda" || strings.Contains(x.Kind, "comprehension") {
			ok = false
		}
		return ok
	})
	return ok
}

// lineIndent is the leading whitespace of the line holding offset off.
func lineIndent(src []byte, off int) string {
	start := lineStartOf(src, off)
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// capturedAttrs is the set of attribute names read by captured code.
func (a *analysis) capturedAttrs() map[string]bool {
	if a.attrsRead != nil {
		return a.attrsRead
	}
	a.attrsRead = map[string]bool{}
	collect := func(f *File, stmts []*Node) {
		for _, s := range stmts {
			Walk(s, func(n *Node) bool {
				if n.Kind == "function_definition" || n.Kind == "class_definition" {
					return false
				}
				if n.Kind == "attribute" {
					if par := n.Parent; par != nil && par.Kind == "assignment" && par.Get("left") == n {
						return true
					}
					a.attrsRead[n.Get("attribute").Text(f.Src)] = true
				}
				return true
			})
		}
	}
	for fn, ctxs := range a.reached {
		if ctxs[Captured] != nil || ctxs[Claimed] != nil {
			collect(fn.File, bodyStmts(fn))
		}
	}
	for _, r := range a.regions {
		if r.Ctx == Captured {
			collect(r.Fn.File, r.Stmts)
		}
	}
	return a.attrsRead
}

// knownBuffer reports whether attribute attr is somewhere assigned a
// preallocated buffer or a view of one (an allocation, or a subscript of an
// attribute), as an assignment or as a constructor keyword.
func (a *analysis) knownBuffer(attr string) bool {
	if a.buffers == nil {
		a.buffers = map[string]bool{}
		for _, f := range a.proj.Files {
			Walk(f.Tree.Root, func(n *Node) bool {
				var name string
				var value *Node
				switch n.Kind {
				case "assignment":
					if l := n.Get("left"); l != nil && l.Kind == "attribute" {
						name, value = l.Get("attribute").Text(f.Src), Unparen(n.Get("right"))
					}
				case "keyword_argument":
					name, value = n.Get("name").Text(f.Src), Unparen(n.Get("value"))
				}
				if value != nil && isBufferExpr(f, value) {
					a.buffers[name] = true
				}
				return true
			})
		}
	}
	return a.buffers[attr]
}

func isBufferExpr(f *File, n *Node) bool {
	if n.Kind == "subscript" {
		v := Unparen(n.Get("value"))
		return v != nil && v.Kind == "attribute"
	}
	if n.Kind == "call" {
		return allocators[f.Qualify(n.Get("function"))]
	}
	return false
}
