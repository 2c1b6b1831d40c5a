package flow

// ptsSet is a node's values with their strengths: a short slice while it
// is small (most nodes hold a value or two), a map beyond.
type ptsSet struct {
	small []fact
	big   map[VID]uint8
}

type fact struct {
	v VID
	s uint8
}

const smallPts = 8

func (p *ptsSet) get(v VID) (uint8, bool) {
	if p.big != nil {
		s, ok := p.big[v]
		return s, ok
	}
	for _, f := range p.small {
		if f.v == v {
			return f.s, true
		}
	}
	return 0, false
}

func (p *ptsSet) set(v VID, s uint8) {
	if p.big != nil {
		p.big[v] = s
		return
	}
	for i := range p.small {
		if p.small[i].v == v {
			p.small[i].s = s
			return
		}
	}
	if len(p.small) < smallPts {
		p.small = append(p.small, fact{v, s})
		return
	}
	p.big = make(map[VID]uint8, 2*smallPts)
	for _, f := range p.small {
		p.big[f.v] = f.s
	}
	p.small = nil
	p.big[v] = s
}

func (p *ptsSet) len() int {
	if p.big != nil {
		return len(p.big)
	}
	return len(p.small)
}

// each calls fn for every value; values added meanwhile may or may not be
// visited (the worklist sends them anyway).
func (p *ptsSet) each(fn func(VID, uint8)) {
	if p.big != nil {
		for v, s := range p.big {
			fn(v, s)
		}
		return
	}
	for i := 0; i < len(p.small); i++ {
		f := p.small[i]
		fn(f.v, f.s)
		if p.big != nil {
			// It grew into a map while we were iterating: the rest of
			// the values are all there, and were queued when added.
			return
		}
	}
}
