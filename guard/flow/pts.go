package flow

// ptsSet is a node's values with their strengths, in the order they
// arrived. Iteration follows that order, so the solver's work order, and
// with it every order-dependent choice (which containers a node holds
// before it widens, which value the name fallback sees first), is the same
// on every run; a Go map's iteration order is not.
//
// Lookups scan the facts while there are few (most nodes hold a value or
// two); past smallPts an open-addressing table of fact indexes, keyed by
// the value id, answers them. It is cheaper than a map[VID]uint8 (no
// hashing of a generic key, no tombstones: facts are never removed) and
// keeps the facts in one slice.
type ptsSet struct {
	facts []fact
	tab   *ptsIndex // nil while len(facts) <= smallPts
}

// fact is one value of a set with its strength: the value id in the low
// factBits bits, the strength (sName..sResolved) above them. A struct of
// the two took 8 bytes with its padding; the sets' facts were the largest
// table of a solve with millions of them (Megatron-LM's package: 5 M).
type fact uint32

// factBits is how many bits a fact keeps for its value id (intern refuses
// more values).
const factBits = 29

func mkFact(v VID, s uint8) fact { return fact(uint32(v) | uint32(s)<<factBits) }

// vid is the fact's value.
func (f fact) vid() VID { return VID(f & (1<<factBits - 1)) }

// str is the fact's strength.
func (f fact) str() uint8 { return uint8(f >> factBits) }

// ptsIndex maps a value to its fact's index plus one (0: an empty slot);
// its size is a power of two, at least twice the facts.
type ptsIndex struct {
	slots slotTable
}

const smallPts = 8

// slot is where probing for v starts (value ids are dense small
// integers: a multiplicative hash, its high bits folded down, spreads a
// run of them over the table).
func (t *ptsIndex) slot(v VID) uint32 {
	h := uint32(v) * 0x9E3779B1
	return (h ^ h>>16) & t.slots.mask
}

// find returns the index of v's fact, or -1.
func (p *ptsSet) find(v VID) int {
	if p.tab == nil {
		for i := range p.facts {
			if p.facts[i].vid() == v {
				return i
			}
		}
		return -1
	}
	if slots := p.tab.slots.narrow; slots != nil {
		return probe(slots, p.tab.slot(v), p.facts, v)
	}
	return probe(p.tab.slots.wide, p.tab.slot(v), p.facts, v)
}

// probe looks for v's fact from slot i on, in a table of either width
// (each width its own instance: the loop is ptsSet's hottest).
func probe[S uint16 | int32](slots []S, i uint32, facts []fact, v VID) int {
	mask := uint32(len(slots) - 1)
	for ; ; i = (i + 1) & mask {
		k := slots[i]
		if k == 0 {
			return -1
		}
		if facts[k-1].vid() == v {
			return int(k - 1)
		}
	}
}

func (p *ptsSet) get(v VID) (uint8, bool) {
	if i := p.find(v); i >= 0 {
		return p.facts[i].str(), true
	}
	return 0, false
}

func (p *ptsSet) set(v VID, s uint8) {
	if i := p.find(v); i >= 0 {
		p.facts[i] = mkFact(v, s)
		return
	}
	p.insert(v, s)
}

// raise puts v in with strength s unless it is there at s or stronger,
// and reports whether anything changed (one lookup, where get then set
// would be two).
func (p *ptsSet) raise(v VID, s uint8) bool {
	if i := p.find(v); i >= 0 {
		if p.facts[i].str() >= s {
			return false
		}
		p.facts[i] = mkFact(v, s)
		return true
	}
	p.insert(v, s)
	return true
}

// insert adds v, which is not in the set.
func (p *ptsSet) insert(v VID, s uint8) {
	p.facts = append(p.facts, mkFact(v, s))
	switch n := len(p.facts); {
	case p.tab == nil && n <= smallPts:
	case p.tab == nil || 2*n > int(p.tab.slots.mask)+1:
		p.rehash()
	default:
		p.tab.insert(p.facts, int32(n-1))
	}
}

// rehash sizes the table for the facts (the least power of two over
// twice them: a table between a quarter and half full, which insert keeps)
// and fills it. Four slots a fact, as it was, made the tables half of a
// large solve's set memory (66 of 103 MB on LightX2V) for no fewer probes
// that a profile could see.
func (p *ptsSet) rehash() {
	size := 4 * smallPts
	for size < 2*len(p.facts)+2 {
		size *= 2
	}
	if p.tab == nil {
		p.tab = &ptsIndex{}
	}
	p.tab.slots = makeSlots(size)
	for i := range p.facts {
		p.tab.insert(p.facts, int32(i))
	}
}

// insert puts fact i (not in the table yet) in its slot.
func (t *ptsIndex) insert(facts []fact, i int32) {
	t.slots.place(t.slot(facts[i].vid()), i+1)
}

// slotTable is the slots of an open-addressing table of indexes plus one
// (ptsIndex, edgeIndex), of two bytes each while every index it can hold
// before it grows fits in them (a table grows before it is half full, so
// one of up to 2^16 slots), else four. Most tables are that small, and the
// tables' slots were most of a large solve's set memory with four bytes
// each (the sets' 165 MB on an RL library of 458k lines, 106 MB of them
// slots).
type slotTable struct {
	narrow []uint16
	wide   []int32
	mask   uint32 // the size less one
}

// narrowSlots is the most slots a narrow table has.
const narrowSlots = 1 << 16

// makeSlots makes a table of size slots, a power of two.
func makeSlots(size int) slotTable {
	if size <= narrowSlots {
		return slotTable{narrow: make([]uint16, size), mask: uint32(size - 1)}
	}
	return slotTable{wide: make([]int32, size), mask: uint32(size - 1)}
}

func (t *slotTable) size() int { return int(t.mask) + 1 }

func (t *slotTable) at(i uint32) int32 {
	if t.narrow != nil {
		return int32(t.narrow[i])
	}
	return t.wide[i]
}

// place puts k in the first empty slot from i on.
func (t *slotTable) place(i uint32, k int32) {
	if t.narrow != nil {
		placeIn(t.narrow, i, uint16(k))
	} else {
		placeIn(t.wide, i, k)
	}
}

func placeIn[S uint16 | int32](slots []S, i uint32, k S) {
	mask := uint32(len(slots) - 1)
	for slots[i] != 0 {
		i = (i + 1) & mask
	}
	slots[i] = k
}

func (p *ptsSet) len() int { return len(p.facts) }

// each calls fn for every value in arrival order; values added meanwhile
// may or may not be visited (the worklist sends them anyway).
func (p *ptsSet) each(fn func(VID, uint8)) {
	for i := 0; i < len(p.facts); i++ {
		f := p.facts[i]
		fn(f.vid(), f.str())
	}
}
