package contexts

import (
	"strings"

	"github.com/capguard/capguard/guard/index"
	"github.com/capguard/capguard/guard/syntax"
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
		switch s.Kind {
		case "expression_statement":
			for _, n := range s.NamedChildren() {
				if n.Kind != "assignment" {
					continue
				}
				l, r := syntax.Unparen(n.Get("left")), syntax.Unparen(n.Get("right"))
				if l == nil || r == nil || l.Kind != "identifier" || !graphSupportName(l.Text(src)) {
					continue
				}
				if r.Kind == "false" {
					return "false", strings.TrimSpace(n.Text(src))
				}
				return "true", ""
			}
		case "function_definition", "decorated_definition":
			def := s
			if s.Kind == "decorated_definition" {
				def = s.Get("definition")
			}
			if def == nil || def.Kind != "function_definition" || !graphSupportName(def.Get("name").Text(src)) {
				continue
			}
			fn := c.Methods[def.Get("name").Text(src)]
			if e := onlyReturn(fn); e != nil && syntax.Unparen(e).Kind == "false" {
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
