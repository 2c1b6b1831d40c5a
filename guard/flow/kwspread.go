package flow

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

// Keywords keep their names through `**`. A `**kwargs` parameter's
// container is key-sensitive (keyed.go): a keyword argument that names no
// parameter is stored under its name, and `kwargs["k"]`,
// `kwargs.get("k")` and `kwargs.pop("k")` read that name only. A
// `**d` at a call site spreads a key-sensitive dictionary (a `{"k": v}`
// literal, a `**kwargs` parameter's container) by name: key k goes to the
// parameter named k, or else under k into the callee's own `**kwargs`;
// Python refuses a key that names neither. Only a dictionary that holds
// elements under no constant key (an `update`, a computed key, a `**`
// inside a literal) still goes to every keyword parameter, as every
// `**d` did before: then a dictionary of a block index and a scheduler,
// passed down `f(q, **kwargs)` chains to a method that every
// implementation of one name shares, reached every keyword parameter of
// every implementation, and from there much of a video model's solve
// (2026-12-04: LightX2V's 8.3 million facts).

// spreadInfo is what one `**d` needs: for a call, the binding to callee
// f (where a key goes by name); for a copy into a dictionary (`dict(d)`,
// `{**d}`, `x.update(d)`), f is nil and every key goes under its name
// into into; for a record (`Rec(**d)`), f is nil and inst's fields take
// the keys. The constraint's dst is the node every element goes to when
// d is not key-sensitive: each keyword parameter, into's elements, or
// each annotated field.
type spreadInfo struct {
	f      *index.Function
	ps     []NID
	byName map[string]int
	into   VID // f's own **kwargs container (or noVID), or the dictionary
	// inst: the record (a dataclass, a class without a project __init__)
	// whose fields take the keys, for `Rec(**d)`; noVID otherwise.
	inst VID
}

// spreadWatch is one `**d` spread watching a key-sensitive dictionary.
type spreadWatch struct {
	ci int32
	st uint8
}

// spreadKw binds the `**d` argument node n of call constraint c to f's
// parameters: a cKwSplat constraint watches n.
func (s *solver) spreadKw(c *constraint, f *index.Function, ps []NID, byName map[string]int, varkw NID, n NID, st uint8) {
	if n < 0 {
		return
	}
	hub := s.newNode()
	// Every parameter that takes a keyword, in parameter order (not
	// byName's: a map's order would make the solver's work order, and so
	// the widening, differ from run to run).
	for j, p := range f.Params {
		if k, ok := byName[p.Name]; ok && k == j {
			s.copyTo(hub, s.argDst(f, ps, j), st)
		}
	}
	sp := &spreadInfo{f: f, ps: ps, byName: byName, into: noVID, inst: noVID}
	if varkw >= 0 {
		sp.into = s.contOf(varkw)
		if sp.into != noVID {
			s.copyTo(hub, s.writeElems(sp.into), st)
		}
	}
	s.watchSpread(c.owner, c.site, hub, sp, n, st)
}

// spreadInto copies the dictionary node n holds into the dictionary d,
// key by key where n's is key-sensitive.
func (s *solver) spreadInto(owner *index.Function, site *Node, d VID, n NID, st uint8) {
	if n < 0 {
		return
	}
	hub := s.newNode()
	s.copyTo(hub, s.writeElems(d), st)
	s.watchSpread(owner, site, hub, &spreadInfo{into: d, inst: noVID}, n, st)
}

// spreadFields sets the fields of the record inst from the dictionary
// node n holds (`Rec(**d)`): key k sets field k; every element goes to
// every field of fields (the annotated ones) where d is not
// key-sensitive.
func (s *solver) spreadFields(owner *index.Function, site *Node, inst VID, fields []string, n NID, st uint8) {
	if n < 0 {
		return
	}
	hub := s.newNode()
	for _, name := range fields {
		s.copyTo(hub, s.field(inst, name), st)
	}
	s.watchSpread(owner, site, hub, &spreadInfo{into: noVID, inst: inst}, n, st)
}

func (s *solver) watchSpread(owner *index.Function, site *Node, hub NID, sp *spreadInfo, n NID, st uint8) {
	ci := s.newCons(constraint{kind: cKwSplat, owner: owner, site: site, dst: hub})
	if s.spreads == nil {
		s.spreads = map[int32]*spreadInfo{}
	}
	s.spreads[ci] = sp
	s.watchCapped(n, ci, st)
}

// kwSpread: one value arrived at a `**d`.
func (s *solver) kwSpread(ci int32, v VID, st uint8) {
	if info := s.keys[v]; info != nil && info.dict && !info.unkeyed {
		info.spreads = append(info.spreads, spreadWatch{ci, st})
		for _, k := range append([]string{}, info.keys...) {
			s.spreadKey(ci, v, k, st)
		}
		if info.hasLoose {
			s.spreadLoose(ci, v, st)
		}
		return
	}
	s.spreadAll(ci, v, st)
}

// spreadAll sends every element of v to the constraint's dst (each
// keyword parameter, or the dictionary's elements); the callee's
// `**kwargs`, or the dictionary, then holds them under no constant key.
func (s *solver) spreadAll(ci int32, v VID, st uint8) {
	s.spreadHubLoose(ci, st)
	s.iter(s.cons.at(ci), v, st)
}

// spreadLoose sends the loose elements of dictionary v (elements under no
// constant key, keyed.go) where spreadAll sends every element: any of
// them may be under any key.
func (s *solver) spreadLoose(ci int32, v VID, st uint8) {
	s.spreadHubLoose(ci, st)
	s.copyTo(s.keys[v].loose, s.cons.at(ci).dst, st)
}

// spreadHubLoose: what reaches the constraint's dst goes in under no
// constant key into the callee's `**kwargs`, or the dictionary.
func (s *solver) spreadHubLoose(ci int32, st uint8) {
	if sp := s.spreads[ci]; sp.into != noVID {
		s.copyTo(s.cons.at(ci).dst, s.looseElems(sp.into), st)
	}
}

// spreadKey sends key k of v to the parameter named k, or under k into
// the callee's `**kwargs` or the dictionary.
func (s *solver) spreadKey(ci int32, v VID, k string, st uint8) {
	sp := s.spreads[ci]
	if sp.f == nil && sp.inst == noVID {
		s.putKey(sp.into, k, s.keyField(v, k), st)
		return
	}
	if !strings.HasPrefix(k, "'") {
		return // not a string: Python refuses it as a keyword
	}
	src := s.keyField(v, k)
	if sp.inst != noVID {
		s.copyTo(src, s.field(sp.inst, k[1:]), st)
		return
	}
	if j, ok := sp.byName[k[1:]]; ok {
		s.copyTo(src, s.argDst(sp.f, sp.ps, j), st)
	} else if sp.into != noVID {
		s.putKey(sp.into, k, src, st)
	}
}

// keyedDict is a key-sensitive dictionary made at site: a literal, a
// `**kwargs` parameter's, a dict() call's.
func (s *solver) keyedDict(site *Node) VID {
	v := s.keyedCont(site)
	s.keys[v].dict = true
	return v
}
