package flow

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// fieldDecl is `self.x: T = ...` in a method of cls.
type fieldDecl struct {
	cls  *index.Class
	attr string
	ann  *Node
	file *index.File
}

// seed is a value with the strength to seed it at.
type seed struct {
	v  VID
	st uint8
}

// seedDecorated gives a decorated name whose decorators' results stayed
// empty (a decorator from outside the project, or one whose return the
// analysis cannot see) the definition itself: decorators almost always
// return a wrapper that calls it. It returns how many names it seeded.
func (s *solver) seedDecorated() int {
	n := 0
	for _, d := range s.decorated {
		if s.nodes.at(d.n).pts.len() == 0 {
			s.premise(d.n, "a decorated name's seed")
			s.add(d.n, d.v, sResolved)
			s.assumed[d.def] = "decorators assumed to return the function"
			n++
		}
	}
	return n
}

// seedDeclared seeds every node that flow left empty and that has a
// declared type: annotations on parameters, returns, variables and
// attributes, and a method's self (its own class). The declared class is
// `annotated`, its project subclasses `hierarchy`.
func (s *solver) seedDeclared() int {
	n := 0
	for _, d := range s.decls {
		if s.nodes.at(d.n).pts.len() > 0 {
			continue
		}
		var seeds []seed
		if d.self != nil {
			seeds = s.selfSeeds(d)
		} else {
			seeds = s.typeSeeds(d.file, d.ann, 0)
		}
		for _, x := range seeds {
			s.add(d.n, x.v, x.st)
			n++
		}
		if len(seeds) > 0 {
			s.premise(d.n, "a declared type's seed")
			s.fieldSeeded(d.n)
		}
	}
	// Declared attributes of every instance that exists.
	for vi := 0; vi < len(s.values); vi++ {
		v := s.values[vi]
		if v.Kind != VInst {
			continue
		}
		for _, k := range s.h.MRO(v.Cls) {
			for _, attr := range s.attrTypeNames(k) {
				anns := k.AttrTypes[attr]
				f := s.field(VID(vi), attr)
				if s.nodes.at(f).pts.len() > 0 {
					continue
				}
				s.premise(f, "a declared attribute's seed")
				for _, ann := range anns {
					for _, x := range s.typeSeeds(k.File, ann, 0) {
						s.add(f, x.v, x.st)
						n++
					}
				}
			}
		}
		for _, fd := range s.fieldDecls {
			if !s.isSubclass(v.Cls, fd.cls) {
				continue
			}
			f := s.field(VID(vi), fd.attr)
			if s.nodes.at(f).pts.len() > 0 {
				continue
			}
			s.premise(f, "a field declaration's seed")
			for _, x := range s.typeSeeds(fd.file, fd.ann, 0) {
				s.add(f, x.v, x.st)
				n++
			}
		}
	}
	return n
}

// attrTypeNames are the names of k.AttrTypes, sorted (seeding in a map's
// order would make the solver's work order differ from run to run).
func (s *solver) attrTypeNames(k *index.Class) []string {
	if names, ok := s.attrOrder[k]; ok {
		return names
	}
	names := make([]string, 0, len(k.AttrTypes))
	for a := range k.AttrTypes {
		names = append(names, a)
	}
	sort.Strings(names)
	if s.attrOrder == nil {
		s.attrOrder = map[*index.Class][]string{}
	}
	s.attrOrder[k] = names
	return names
}

// selfSeeds are the receivers a method's empty self stands for: the
// classes of its family that inherit this very method (not an override),
// less those the project never makes itself but makes a subclass of (an
// abstract base: its methods run on the subclass's instances, directly or
// through super(), which flow follows or seeds). The method's own class is annotated, its subclasses
// hierarchy. A root method (an entry point, a convention's) takes all.
func (s *solver) selfSeeds(d decl) []seed {
	mk := s.inst
	if d.cm {
		mk = s.class
	}
	all := append([]*index.Class{d.self}, s.h.Subclasses(d.self)...)
	root := s.rootHint != nil && s.rootHint(d.fn)
	var out []seed
	for _, k := range all {
		if d.fn != nil && d.fn.Name != "" && s.h.Lookup(k, d.fn.Name) != d.fn {
			continue // k overrides it
		}
		if !root && !s.made[k] {
			madeBelow := false
			for _, sub := range s.h.Subclasses(k) {
				if s.made[sub] {
					madeBelow = true
					break
				}
			}
			if madeBelow {
				continue
			}
		}
		st := sHierarchy
		if k == d.self {
			st = sAnnotated
		}
		out = append(out, seed{mk(k), st})
	}
	return out
}

func (s *solver) isSubclass(k, of *index.Class) bool {
	for _, m := range s.h.MRO(k) {
		if m == of {
			return true
		}
	}
	return false
}

// classSeeds: instances (or, for a classmethod, the classes) of c
// (annotated) and of its subclasses (hierarchy).
func (s *solver) classSeeds(c *index.Class, classes bool) []seed {
	mk := s.inst
	if classes {
		mk = s.class
	}
	out := []seed{{mk(c), sAnnotated}}
	for _, sub := range s.h.Subclasses(c) {
		out = append(out, seed{mk(sub), sHierarchy})
	}
	return out
}

// typing names that wrap other types.
var (
	typeUnions    = map[string]bool{"Optional": true, "Union": true, "Annotated": true, "ClassVar": true, "Final": true, "Required": true, "NotRequired": true, "ReadOnly": true}
	typeSequences = map[string]bool{"List": true, "list": true, "Sequence": true, "MutableSequence": true, "Iterable": true, "Iterator": true, "Tuple": true, "tuple": true, "Set": true, "set": true, "FrozenSet": true, "frozenset": true, "Deque": true, "deque": true, "Collection": true, "Generator": true, "AbstractSet": true, "ModuleList": true, "Sequential": true}
	typeMappings  = map[string]bool{"Dict": true, "dict": true, "Mapping": true, "MutableMapping": true, "OrderedDict": true, "DefaultDict": true, "defaultdict": true, "ModuleDict": true}
	typeClassOf   = map[string]bool{"Type": true, "type": true}
	typeIgnored   = map[string]bool{"Any": true, "Callable": true, "None": true, "object": true, "int": true, "float": true, "str": true, "bool": true, "bytes": true, "Literal": true, "TypeVar": true, "Self": true}
)

// typeSeeds are the values a declared type stands for.
func (s *solver) typeSeeds(f *index.File, ann *Node, depth int) []seed {
	ann = syntax.Unparen(ann)
	if ann == nil || depth > 6 {
		return nil
	}
	src := f.Src
	switch ann.Kind() {
	case "type":
		var out []seed
		for _, c := range ann.NamedChildren() {
			out = append(out, s.typeSeeds(f, c, depth+1)...)
		}
		return out
	case "string":
		text, ok := index.StringLit(ann, src)
		if !ok {
			return nil
		}
		return s.stringTypeSeeds(f, text)
	case "binary_operator":
		var out []seed
		for _, c := range ann.NamedChildren() {
			out = append(out, s.typeSeeds(f, c, depth+1)...)
		}
		return out
	case "identifier", "attribute":
		return s.symSeeds(s.proj.ResolveExpr(f, ann), ann)
	case "subscript", "generic_type":
		base := ann.Get("value")
		var args []*Node
		if base == nil {
			// generic_type: identifier + type_parameter
			for _, c := range ann.NamedChildren() {
				if base == nil {
					base = c
				} else {
					args = append(args, c.NamedChildren()...)
				}
			}
		} else {
			args = ann.All("subscript")
		}
		sym := s.proj.ResolveExpr(f, base)
		name := ""
		if sym.Kind == index.SymExternal {
			name = sym.External[strings.LastIndexByte(sym.External, '.')+1:]
		}
		switch {
		case typeUnions[name]:
			var out []seed
			for i, a := range args {
				if name == "Annotated" && i > 0 {
					break
				}
				out = append(out, s.typeSeeds(f, a, depth+1)...)
			}
			return out
		case typeSequences[name] || typeMappings[name]:
			elems := args
			if typeMappings[name] && len(args) > 1 {
				elems = args[len(args)-1:]
			}
			c := s.cont(ann, tagPlain)
			for _, a := range elems {
				for _, x := range s.typeSeeds(f, a, depth+1) {
					s.add(s.values[c].Elems, x.v, x.st)
				}
			}
			return []seed{{c, sAnnotated}}
		case typeClassOf[name]:
			var out []seed
			for _, a := range args {
				for _, x := range s.typeSeeds(f, a, depth+1) {
					if v := s.values[x.v]; v.Kind == VInst {
						out = append(out, seed{s.class(v.Cls), x.st})
					}
				}
			}
			return out
		case typeIgnored[name] || name == "Callable":
			return nil
		}
		return s.symSeeds(sym, base)
	}
	return nil
}

// stringTypeSeeds resolves a string annotation ("Backend",
// "Optional[pkg.Backend]") by its dotted names.
func (s *solver) stringTypeSeeds(f *index.File, text string) []seed {
	var out []seed
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		last := tok[strings.LastIndexByte(tok, '.')+1:]
		if typeUnions[last] || typeSequences[last] || typeMappings[last] || typeIgnored[last] || typeClassOf[last] {
			continue
		}
		parts := strings.Split(tok, ".")
		sym := s.proj.ResolveName(f, parts[0])
		for _, p := range parts[1:] {
			switch sym.Kind {
			case index.SymModule:
				sym = s.proj.ModuleMember(sym.Module, p)
			case index.SymExternal:
				sym = index.Symbol{Kind: index.SymExternal, External: sym.External + "." + p}
			case index.SymClass:
				if c := sym.Class.File.Classes[sym.Class.Qual+"."+p]; c != nil {
					sym = index.Symbol{Kind: index.SymClass, Class: c}
				} else {
					sym = index.Symbol{}
				}
			default:
				sym = index.Symbol{}
			}
		}
		if sym.Kind == index.SymExternal && sym.External == tok && !strings.Contains(tok, ".") && !f.Top.Locals[tok] {
			continue // an unknown bare name
		}
		out = append(out, s.symSeeds(sym, nil)...)
	}
	return out
}

// symSeeds are the values a resolved type name stands for.
func (s *solver) symSeeds(sym index.Symbol, at *Node) []seed {
	switch sym.Kind {
	case index.SymClass:
		return s.classSeeds(sym.Class, false)
	case index.SymExternal:
		d := sym.External
		last := d[strings.LastIndexByte(d, '.')+1:]
		switch {
		case torchapi.TensorTypeNames[d] || torchapi.TensorTypeNames[last] && strings.HasPrefix(d, "torch"):
			return []seed{{s.tensor, sAnnotated}}
		case typeIgnored[last] || typeUnions[last]:
			return nil
		case startsUpper(last) && strings.Contains(d, "."):
			return []seed{{s.extInst(d), sAnnotated}}
		}
	}
	return nil
}

// nameFallback resolves method calls on receivers that every phase left
// unknown, by the method's name: when the name is not a common tensor,
// module, container or Triton method and one method family of the project
// defines it (one class and its overrides), the receiver is taken to be an
// instance of that family (edge kind name). A receiver declared as an
// external class the project extends (`model: torch.nn.Module`) takes the
// project subclasses that have the method (kind hierarchy). It returns how
// many calls it changed the solve for (new seeds, or a drop taken back):
// the seeding rounds end when none.
func (s *solver) nameFallback() int {
	n := 0
	defs := s.definers()
	for _, ms := range s.methodSites {
		if ms.recv < 0 || (ms.callee >= 0 && s.nodes.at(ms.callee).pts.len() > 0) {
			continue
		}
		s.premise(ms.recv, "the name fallback (its receiver)")
		s.premise(ms.callee, "the name fallback (its callee)")
		var extBases []string
		known, noAttr := "", ""
		// In a stable order, not the order the values arrived in: the
		// reason names the first class (byName).
		recv := s.byName(s.nodes.at(ms.recv).pts)
		for _, v := range recv {
			val := s.values[v]
			switch val.Kind {
			case VTensor:
				known = "a method call on a tensor is never a project method"
			case VKernel:
				known = "a method of a Triton kernel is never a project method"
			case VExtInst:
				extBases = append(extBases, val.Ext)
			case VExt:
				if known == "" {
					known = "an attribute of `" + val.Ext + "`, outside the project"
				}
			case VCont:
				if known == "" {
					known = "-" // a container: its methods are modelled, nothing is dropped
				}
			default:
				if noAttr == "" {
					noAttr = s.noAttrReason(val, ms.name)
				}
			}
		}
		// Project values without the attribute beside an outside class the
		// receiver is declared as (`model: torch.nn.Module`, also handed a
		// wrapper that never reaches this call): an object without the
		// method would fail here, so the call is on one of the declared
		// class's project subclasses that has it (kind hierarchy).
		if known == "" && noAttr != "" && len(extBases) == 0 {
			known = noAttr
		}
		if known != "" {
			if known != "-" && !(torchapi.ModuleReturnsSelf[ms.name] && s.nodes.at(ms.recv).pts.len() > 0) {
				s.drop(ms.call, known)
			}
			continue
		}
		if commonMethods[ms.name] {
			s.drop(ms.call, fmt.Sprintf("receiver of unknown type, and `%s` is a common tensor, module, container or Triton method name", ms.name))
			continue
		}
		cands := defs[ms.name]
		if len(cands) == 0 {
			continue // nothing in the project defines it: an outside method
		}
		var seeds []seed
		if len(extBases) > 0 {
			sort.Strings(extBases)
			for _, k := range s.proj.Classes {
				if s.derivesAny(k, extBases) && s.h.Lookup(k, ms.name) != nil {
					seeds = append(seeds, seed{s.inst(k), sHierarchy})
				}
			}
			if len(seeds) == 0 {
				s.drop(ms.call, "the receiver is a `"+strings.Join(extBases, "`/`")+"`, and no project subclass of it has `"+ms.name+"`")
				continue
			}
		} else {
			roots := s.familyRoots(cands)
			if len(roots) != 1 {
				names := make([]string, 0, len(roots))
				for _, r := range roots {
					names = append(names, r.Qual)
				}
				sort.Strings(names)
				if len(names) > 4 {
					names = append(names[:4], "...")
				}
				s.drop(ms.call, fmt.Sprintf("receiver of unknown type, and %d unrelated classes define `%s` (%s)", len(roots), ms.name, strings.Join(names, ", ")))
				continue
			}
			seeds = append(seeds, seed{s.inst(roots[0]), sName})
			for _, sub := range s.h.Subclasses(roots[0]) {
				if s.h.Lookup(sub, ms.name) != nil {
					seeds = append(seeds, seed{s.inst(sub), sName})
				}
			}
		}
		// Counted only when it changed something (a new seed, or a drop
		// taken back: the dropped calls are in the version): a call whose
		// seeds the receiver holds already (its callee still unknown) is no
		// reason for another round.
		v0 := s.version()
		for _, x := range seeds {
			s.add(ms.recv, x.v, x.st)
		}
		delete(s.dropped, ms.call)
		if s.version() != v0 {
			n++
		}
	}
	return n
}

func (s *solver) drop(call *Node, why string) {
	if _, ok := s.dropped[call]; !ok {
		s.dropped[call] = why
	}
}

func (s *solver) derivesAny(k *index.Class, bases []string) bool {
	for _, e := range s.h.External(k) {
		for _, b := range bases {
			if e == b {
				return true
			}
		}
	}
	return false
}

// definers maps a method name to the classes whose bodies define it.
func (s *solver) definers() map[string][]*index.Class {
	out := map[string][]*index.Class{}
	for _, k := range s.proj.Classes {
		for name := range k.Methods {
			out[name] = append(out[name], k)
		}
	}
	return out
}

// familyRoots are the definers that no other definer is an ancestor of.
func (s *solver) familyRoots(defs []*index.Class) []*index.Class {
	var roots []*index.Class
	for _, d := range defs {
		root := true
		for _, m := range s.h.MRO(d)[1:] {
			for _, o := range defs {
				if o == m {
					root = false
				}
			}
		}
		if root {
			roots = append(roots, d)
		}
	}
	return roots
}

// noAttrReason says why a method call on a project value found no project
// target: the attribute is set on instances but only ever holds values
// from outside the project (`self.act = ACT2FN[name]`), it comes from an
// outside base class (`super().forward` in an `nn.Embedding` subclass), or
// the classes have no such attribute.
func (s *solver) noAttrReason(val Value, name string) string {
	k := val.Cls
	if k == nil || val.Kind != VInst && val.Kind != VClass && val.Kind != VSuper {
		return "the receiver's classes have no attribute `" + name + "`"
	}
	for _, c := range s.h.MRO(k) {
		if val.Kind != VSuper && assignsSelfAttr(c, name) {
			return fmt.Sprintf("`%s` is set on `%s` instances, but only to values from outside the project or ones the analysis does not follow", name, k.Name)
		}
	}
	if ext := s.h.External(k); len(ext) > 0 {
		return fmt.Sprintf("neither `%s` nor its project bases define `%s`: it comes from an outside base (%s)", k.Name, name, strings.Join(ext, ", "))
	}
	return "the receiver's classes have no attribute `" + name + "`"
}

// assignsSelfAttr says whether a method of c assigns `self.name = ...`
// (self its first parameter).
func assignsSelfAttr(c *index.Class, name string) bool {
	return len(selfAttrsSet(c, map[string]bool{name: true})) > 0
}

// selfAttrsSet are the names among want that c's methods set on self
// (`self.name = ...`, self a method's first parameter), in sorted order.
func selfAttrsSet(c *index.Class, want map[string]bool) []string {
	src := c.File.Src
	got := map[string]bool{}
	for _, m := range c.Methods {
		if len(m.Params) == 0 || m.Body == nil || m.Static {
			continue
		}
		self := m.Params[0].Name
		syntax.Walk(m.Body, func(n *Node) bool {
			if n.Kind() == "function_definition" || n.Kind() == "class_definition" || n.Kind() == "lambda" {
				return false
			}
			if n.Kind() == "assignment" {
				if l := n.Get("left"); l != nil && l.Kind() == "attribute" {
					if a := l.Get("attribute").Text(src); want[a] {
						if o := syntax.Unparen(l.Get("object")); o != nil && o.Kind() == "identifier" && o.Text(src) == self {
							got[a] = true
						}
					}
				}
			}
			return true
		})
	}
	out := make([]string, 0, len(got))
	for a := range got {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// storeFallback gives a receiver that nothing reaches, but that a store
// goes through (`mod.lora_adapters[name] = lora` with `mod` from an outside
// iterator), the classes that own the attribute: when the attribute is not
// a common name and the methods of exactly one class family set
// `self.attr`, the receiver is taken to be an instance of that family
// (edge kind name, recorded in Assumed), so that what is stored reaches
// where the family reads it. It returns how many receivers it seeded
// anew (as nameFallback: a seed turned away again changes nothing).
func (s *solver) storeFallback() int {
	n := 0
	for _, ss := range s.storeSites {
		if ss.recv < 0 || s.nodes.at(ss.recv).pts.len() > 0 || commonMethods[ss.name] {
			continue
		}
		s.premise(ss.recv, "the store fallback")
		roots := s.familyRoots(s.selfAttrClasses(ss.name))
		if len(roots) != 1 {
			continue
		}
		v0 := s.version()
		s.add(ss.recv, s.inst(roots[0]), sName)
		for _, sub := range s.h.Subclasses(roots[0]) {
			s.add(ss.recv, s.inst(sub), sName)
		}
		if _, ok := s.assumed[ss.site]; !ok {
			s.assumed[ss.site] = fmt.Sprintf("receiver of unknown type taken to be a `%s`, the one class family that sets `self.%s` (a guess by name)", roots[0].Qual, ss.name)
		}
		if s.version() != v0 { // as nameFallback: a change, or no reason for another round
			n++
		}
	}
	return n
}

// selfAttrClasses are the project classes whose methods set self.name.
func (s *solver) selfAttrClasses(name string) []*index.Class {
	if s.selfAttrs == nil {
		s.selfAttrs = map[string][]*index.Class{}
		want := map[string]bool{}
		for _, ss := range s.storeSites {
			want[ss.name] = true
		}
		for _, k := range s.proj.Classes {
			for _, a := range selfAttrsSet(k, want) {
				s.selfAttrs[a] = append(s.selfAttrs[a], k)
			}
		}
	}
	return s.selfAttrs[name]
}
