package flow

// paged is a growable table of T in fixed pages: a new element never
// moves the others, so a pointer to one stays good while the table grows,
// growth copies nothing, and at most one page is allocated but unused.
// The solver's node and constraint tables were slices grown by doubling
// (or preallocated from the source's size): on a kernel library a third of
// their capacity was never used, and each doubling left the old array as
// garbage for the collector, at the solve's memory peak.
type paged[T any] struct {
	pages [][]T
	n     int
}

const (
	pageBits = 12
	pageSize = 1 << pageBits
)

// at is element i (0 <= i < len).
func (p *paged[T]) at(i int32) *T { return &p.pages[i>>pageBits][i&(pageSize-1)] }

// len is how many elements there are.
func (p *paged[T]) len() int { return p.n }

// add appends x and returns its index.
func (p *paged[T]) add(x T) int32 {
	if p.n == len(p.pages)*pageSize {
		p.pages = append(p.pages, make([]T, pageSize))
	}
	i := p.n
	p.pages[i>>pageBits][i&(pageSize-1)] = x
	p.n++
	return int32(i)
}

// nodeTable is the solver's nodes, by NID.
type nodeTable struct{ p paged[node] }

func (t *nodeTable) at(n NID) *node { return t.p.at(int32(n)) }
func (t *nodeTable) len() int       { return t.p.len() }
