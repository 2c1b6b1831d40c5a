package index

import (
	"path"
	"slices"
	"strings"
)

// Hierarchy is the class hierarchy of the project: each class's resolved
// bases, its method resolution order, its external ancestors and its
// subclasses.
type Hierarchy struct {
	bases    map[*Class][]*Class
	external map[*Class][]string // external base names, own and inherited ("torch.nn.Module")
	mro      map[*Class][]*Class
	subs     map[*Class][]*Class // direct subclasses
	// open are the classes with a base that resolves to nothing (a
	// subscript, a call, a name bound dynamically): what they derive
	// from is not known.
	open map[*Class]bool
	// modules are Project.ModuleBases; moduleGlobs those of them with a
	// `*`, which matches any run of characters.
	modules     map[string]bool
	moduleGlobs []string
}

// Hierarchy resolves every class's bases statically (through imports,
// re-exports and aliases) and computes the MROs.
func (p *Project) Hierarchy() *Hierarchy {
	h := &Hierarchy{bases: map[*Class][]*Class{}, external: map[*Class][]string{}, mro: map[*Class][]*Class{},
		subs: map[*Class][]*Class{}, open: map[*Class]bool{}, modules: p.ModuleBases}
	for m := range p.ModuleBases {
		if strings.Contains(m, "*") {
			h.moduleGlobs = append(h.moduleGlobs, m)
		}
	}
	slices.Sort(h.moduleGlobs)
	own := map[*Class][]string{}
	for _, c := range p.Classes {
		for _, b := range c.Bases {
			s := p.resolveBase(c, b)
			switch s.Kind {
			case SymClass:
				if s.Class != c {
					h.bases[c] = append(h.bases[c], s.Class)
					h.subs[s.Class] = append(h.subs[s.Class], c)
				}
			case SymExternal:
				if s.External != "object" {
					own[c] = append(own[c], s.External)
				}
			default:
				h.open[c] = true
			}
		}
	}
	for _, c := range p.Classes {
		h.mro[c] = h.linearize(c, map[*Class]bool{})
		seen := map[string]bool{}
		for _, k := range h.mro[c] {
			for _, e := range own[k] {
				if !seen[e] {
					seen[e] = true
					h.external[c] = append(h.external[c], e)
				}
			}
		}
	}
	return h
}

// resolveBase resolves a base expression of class c: in the class's file
// at module level, or a sibling class of an enclosing class.
func (p *Project) resolveBase(c *Class, b *Node) Symbol {
	if b.Kind() == "identifier" && c.Enclosing != nil {
		if k := c.File.Classes[c.Enclosing.Qual+"."+b.Text(c.File.Src)]; k != nil {
			return Symbol{Kind: SymClass, Class: k}
		}
	}
	if b.Kind() == "identifier" && c.Outer != nil && c.Outer.Kind != TopLevel {
		// A class defined in a function, based on another local class.
		if k := c.File.Classes[c.Outer.Qual+"."+b.Text(c.File.Src)]; k != nil {
			return Symbol{Kind: SymClass, Class: k}
		}
	}
	if b.Kind() == "identifier" && c.Enclosing == nil && (c.Outer == nil || c.Outer.Kind == TopLevel) {
		// A module-level class is built when its statement runs: a base
		// named like a class of the file (`class Impl(Impl, nn.Module)`
		// after an import of Impl, or a subclass of that new Impl) is
		// the name's binding at that statement, not the module's first.
		if name := b.Text(c.File.Src); c.File.Classes[name] != nil {
			if s := p.bindingBefore(c.File, name, int(c.Node.Start)); s.Kind != SymNone {
				return s
			}
		}
	}
	return p.ResolveExpr(c.File, b)
}

// linearize is C3; where C3 fails (an inconsistent hierarchy), it falls
// back to depth-first, left to right, first occurrence kept.
func (h *Hierarchy) linearize(c *Class, visiting map[*Class]bool) []*Class {
	if m, ok := h.mro[c]; ok {
		return m
	}
	if visiting[c] {
		return []*Class{c}
	}
	visiting[c] = true
	defer delete(visiting, c)
	var seqs [][]*Class
	for _, b := range h.bases[c] {
		seqs = append(seqs, append([]*Class{}, h.linearize(b, visiting)...))
	}
	seqs = append(seqs, append([]*Class{}, h.bases[c]...))
	out := []*Class{c}
	for {
		nonEmpty := false
		for _, s := range seqs {
			if len(s) > 0 {
				nonEmpty = true
			}
		}
		if !nonEmpty {
			return out
		}
		var pick *Class
		for _, s := range seqs {
			if len(s) == 0 {
				continue
			}
			cand := s[0]
			inTail := false
			for _, t := range seqs {
				for _, x := range t[min(1, len(t)):] {
					if x == cand {
						inTail = true
					}
				}
			}
			if !inTail {
				pick = cand
				break
			}
		}
		if pick == nil {
			return h.dfs(c)
		}
		out = append(out, pick)
		for i, s := range seqs {
			if len(s) > 0 && s[0] == pick {
				seqs[i] = s[1:]
			}
		}
	}
}

func (h *Hierarchy) dfs(c *Class) []*Class {
	var out []*Class
	seen := map[*Class]bool{}
	var visit func(k *Class)
	visit = func(k *Class) {
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, k)
		for _, b := range h.bases[k] {
			visit(b)
		}
	}
	visit(c)
	return out
}

// MRO is the class's method resolution order over project classes (the
// class first).
func (h *Hierarchy) MRO(c *Class) []*Class {
	if m, ok := h.mro[c]; ok {
		return m
	}
	return []*Class{c}
}

// Bases are the project classes c names as bases.
func (h *Hierarchy) Bases(c *Class) []*Class { return h.bases[c] }

// External are the external classes c derives from, directly or through
// project bases ("torch.nn.Module").
func (h *Hierarchy) External(c *Class) []string { return h.external[c] }

// Derives reports whether c derives from an external class whose dotted
// name ends with suffix ("nn.Module" matches "torch.nn.Module" and
// "torch.nn.modules.module.Module" does not).
func (h *Hierarchy) Derives(c *Class, suffixes ...string) bool {
	for _, e := range h.external[c] {
		for _, s := range suffixes {
			if e == s || strings.HasSuffix(e, "."+s) {
				return true
			}
		}
	}
	return false
}

// IsModule reports whether c is a torch.nn.Module subclass (any external
// base named Module under torch.nn, or nn.Module through an alias, or a
// framework's model base class that a preset names: ModuleBases).
func (h *Hierarchy) IsModule(c *Class) bool {
	for _, e := range h.external[c] {
		if strings.HasSuffix(e, "nn.Module") || strings.HasPrefix(e, "torch.nn.") && !strings.HasSuffix(e, "Function") || h.modules[e] {
			return true
		}
		for _, g := range h.moduleGlobs {
			if globName(g, e) {
				return true
			}
		}
	}
	return false
}

// globName matches dotted name against pattern, whose `*` matches any run
// of characters (dots too: a dotted name holds no slash, so path.Match's
// `*` crosses them).
func globName(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// NeverDerives reports whether c provably derives from nothing under the
// dotted prefixes (a framework's packages, "vllm"): every class of its
// MRO has bases that resolve (project classes, or external names), none
// of them is a project class in a module under a prefix (a vendored copy
// of the framework), and no external ancestor is a name under one.
func (h *Hierarchy) NeverDerives(c *Class, prefixes []string) bool {
	under := func(name string) bool {
		for _, p := range prefixes {
			if name == p || strings.HasPrefix(name, p+".") || strings.Contains(name, "."+p+".") || strings.HasSuffix(name, "."+p) {
				return true
			}
		}
		return false
	}
	for _, k := range h.MRO(c) {
		if h.open[k] || k.File != nil && under(k.File.Name) {
			return false
		}
	}
	for _, e := range h.external[c] {
		if under(e) {
			return false
		}
	}
	return true
}

// Subclasses are c's project subclasses, transitive, c excluded, in a
// fixed order.
func (h *Hierarchy) Subclasses(c *Class) []*Class {
	var out []*Class
	seen := map[*Class]bool{c: true}
	queue := []*Class{c}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, s := range h.subs[k] {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
				queue = append(queue, s)
			}
		}
	}
	return out
}

// Has reports whether c or a class on its MRO defines name: a method or
// a class attribute.
func (h *Hierarchy) Has(c *Class, name string) bool {
	for _, k := range h.MRO(c) {
		if k.Methods[name] != nil || k.Defines[name] {
			return true
		}
	}
	return false
}

// Lookup finds the method name along c's MRO, or nil.
func (h *Hierarchy) Lookup(c *Class, name string) *Function {
	for _, k := range h.MRO(c) {
		if m := k.Methods[name]; m != nil {
			return m
		}
		if k.Defines[name] {
			return nil
		}
	}
	return nil
}
