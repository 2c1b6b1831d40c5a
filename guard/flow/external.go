package flow

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"

	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// isTransparent reports whether calling the external name returns its
// argument ("x()" stands for a decorator that a call returned).
func isTransparent(d string) bool {
	return torchapi.Transparent[strings.TrimSuffix(d, "()")]
}

// external handles a call of an external name.
func (s *solver) external(ci int32, d string, st uint8) {
	c := s.cons.at(ci)
	a := c.args
	if a == nil {
		a = &callArgs{}
	}
	pos := append(append([]NID{}, c.prepended()...), a.pos...)
	arg := func(i int) NID {
		if i < len(pos) {
			return pos[i]
		}
		return noNode
	}
	lit := func(i int) (string, bool) {
		i -= len(c.prepended())
		if l, ok := a.lit(i); ok {
			return l, true
		}
		return "", false
	}
	last := d[strings.LastIndexByte(d, '.')+1:]
	if i, ok := torchapi.OpRegistration[d]; ok && i >= 0 {
		// An operator implementation registered (lib.impl(name, fn,
		// key)): Graph.Registered.
		n := arg(i)
		for _, k := range a.kw {
			if k.name == "fn" {
				n = k.n
			}
		}
		if n >= 0 {
			s.regNodes = append(s.regNodes, n)
		}
		return
	}
	switch {
	case d == "functools.partial" || d == "partial":
		if len(pos) == 0 {
			return
		}
		pv := s.intern(Value{Kind: VPartial, Site: c.site, Elems: pos[0], Args: pos[1:]})
		s.add(c.dst, pv, st)
		return
	case isTransparent(d):
		if len(pos) > 0 {
			s.copyTo(pos[0], c.dst, st)
		} else if !strings.HasSuffix(d, "()") {
			s.add(c.dst, s.ext(d+"()"), st)
		}
		return
	case d == "getattr":
		// A returned getattr under a caller's name is read at each call
		// too (setters.go).
		s.armSetter(c, noNode, st, true)
		if name, ok := lit(1); ok {
			nc := s.newCons(constraint{kind: cLoad, owner: c.owner, site: c.site, attr: name, dst: c.dst})
			s.watchCapped(arg(0), nc, st)
		} else if len(pos) >= 2 {
			nc := s.newCons(constraint{kind: cLoad, owner: c.owner, site: c.site, attr: "*", dst: c.dst})
			s.watchCapped(arg(0), nc, st)
		}
		s.copyTo(arg(2), c.dst, st)
		return
	case d == "setattr":
		if s.armSetter(c, arg(2), st, false) {
			// Made at each call of the function it is in (setters.go).
			return
		}
		name, ok := lit(1)
		if !ok {
			name = "*"
		}
		nc := s.newCons(constraint{kind: cStore, owner: c.owner, site: c.site, attr: name, src: arg(2)})
		s.watchCapped(arg(0), nc, st)
		return
	case d == "super":
		// Handled where the call is built (it needs the enclosing method).
		return
	case d == "type":
		if len(pos) == 1 {
			nc := s.newCons(constraint{kind: cType, owner: c.owner, site: c.site, dst: c.dst})
			s.watchCapped(arg(0), nc, st)
		}
		return
	case d == "next":
		// next(x) calls type(x).__next__: a project object without one
		// is not an iterator (TypeError), whatever __iter__ or
		// __getitem__ it has.
		if n := arg(0); n >= 0 {
			s.watchCapped(n, s.newCons(constraint{kind: cIter, owner: c.owner, site: c.site, dst: c.dst, attr: "next"}), st)
		}
		s.copyTo(arg(1), c.dst, st)
		return
	case d == "enumerate" || d == "zip" || d == "itertools.zip_longest" || d == "itertools.product":
		// Each tuple holds the i-th argument's elements at position i
		// (enumerate: its argument's at 1, after the count), so that
		// `for i, (a, b) in enumerate(zip(xs, ys))` gives a xs's elements
		// only (assign reads a target's own position).
		out := s.cont(c.site, tagPlain)
		tup := s.keyedCont(c.site.Parent())
		for i, p := range pos {
			key := strconv.Itoa(i)
			if d == "enumerate" {
				if i > 0 {
					break // the start: a count, as the first element is
				}
				key = "1"
			}
			el := s.newNode()
			s.elemsIntoCapped(c, p, el, st)
			s.putKey(tup, key, el, st)
		}
		s.add(s.values[out].Elems, tup, st)
		s.add(c.dst, out, st)
		return
	case d == "map" || d == "filter" || d == "itertools.starmap":
		// The function is the first argument; any argument that holds a
		// function is called with the elements of the others.
		out := s.cont(c.site, tagPlain)
		if len(pos) >= 2 {
			for i := range pos {
				elem := s.newNode()
				for j, p := range pos {
					if j != i {
						s.elemsIntoCapped(c, p, elem, st)
					}
				}
				res := s.values[out].Elems
				if d == "filter" {
					s.copyTo(elem, s.values[out].Elems, st)
					res = s.newNode()
				}
				nc := s.newCons(constraint{kind: cCall, owner: c.owner, site: c.site, dst: res, fnOnly: true,
					args: &callArgs{pos: []NID{elem}}, recvNode: noNode})
				s.watchCapped(pos[i], nc, st)
			}
		}
		s.add(c.dst, out, st)
		return
	case d == "dict":
		// Key-sensitive: dict(d, k=v) copies d key by key (kwspread.go).
		out := s.keyedDict(c.site)
		for _, p := range append(append([]NID{}, pos...), a.kwSplat...) {
			s.spreadInto(c.owner, c.site, out, p, st)
		}
		for _, k := range a.kw {
			s.putKey(out, "'"+k.name, k.n, st)
		}
		s.add(c.dst, out, st)
		return
	case d == "collections.defaultdict" || d == "types.SimpleNamespace" || d == "argparse.Namespace":
		out := s.cont(c.site, tagPlain)
		if d == "types.SimpleNamespace" || d == "argparse.Namespace" {
			// Attribute access on a namespace: an instance-like object is
			// not modelled; its keyword values are its elements.
		}
		for i, p := range pos {
			if d == "collections.defaultdict" && i == 0 {
				continue
			}
			s.elemsIntoCapped(c, p, s.values[out].Elems, st)
		}
		for _, k := range a.kw {
			s.copyTo(k.n, s.values[out].Elems, st)
		}
		s.add(c.dst, out, st)
		return
	case torchapi.BuiltinContainers[d]:
		out := s.cont(c.site, tagPlain)
		for _, p := range pos {
			s.elemsIntoCapped(c, p, s.values[out].Elems, st)
		}
		s.add(c.dst, out, st)
		return
	case d == "staticmethod" || d == "classmethod":
		s.copyTo(arg(0), c.dst, st)
		return
	case torchapi.ModuleImporters[d]:
		s.importModule(c, st)
		return
	}
	for _, cc := range torchapi.ContainerClasses {
		if strings.HasSuffix(d, cc) {
			tag := tagPlain
			if strings.HasSuffix(d, "Sequential") {
				tag = tagSequential
			}
			out := s.cont(c.site, tag)
			if tag == tagSequential {
				for i, p := range pos {
					if i >= len(c.prepended()) && a.splat(i-len(c.prepended())) {
						s.elemsIntoCapped(c, p, s.values[out].Elems, st)
					} else {
						s.copyTo(p, s.values[out].Elems, st)
						// nn.Sequential(OrderedDict(...)): its elements.
						s.elemsIntoCapped(c, p, s.values[out].Elems, st)
					}
				}
			} else {
				for _, p := range pos {
					s.elemsIntoCapped(c, p, s.values[out].Elems, st)
				}
			}
			s.add(c.dst, out, st)
			return
		}
	}
	if torchapi.ExtensionLoaders[d] && c.owner != nil && cudaLoad(c.site, c.owner.File.Src) {
		// The module a run-time load of CUDA code returns: its
		// attributes' calls launch kernels (contexts.Launches).
		s.add(c.dst, s.extInst(torchapi.CUDAExtensionModule), st)
	}
	switch {
	case torchapi.TorchObjects[d] || torchapi.CompiledKernel(d):
		s.add(c.dst, s.extInst(d), st)
	case strings.HasPrefix(d, "torch.") && !startsUpper(last) && !strings.HasPrefix(d, "torch.nn.") ||
		strings.HasPrefix(d, "torch.nn.functional.") || strings.HasPrefix(d, "torch.ops."):
		s.add(c.dst, s.tensor, st)
	case startsUpper(last):
		s.add(c.dst, s.extInst(d), st)
	}
}

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}

// cudaLoad reports whether an extension loader's call (torchapi.
// ExtensionLoaders) proves the module holds CUDA code: `with_cuda=True`, a
// non-empty literal list or string for a CUDA keyword (cuda_sources,
// cuda_files), or a literal ".cu" or ".cuh" file in a literal list of
// sources (positional or `sources=`).
func cudaLoad(call *syntax.Node, src []byte) bool {
	if call == nil || call.Kind() != "call" {
		return false
	}
	al := call.Get("arguments")
	if al == nil {
		return false
	}
	cudaFile := func(n *syntax.Node) bool {
		n = syntax.Unparen(n)
		if n == nil || n.Kind() != "list" && n.Kind() != "tuple" {
			return false
		}
		for _, e := range n.NamedChildren() {
			if v, ok := index.StringLit(e, src); ok && (strings.HasSuffix(v, ".cu") || strings.HasSuffix(v, ".cuh")) {
				return true
			}
		}
		return false
	}
	for _, a := range al.NamedChildren() {
		if a.Kind() != "keyword_argument" {
			if cudaFile(a) {
				return true
			}
			continue
		}
		name, v := a.Get("name").Text(src), syntax.Unparen(a.Get("value"))
		switch {
		case name == "with_cuda":
			if v != nil && v.Kind() == "true" {
				return true
			}
		case name == "sources":
			if cudaFile(v) {
				return true
			}
		case torchapi.LoaderCUDAKeywords[name] && v != nil:
			switch v.Kind() {
			case "list", "tuple":
				if len(v.NamedChildren()) > 0 {
					return true
				}
			case "string":
				if t, ok := index.StringLit(v, src); ok && strings.TrimSpace(t) != "" {
					return true
				}
			}
		}
	}
	return false
}
