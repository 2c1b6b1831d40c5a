package flow

import (
	"math"
	"slices"
	"strconv"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Key-sensitive containers. A container made by a literal (`[f, g]`,
// `{"a": f}`) keeps one node per constant key besides the node of all its
// elements: `xs[1]` and `d["a"]` read just that key. A list does so as
// long as nothing put elements in without a constant key (append, a
// computed index, a splat): from then on every read gets every element,
// and the readers already served get them too. A dictionary keeps its
// keys whatever is put into it: what goes in under no constant key (a
// computed key, an update from a dictionary whose keys are not known, a
// `**` of one) goes to one more node, its loose elements, which every read
// by a constant key gets besides that key's (`d[name] = v` may have stored
// under "a", but `d["b"] = w` did not store under "a"). A dictionary read
// as configuration all over a project lost its keys to one computed-key
// store or one update from a comprehension, and then every read of any
// key held every value stored under every key (Megatron-LM's package
// passed the fact budget at 8.1 million facts, 5.0 million now; see
// docs/callgraph.md). A slice
// with constant bounds of a key-sensitive list is a new list of the keys
// it covers, renumbered.

type keyInfo struct {
	unkeyed bool
	dict    bool // a dictionary: its string keys are keywords (kwspread.go)
	keys    []string
	keySet  map[string]bool
	readers []keyRead
	slices  []sliceWatch
	spreads []spreadWatch // `**d` spreads by name (kwspread.go)
	// loose (a dictionary's, once hasLoose): the elements put in under no
	// constant key (looseElems).
	loose    NID
	hasLoose bool
}

type keyRead struct {
	dst NID
	st  uint8
}

type sliceWatch struct {
	lo, hi int // hi < 0: open
	r      VID
	st     uint8
}

// keyedCont is the literal container made at site, key-sensitive.
func (s *solver) keyedCont(site *Node) VID {
	v := s.cont(site, tagPlain)
	if s.keys[v] == nil {
		s.keys[v] = &keyInfo{keySet: map[string]bool{}}
	}
	return v
}

// keyField is the node of constant key k of container v.
func (s *solver) keyField(v VID, k string) NID {
	n := s.field(v, "#"+k)
	info := s.keys[v]
	if info != nil && !info.keySet[k] {
		info.keySet[k] = true
		info.keys = append(info.keys, k)
		for _, w := range info.slices {
			s.sliceKey(v, k, w)
		}
		for _, w := range info.spreads {
			s.spreadKey(w.ci, v, k, w.st)
		}
	}
	return n
}

// putKey stores src under constant key k of v (and among all its elements).
func (s *solver) putKey(v VID, k string, src NID, st uint8) {
	s.copyTo(src, s.writeElems(v), st)
	if s.keys[v] != nil {
		s.copyTo(src, s.keyField(v, k), st)
	}
}

// unkey marks v as holding elements under no constant key.
func (s *solver) unkey(v VID) {
	info := s.keys[v]
	if info == nil || info.unkeyed {
		return
	}
	info.unkeyed = true
	for _, r := range info.readers {
		s.copyTo(s.values[v].Elems, r.dst, r.st)
	}
	for _, w := range info.slices {
		s.unkey(w.r)
		s.copyTo(s.values[v].Elems, s.values[w.r].Elems, w.st)
	}
	for _, w := range info.spreads {
		s.spreadAll(w.ci, v, w.st)
	}
}

// storeElem stores src into container v under constant key k, or under no
// constant key when k is "" (`v[k] = src`).
func (s *solver) storeElem(v VID, k string, src NID, st uint8) {
	if k != "" {
		s.putKey(v, k, src, st)
		return
	}
	s.copyTo(src, s.looseElems(v), st)
}

// looseElems is the node that an element put into v under no constant
// key goes to: a dictionary's loose elements (made on first use, with
// every element of them among v's elements and sent to the readers and
// spreads of v's keys), or, for any other container, its elements, v no
// longer key-sensitive (unkey).
func (s *solver) looseElems(v VID) NID {
	info := s.keys[v]
	if info == nil || !info.dict {
		s.unkey(v)
		return s.writeElems(v)
	}
	if !info.hasLoose {
		info.hasLoose = true
		info.loose = s.newNode()
		s.copyTo(info.loose, s.values[v].Elems, sResolved)
		for _, r := range slices.Clone(info.readers) {
			s.copyTo(info.loose, r.dst, r.st)
		}
		for _, w := range slices.Clone(info.spreads) {
			s.spreadLoose(w.ci, v, w.st)
		}
	}
	return info.loose
}

// readKey sends key k of v to dst, with a dictionary's loose elements
// (every element when v is not key-sensitive).
func (s *solver) readKey(v VID, k string, dst NID, st uint8) {
	info := s.keys[v]
	if info == nil || info.unkeyed || k == "" {
		s.copyTo(s.values[v].Elems, dst, st)
		return
	}
	info.readers = append(info.readers, keyRead{dst, st})
	s.copyTo(s.keyField(v, k), dst, st)
	if info.hasLoose {
		s.copyTo(info.loose, dst, st)
	}
}

// slice sends v[lo:hi] to dst: for a key-sensitive list, a new list of
// the covered keys; for anything else, v's own elements (v itself).
func (s *solver) slice(site *Node, v VID, lo, hi int, dst NID, st uint8) {
	info := s.keys[v]
	if info == nil || info.unkeyed {
		s.add(dst, v, st)
		return
	}
	r := s.keyedCont(site)
	w := sliceWatch{lo: lo, hi: hi, r: r, st: st}
	info.slices = append(info.slices, w)
	for _, k := range append([]string{}, info.keys...) {
		s.sliceKey(v, k, w)
	}
	s.add(dst, r, st)
}

func (s *solver) sliceKey(v VID, k string, w sliceWatch) {
	i, err := strconv.Atoi(k)
	if err != nil || i < w.lo || w.hi >= 0 && i >= w.hi {
		return
	}
	s.putKey(w.r, strconv.Itoa(i-w.lo), s.keyField(v, k), w.st)
}

// sliceBounds reads a constant `a:b` slice (no step): its bounds, ok (not
// for a bound past int32, which the constraint keeps).
func sliceBounds(n *Node, src []byte) (lo, hi int, ok bool) {
	if n == nil || n.Kind() != "slice" {
		return 0, 0, false
	}
	lo, hi = 0, -1
	colons := 0
	for _, c := range n.Children() {
		switch {
		case c.Kind() == ":":
			colons++
		case c.Named():
			v, err := strconv.Atoi(syntax.Unparen(c).Text(src))
			if err != nil || v < 0 || v > math.MaxInt32 {
				return 0, 0, false
			}
			if colons == 0 {
				lo = v
			} else if colons == 1 {
				hi = v
			} else {
				return 0, 0, false
			}
		}
	}
	return lo, hi, colons == 1
}
