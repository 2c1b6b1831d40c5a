package rules

import (
	"strings"
)

var ruleDataDependentShape = &Rule{
	ID: "CG104", Name: "data-dependent-shape", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "an operation whose output shape depends on tensor data (`nonzero()`, one-argument `torch.where`, `masked_select`, boolean-mask indexing, `unique`, `bincount`, `histc` without a range, `repeat_interleave` without `output_size`) in captured code",
	Doc:      doc("cg104_data_dependent_shape.md"),
	Run:      runDynamicShape,
}

func runDynamicShape(p *Pass) {
	src := p.Src()
	m := newModel(p)
	masks := map[string]bool{}
	for _, a := range assignmentsIn(bodyStmts(p.Fn), src) {
		masks[a.Name] = isBoolMask(p, Unparen(a.Value), nil)
	}
	// onHost: an operation on a CPU tensor or on host data is not captured.
	onHost := func(n *Node) bool {
		return n != nil && (m.Dev(n).Host() || m.Kind(n) == KHostData)
	}
	p.Walk(func(n *Node) bool {
		switch n.Kind() {
		case "call":
			q := p.File.Qualify(n.Get("function"))
			recv, name, args := methodCall(n, src)
			if strings.HasPrefix(q, "torch.") && !strings.Contains(q[6:], ".") {
				recv, name = nil, "" // torch.nonzero(x): a function, not a method of torch
			}
			subject := recv
			if recv == nil {
				args = n.Get("arguments")
				if len(q) > 6 && q[:6] == "torch." {
					name = q[6:]
				}
				if a := positional(args); len(a) > 0 {
					subject = a[0]
				}
			}
			if why, ok := dataDependentOps[name]; ok {
				if onHost(subject) || name == "histc" && histcRanged(args, recv != nil, src) {
					return true
				}
				p.ReportCaptureError(n, "`"+short(n.Text(src))+"` has a data-dependent output shape in captured code: "+why, nil)
				return false
			}
			switch name {
			case "where":
				if recv == nil && args != nil && len(positional(args)) == 1 && !onHost(subject) {
					p.ReportCaptureError(n, "one-argument `torch.where` has a data-dependent output shape in captured code", nil)
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
				} else if recv == nil && len(pos) == 1 {
					rep = pos[0] // torch.repeat_interleave(repeats): the repeats are the tensor
				}
				if rep == nil {
					rep = keyword(args, "repeats", src)
				}
				// An int count (a literal, a shape, a constant) fixes the size;
				// only tensor repeats make it depend on data.
				if rep != nil && m.Kind(rep) == KTensor && !onHost(rep) {
					p.ReportCaptureError(n, "`repeat_interleave` with tensor repeats and no `output_size` has a data-dependent shape in captured code", nil)
					return false
				}
			}
		case "subscript":
			if onHost(n.Get("value")) {
				return true
			}
			// x[mask] = v is a masked fill (index_put_): it writes in place
			// and its size is x's; only a read selects a data-dependent count.
			if par := n.Parent(); par != nil && par.Kind() == "assignment" && par.Get("left") == n {
				return true
			}
			for _, s := range n.All("subscript") {
				if isBoolMask(p, Unparen(s), masks) {
					p.ReportCaptureError(n, "boolean-mask indexing `"+short(n.Text(src))+"` has a data-dependent output shape in captured code", nil)
					return false
				}
			}
		}
		return true
	})
}

// histcRanged: histc(x, bins, min, max) with a range given (not both 0):
// its bins are fixed on the host.
func histcRanged(args *Node, method bool, src []byte) bool {
	if args == nil {
		return false
	}
	pos := positional(args)
	skip := 1 // torch.histc(x, bins, min, max)
	if method {
		skip = 0 // x.histc(bins, min, max)
	}
	lo, hi := keyword(args, "min", src), keyword(args, "max", src)
	if lo == nil && len(pos) > skip+1 {
		lo = pos[skip+1]
	}
	if hi == nil && len(pos) > skip+2 {
		hi = pos[skip+2]
	}
	if lo == nil || hi == nil {
		return false
	}
	zero := func(n *Node) bool {
		t := strings.TrimSpace(Unparen(n).Text(src))
		return t == "0" || t == "0.0" || t == "0." || t == "-0.0"
	}
	return !(zero(lo) && zero(hi)) && Unparen(lo).Text(src) != Unparen(hi).Text(src)
}

func isBoolMask(p *Pass, n *Node, masks map[string]bool) bool {
	if n == nil {
		return false
	}
	switch n.Kind() {
	case "comparison_operator":
		// `x > 0` on tensors; `a is None` and `in` tests are not masks.
		return !identityTest(n)
	case "unary_operator":
		return n.Children()[0].Kind() == "~"
	case "identifier":
		return masks[n.Text(p.Src())]
	case "call":
		_, name, _ := methodCall(n, p.Src())
		return name == "isnan" || name == "isinf" || name == "logical_not" || name == "bool"
	}
	return false
}
