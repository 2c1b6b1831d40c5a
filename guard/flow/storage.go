package flow

import "github.com/cudagraph-capguard/capguard/guard/index"

// Project classes that derive from a builtin container. An instance of
// `class Cfg(dict)` or `class Cache(OrderedDict)` is a container: until
// 2026-12-06 the analysis modelled its instances as objects only, so
// `cfg["k"]`, `cfg.get("k")`, `for x in cache.values()` and a store
// `cfg["k"] = v` gave and kept nothing, and a method the builtin defines
// (`get`, `update`) was a call with no callee. Such a class's instances
// keep their elements in one container, its storage (one abstract object
// a class, as for attributes): a dictionary's is key-sensitive with loose
// elements (keyed.go), a list's, set's or deque's is not. Indexing,
// storing, iterating and the builtin's methods reach the storage wherever
// no project class on the instance's MRO defines the method (a project
// `__getitem__` or `__setitem__` runs instead, as before); so do
// `super().__setitem__(k, v)` and the builtin's other methods called through
// super() in an override, and `Cfg(d, k=v)` of a class without a project
// `__init__` fills it as `dict(d, k=v)` does. A project `__init__` that
// fills the instance through `dict.__setitem__(self, k, v)` is not followed
// (the unbound builtin method on an explicit self).

// containerBases are the builtin containers (by their names' last part)
// whose project subclasses keep their elements in a storage container, and
// whether each is a mapping (in the order they are tried).
var containerBases = []struct {
	name    string
	mapping bool
}{
	{"dict", true}, {"OrderedDict", true}, {"defaultdict", true}, {"UserDict", true}, {"Counter", true},
	{"list", false}, {"UserList", false}, {"deque", false}, {"set", false},
}

// storage is the container that holds the elements of the instances of
// project class k, for a class that derives from a builtin container.
func (s *solver) storage(k *index.Class) (VID, bool) {
	if k == nil || k.Node == nil {
		return noVID, false
	}
	if v, ok := s.storages[k]; ok {
		return v, v != noVID
	}
	v := noVID
	for _, b := range containerBases {
		if !s.h.Derives(k, b.name) {
			continue
		}
		// The storage of k's instances is made at k's definition, even
		// where k inherits the builtin from a project base: one abstract
		// object a class.
		if b.mapping {
			v = s.keyedDict(k.Node)
		} else {
			v = s.cont(k.Node, tagPlain)
		}
		break
	}
	if s.storages == nil {
		s.storages = map[*index.Class]VID{}
	}
	s.storages[k] = v
	return v, v != noVID
}

// storageOf is the storage of v when v is an instance of a project class
// that derives from a builtin container and no project class on its MRO
// defines method; for super() in a method of cls, when no project class
// after cls on the instance's MRO defines it.
func (s *solver) storageOf(v VID, method string) (VID, bool) {
	val := s.values[v]
	switch val.Kind {
	case VInst:
		if s.h.Lookup(val.Cls, method) != nil {
			return noVID, false
		}
		return s.storage(val.Cls)
	case VSuper:
		self := s.values[val.Recv]
		if self.Kind != VInst {
			return noVID, false
		}
		after := false
		for _, m := range s.h.MRO(self.Cls) {
			if after && m.Methods[method] != nil {
				return noVID, false
			}
			if m == val.Cls {
				after = true
			}
		}
		return s.storage(self.Cls)
	}
	return noVID, false
}

// fillStorage: `C(d, k=v)` of a class deriving from a builtin container,
// without a project __init__ (the caller's test), fills the storage of instance i as the
// builtin's constructor does.
func (s *solver) fillStorage(c *constraint, i VID, st uint8) {
	sv, ok := s.storage(s.values[i].Cls)
	if !ok || c.args == nil {
		return
	}
	a := c.args
	if s.keys[sv] != nil && s.keys[sv].dict {
		for _, p := range append(append([]NID{}, a.pos...), a.kwSplat...) {
			s.spreadInto(c.owner, c.site, sv, p, st)
		}
		for _, k := range a.kw {
			s.putKey(sv, "'"+k.name, k.n, st)
		}
		return
	}
	for _, p := range a.pos {
		s.elemsInto(c, p, s.looseElems(sv), st)
	}
}
