package flow

import (
	"fmt"
	"sort"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Flood is a value that reached many points-to nodes: one of the values a
// solve that passed its fact budget spent it on.
type Flood struct {
	What  string // "instances of pkg.mod.Runner", "the list made in pkg.mod on line 12"
	Nodes int    // the nodes (expressions, variables, attributes) that hold it
	Of    int    // the nodes there are
}

// floodedValues are the n project values (instances, classes, functions,
// methods) held by the most nodes, most first (ties by name, for the
// same order whatever the files' order). The warning that the call
// graph is incomplete names them: on a framework whose registries are
// instances of one class, the runner classes' instances, each in 46,000
// of 590,000 nodes, say where the budget went, where "a helper or base class
// every test or benchmark shares" did not.
func (s *solver) floodedValues(n int) []Flood {
	count := make([]int, len(s.values))
	for i := 0; i < s.nodes.len(); i++ {
		for _, f := range s.nodes.at(NID(i)).pts.facts {
			count[f.vid()]++
		}
	}
	var ids []int
	for v, c := range count {
		switch s.kinds[v] {
		case VTensor, VExt, VExtInst, VCont:
			// Tensors and outside names are everywhere by nature, and a
			// container carries what flooded it: the project's classes,
			// functions and methods say where the budget went.
			continue
		}
		if c > 0 {
			ids = append(ids, v)
		}
	}
	// Ties by what the value is, not by its id: ids follow the order
	// the files were built in.
	names := map[int]string{}
	name := func(v int) string {
		if _, ok := names[v]; !ok {
			names[v] = s.describe(VID(v))
		}
		return names[v]
	}
	sort.Slice(ids, func(a, b int) bool {
		if count[ids[a]] != count[ids[b]] {
			return count[ids[a]] > count[ids[b]]
		}
		return name(ids[a]) < name(ids[b])
	})
	var out []Flood
	for _, v := range ids[:min(n, len(ids))] {
		out = append(out, Flood{What: name(v), Nodes: count[v], Of: s.nodes.len()})
	}
	return out
}

// Hubs measures two places where a context-insensitive solve mixes
// values, named in the warning when the solve passes its fact budget (on
// LightX2V's package with a body a method per receiver class, these fed
// the same 120 and 64 values into 18,000 and 16,000 nodes:
// docs/callgraph.md, "Not bounded yet").
type Hubs struct {
	// Widened is how many containers were folded into the summary
	// container (widen); SummaryNodes how many nodes hold the summary.
	Widened, SummaryNodes int
	// Computed is how many objects hold attributes set by a computed
	// name (`setattr(x, name, v)`): every attribute read of such an
	// object gets them (its `.*` field, at name strength).
	Computed int
}

func (s *solver) hubs() Hubs {
	h := Hubs{Widened: len(s.widened)}
	if s.anyCont >= 0 {
		for i := 0; i < s.nodes.len(); i++ {
			if s.nodes.at(NID(i)).pts.find(s.anyCont) >= 0 {
				h.SummaryNodes++
			}
		}
	}
	if star, ok := s.names["*"]; ok {
		for k, n := range s.fields {
			if int32(uint32(k)) == star && s.nodes.at(n).pts.len() > 0 {
				h.Computed++
			}
		}
	}
	return h
}

// describe names value v for a message.
func (s *solver) describe(v VID) string {
	val := &s.values[v]
	switch val.Kind {
	case VModule:
		return "module " + val.Mod.Qualified()
	case VFunc, VKernel:
		return "function " + val.Fn.FullName()
	case VClass:
		return "class " + className(val.Cls)
	case VInst:
		return "instances of " + className(val.Cls)
	case VBound:
		if val.Fn != nil {
			return "method " + val.Fn.FullName() + " bound to " + s.describe(val.Recv)
		}
	case VCont:
		if val.Site == nil {
			return "containers widened together (their elements)"
		}
		if f := s.fileOf(val.Site); f != nil {
			return fmt.Sprintf("the %s made in %s on line %d", val.Site.Kind(), f.Name, f.Line(val.Site))
		}
		return "a " + val.Site.Kind()
	case VExt:
		return "the external name " + val.Ext
	case VExtInst:
		return "objects made by " + val.Ext
	case VTensor:
		return "tensors"
	case VPartial:
		return "a functools.partial"
	case VSuper:
		return "super()"
	}
	return "a value"
}

// fileOf is the project file whose tree holds n.
func (s *solver) fileOf(n *syntax.Node) *index.File {
	for n.Parent() != nil {
		n = n.Parent()
	}
	for _, f := range s.proj.Files {
		if f.Tree != nil && f.Tree.Root == n {
			return f
		}
	}
	return nil
}

// className is a class's dotted module name and qualified name.
func className(c *index.Class) string {
	if c.File == nil || c.File.Name == "" {
		return c.Qual
	}
	return c.File.Name + "." + c.Qual
}

// byName is set's values ordered by what they are (describe), not by
// when they reached it: the order values arrive in follows the order the
// files were built in, and a message that names the first of them would
// change with a file's name.
func (s *solver) byName(set ptsSet) []VID {
	var vs []VID
	set.each(func(v VID, _ uint8) { vs = append(vs, v) })
	if len(vs) < 2 {
		return vs
	}
	names := make(map[VID]string, len(vs))
	for _, v := range vs {
		names[v] = s.describe(v)
	}
	sort.SliceStable(vs, func(i, j int) bool { return names[vs[i]] < names[vs[j]] })
	return vs
}

// Merge is a variable, parameter or attribute where many flows meet: a
// place where the solve mixed what many call sites or stores gave it.
type Merge struct {
	What   string // "the parameter `module` of pkg.mod.Base.add_module"
	In     int    // the edges that flow into it
	Values int    // the values it holds
}

// mergeMin is how many values a node holds to be a merge point.
const mergeMin = saturatedCap / 2

// mergePoints are the n named nodes (a function's parameter or local, an
// attribute of a project object) that hold at least mergeMin values and
// have the most edges flowing in, most first (ties by name). Where a
// solve passed its budget, the values in the most nodes say what flooded
// it; these say where the flows met: LightX2V's largest is a base class's
// `add_module(self, name, module)` parameter, 850 flows in (2026-12-06).
func (s *solver) mergePoints(n int) []Merge {
	in := make([]int32, s.nodes.len())
	for i := 0; i < s.nodes.len(); i++ {
		for _, e := range s.nodes.at(NID(i)).edges {
			if s.nodes.at(e.dst).pts.len() >= mergeMin {
				in[e.dst]++
			}
		}
	}
	names := map[NID]string{}
	for k, nd := range s.locals {
		if in[nd] == 0 || k.fn == nil {
			continue
		}
		what := "local"
		for _, p := range k.fn.Params {
			if p.Name == k.name {
				what = "parameter"
				break
			}
		}
		names[nd] = fmt.Sprintf("the %s `%s` of %s", what, k.name, k.fn.FullName())
	}
	var attrs map[int32]string
	for k, nd := range s.fields {
		if in[nd] == 0 {
			continue
		}
		if attrs == nil {
			attrs = make(map[int32]string, len(s.names))
			for name, id := range s.names {
				attrs[id] = name
			}
		}
		name := attrs[int32(uint32(k))]
		v := VID(int32(k >> 32))
		if name == "" || name[0] == '#' || name == "*" {
			continue // a container's key, a computed name
		}
		switch s.kinds[v] {
		case VInst, VClass, VModule:
			names[nd] = fmt.Sprintf("the attribute `%s` of %s", name, s.describe(v))
		}
	}
	ids := make([]NID, 0, len(names))
	for nd := range names {
		ids = append(ids, nd)
	}
	sort.Slice(ids, func(a, b int) bool {
		if in[ids[a]] != in[ids[b]] {
			return in[ids[a]] > in[ids[b]]
		}
		return names[ids[a]] < names[ids[b]]
	})
	var out []Merge
	for _, nd := range ids[:min(n, len(ids))] {
		out = append(out, Merge{What: names[nd], In: int(in[nd]), Values: s.nodes.at(nd).pts.len()})
	}
	return out
}
