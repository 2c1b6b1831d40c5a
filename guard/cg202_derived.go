package guard

import (
	"fmt"
	"strings"
)

var ruleDerivedOutsideCapture = register(&Rule{
	ID: "CG202", Name: "derived-outside-capture", Severity: SeverityError, Fix: "sometimes",
	Contexts: []Context{Captured},
	Summary:  "a tensor derived from the static inputs before the capture region is read by captured code",
	Doc: `## What it does
In a function that captures a graph, finds a tensor computed from the static inputs BEFORE the capture
region (a cumsum, a conversion, a metadata object) that the captured code reads.

## Why it matters
Replay refreshes the static inputs; nothing refreshes the derived tensor. Every replay reads the value
derived from the batch seen at capture, whatever the new inputs say.

## Example
` + "```python" + `
cu_seqlens = torch.cumsum(seq_lens, 0).to(torch.int32)   # CG202
with torch.cuda.graph(g):
    out = attention(q, k, v, cu_seqlens)
` + "```" + `

## Fix
Compute it inside the capture region so that the graph recomputes it from the static inputs on every
replay. capguard moves the statement to the top of the region, or, when the code between uses the value
(warm-up), copies it there and leaves the original. Safe for pure tensor operations; unsafe where the
derivation calls project code that may have side effects (a metadata constructor).`,
	Run: runDerived,
})

// viewMethods alias their input: reading them in the graph is fine.
var viewMethods = map[string]bool{
	"view": true, "narrow": true, "select": true, "unsqueeze": true, "squeeze": true, "transpose": true,
	"permute": true, "expand": true, "t": true, "unflatten": true, "as_strided": true, "detach": true,
}

var derivingMethods = map[string]bool{
	"cumsum": true, "clamp": true, "repeat": true, "index_select": true, "gather": true, "cumprod": true,
	"sum": true, "amax": true, "argsort": true, "sort": true, "diff": true, "masked_fill": true, "add": true,
	"sub": true, "mul": true, "div": true, "floor_divide": true, "remainder": true, "float": true,
}

func derivation(p *Pass, n *Node) (pure, ok bool) {
	n = Unparen(n)
	if n == nil || n.Kind != "call" {
		if n != nil && n.Kind == "binary_operator" {
			return true, hasTensorOperand(p, n)
		}
		return false, false
	}
	if tempOf(p.File, n) != nil {
		return true, true
	}
	q := p.File.Qualify(n.Get("function"))
	if strings.HasPrefix(q, "torch.") && !strings.HasPrefix(q, "torch.cuda.") && q != "torch.device" &&
		!allocators[q] && !hostBuilders[q] && !likeFactories[q] && !randomFactories[q] {
		return true, hasTensorOperand(p, n.Get("arguments"))
	}
	_, name, _ := methodCall(n, p.Src())
	if derivingMethods[name] {
		return true, true
	}
	callee := Unparen(n.Get("function"))
	if callee != nil && callee.Is("identifier", "attribute") {
		last := lastName(callee.Text(p.Src()))
		if p.Proj.classOf(p.File, callee) != nil || strings.HasSuffix(last, "Metadata") || strings.HasSuffix(last, "Meta") {
			return false, hasTensorOperand(p, n.Get("arguments"))
		}
	}
	return false, false
}

func hasTensorOperand(p *Pass, n *Node) bool {
	found := false
	Walk(n, func(x *Node) bool {
		if x.Kind == "identifier" || x.Kind == "attribute" {
			found = true
			return false
		}
		return !found
	})
	return found
}

func runDerived(p *Pass) {
	r := p.Region
	if r == nil || r.Ctx != Captured {
		return
	}
	src := p.Src()
	pre := precedingStmts(p.Fn, r.Node) // stops before the anchor (the with, or the capture_begin statement)
	readIn, assignedIn := map[string]bool{}, map[string]bool{}
	stmts := append([]*Node{}, r.Stmts...)
	// Closures the region calls read the function's locals too.
	for _, g := range p.a.regionCallees(r) {
		if g.Outer == p.Fn {
			stmts = append(stmts, bodyStmts(g)...)
		}
	}
	for _, s := range stmts {
		Walk(s, func(n *Node) bool {
			if n.Kind == "identifier" {
				if par := n.Parent; par != nil && par.Kind == "assignment" && par.Get("left") == n {
					assignedIn[n.Text(src)] = true
				} else {
					readIn[n.Text(src)] = true
				}
			}
			return true
		})
	}
	assigns := assignmentsIn(pre, src)
	last := map[string]assignment{}
	for _, a := range assigns {
		last[a.name] = a
	}
	for _, a := range assigns {
		if last[a.name].stmt != a.stmt || !readIn[a.name] || assignedIn[a.name] {
			continue
		}
		pure, ok := derivation(p, a.value)
		if !ok {
			continue
		}
		msg := fmt.Sprintf("`%s` is derived from the inputs before the capture region and read inside it: replays never recompute it", a.name)
		p.Report(a.stmt, msg, moveIntoRegion(p, a, r, pure))
	}
}

// moveIntoRegion moves (or, when code before the region uses it, copies)
// the statement to the top of the capture region.
func moveIntoRegion(p *Pass, a assignment, r *Region, pure bool) *Fix {
	src := p.Src()
	stmt := a.stmt
	anchor := r.Node
	if stmt.Parent != anchor.Parent || stmt.Kind != "expression_statement" {
		return nil
	}
	start := lineStartOf(src, stmt.Start)
	end := lineEndOf(src, stmt.End)
	if strings.TrimSpace(string(src[start:stmt.Start])) != "" || strings.TrimSpace(strings.TrimRight(string(src[stmt.End:end]), "\r\n")) != "" &&
		!strings.HasPrefix(strings.TrimSpace(string(src[stmt.End:end])), "#") {
		return nil // shares its line with other code
	}
	var insertAt int
	var indent string
	if r.What == "with torch.cuda.graph" {
		first := r.Stmts
		if len(first) == 0 {
			return nil
		}
		insertAt = lineStartOf(src, first[0].Start)
		indent = lineIndent(src, first[0].Start)
	} else {
		insertAt = lineEndOf(src, anchor.End)
		indent = lineIndent(src, anchor.Start)
	}
	used := false
	for _, s := range anchor.Parent.NamedChildren() {
		if s.Start <= stmt.Start || s.Start >= anchor.Start {
			continue
		}
		Walk(s, func(n *Node) bool {
			if n.Kind == "identifier" && n.Text(src) == a.name {
				used = true
			}
			return !used
		})
	}
	// A moved statement takes its trailing comment along; a recomputed copy
	// does not (the comment, a suppression perhaps, stays with the original).
	copyEnd := end
	if used {
		copyEnd = stmt.End
	}
	text := reindent(string(src[start:copyEnd]), lineIndent(src, stmt.Start), indent)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	edits := []TextEdit{{Start: insertAt, End: insertAt, NewText: text}}
	msg := "move the derivation into the capture region, so replays recompute it from the static inputs"
	if used {
		msg = "recompute the derivation at the top of the capture region (the code before it still uses the eager value)"
	} else {
		edits = append([]TextEdit{{Start: start, End: end}}, edits...)
	}
	app := Safe
	if !pure {
		app = Unsafe
		msg += "; unsafe: the derivation calls project code that may have side effects"
	}
	return &Fix{Message: msg, Applicability: app, Edits: edits}
}

func lineStartOf(src []byte, off int) int {
	for off > 0 && src[off-1] != '\n' {
		off--
	}
	return off
}

// lineEndOf is the offset just past the newline ending the line holding off.
func lineEndOf(src []byte, off int) int {
	for off < len(src) && src[off] != '\n' {
		off++
	}
	if off < len(src) {
		off++
	}
	return off
}

// reindent replaces the leading indent `from` of each line by `to`.
func reindent(text, from, to string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, from) {
			lines[i] = to + l[len(from):]
		}
	}
	return strings.Join(lines, "")
}
