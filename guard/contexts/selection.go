package contexts

import (
	"bytes"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Selection: a backend or implementation class that declares it does not
// support CUDA graphs is not selected for a captured step, so its methods
// are not captured. A class declares so with a boolean class attribute
// (`supports_cuda_graph = False`, `cudagraph_compatible = False`) or a
// method with a constant False return (`def support_cuda_graph(self):
// return False`) whose name says graph and support, compatible or
// capturable. The declaration is read along the MRO; a class is
// unselected when it and every project subclass of it declare False (a
// subclass that declares True runs the inherited methods under capture).
// The assumption is that the selector honours the declaration: the graph
// runner or factory that chooses a backend checks it.

// graphSupportName: the name declares graph support.
func graphSupportName(name string) bool {
	l := strings.ToLower(name)
	if !strings.Contains(l, "graph") {
		return false
	}
	for _, w := range []string{"support", "compatib", "capturable", "capture_safe", "graph_safe", "graphable"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// declared is what class c's own body says of graph support: "false",
// "true" (any other value), or "" (nothing).
func declared(c *index.Class) (string, string) {
	body := c.Node.Get("body")
	if body == nil {
		return "", ""
	}
	src := c.File.Src
	for _, s := range body.NamedChildren() {
		switch s.Kind() {
		case "expression_statement":
			for _, n := range s.NamedChildren() {
				if n.Kind() != "assignment" {
					continue
				}
				l, r := syntax.Unparen(n.Get("left")), syntax.Unparen(n.Get("right"))
				if l == nil || r == nil || l.Kind() != "identifier" || !graphSupportName(l.Text(src)) {
					continue
				}
				if r.Kind() == "false" {
					return "false", strings.TrimSpace(n.Text(src))
				}
				return "true", ""
			}
		case "function_definition", "decorated_definition":
			def := s
			if s.Kind() == "decorated_definition" {
				def = s.Get("definition")
			}
			if def == nil || def.Kind() != "function_definition" || !graphSupportName(def.Get("name").Text(src)) {
				continue
			}
			fn := c.Methods[def.Get("name").Text(src)]
			if e := onlyReturn(fn); e != nil && syntax.Unparen(e).Kind() == "false" {
				return "false", "def " + fn.Name + "(): return False"
			}
			return "true", ""
		}
	}
	return "", ""
}

// selection finds the unselected classes.
func (a *analyser) selection() {
	a.unselected = map[*index.Class]string{}
	h := a.g.H
	if h == nil {
		return
	}
	own := map[*index.Class]string{}
	why := map[*index.Class]string{}
	var classes []*index.Class
	for _, f := range a.p.Files {
		for _, c := range f.Classes {
			classes = append(classes, c)
			own[c], why[c] = declared(c)
		}
	}
	resolved := func(c *index.Class) (string, string) {
		for _, k := range h.MRO(c) {
			if own[k] != "" {
				return own[k], why[k]
			}
		}
		return own[c], why[c]
	}
	for _, c := range classes {
		v, w := resolved(c)
		if v != "false" {
			continue
		}
		ok := true
		for _, d := range classes {
			if d == c {
				continue
			}
			for _, k := range h.MRO(d) {
				if k == c {
					if dv, _ := resolved(d); dv != "false" {
						ok = false
					}
					break
				}
			}
			if !ok {
				break
			}
		}
		if ok {
			a.unselected[c] = c.Name + " declares no CUDA graph support (`" + short(w) + "`)"
		}
	}
}

// Unselected says why fn's class is never selected for a captured step,
// or "".
func (r *Result) Unselected(fn *index.Function) string {
	if r == nil || r.a == nil || fn == nil || fn.Class == nil {
		return ""
	}
	return r.a.unselected[fn.Class]
}

// Gated selection: a class chosen only by an opt-in gate at import time
// (`ProfilingRange = _NvtxRange if os.environ.get("X_PROFILE") else
// nullcontext`, `Timer = _CudaTimer if DEBUG else _NoTimer`) runs only
// when the gate is on. A project class is gated when every reference to
// it outside its own body is the gated arm of such a module-level
// conditional expression (gate), or a base of a gated class; its methods
// are then conditional under capture, their findings warnings that name
// the gate.
func (a *analyser) gatedClasses() {
	a.gated = map[*index.Class]string{}
	byName := map[string][]*index.Class{}
	type use struct {
		cls  *index.Class
		gate string
	}
	var arms []*Node // the gated arm identifiers
	armOf := map[*Node]use{}
	for _, f := range a.p.Files {
		if f.Tree == nil || f.Top == nil || f.Top.Body == nil {
			continue
		}
		for _, s := range f.Top.Body.NamedChildren() {
			if s.Kind() != "expression_statement" {
				continue
			}
			for _, n := range s.NamedChildren() {
				if n.Kind() != "assignment" {
					continue
				}
				r := syntax.Unparen(n.Get("right"))
				if r == nil || r.Kind() != "conditional_expression" {
					continue
				}
				kids := r.NamedChildren()
				if len(kids) != 3 {
					continue
				}
				arm, cond := kids[0], syntax.Unparen(kids[1])
				if cond != nil && cond.Kind() == "not_operator" {
					arm, cond = kids[2], syntax.Unparen(cond.Get("argument"))
				}
				why := ""
				if cond != nil {
					why = gate(cond, f.Src)
				}
				arm = syntax.Unparen(arm)
				if why == "" || arm == nil || arm.Kind() != "identifier" {
					continue
				}
				for _, c := range f.Classes {
					if c.Name == arm.Text(f.Src) && c.Outer == f.Top {
						arms = append(arms, arm)
						armOf[arm] = use{c, why}
					}
				}
			}
		}
	}
	if len(arms) == 0 || a.g.H == nil {
		return
	}
	cand := map[*index.Class]string{}
	for _, u := range armOf {
		cand[u.cls] = u.gate
		byName[u.cls.Name] = append(byName[u.cls.Name], u.cls)
	}
	// Bases of candidates are candidates too, gated by the same gate.
	for changed := true; changed; {
		changed = false
		for c, why := range cand {
			for _, b := range a.g.H.Bases(c) {
				if _, ok := cand[b]; !ok {
					cand[b] = why
					byName[b.Name] = append(byName[b.Name], b)
					changed = true
				}
			}
		}
	}
	// Every other reference by name disqualifies: an identifier with the
	// class's name outside its own definition, the gated arms and the
	// base lists of candidates.
	bad := map[string]bool{}
	for _, f := range a.p.Files {
		if f.Tree == nil {
			continue
		}
		hit := false
		for name := range byName {
			if bytes.Contains(f.Src, []byte(name)) {
				hit = true
			}
		}
		if !hit {
			continue
		}
		syntax.Walk(f.Top.Body, func(n *Node) bool {
			if n.Kind() != "identifier" || byName[n.Text(f.Src)] == nil {
				return true
			}
			if _, ok := armOf[n]; ok {
				return true
			}
			p := n.Parent()
			if p != nil && p.Kind() == "class_definition" && p.Get("name") == n {
				return true
			}
			if p != nil && p.Kind() == "argument_list" && p.Parent() != nil && p.Parent().Kind() == "class_definition" {
				return true // a base of a class: checked through Bases
			}
			bad[n.Text(f.Src)] = true
			return true
		})
	}
	for c, why := range cand {
		if bad[c.Name] {
			continue
		}
		// A base must be a base of gated classes only.
		ok := true
		for _, f := range a.p.Files {
			for _, d := range f.Classes {
				for _, b := range a.g.H.Bases(d) {
					if b == c {
						if _, g := cand[d]; !g || bad[d.Name] {
							ok = false
						}
					}
				}
			}
		}
		if ok {
			a.gated[c] = why
		}
	}
}
