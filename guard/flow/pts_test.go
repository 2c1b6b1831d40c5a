package flow

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestPtsSet checks ptsSet against a map and a list of arrivals: every
// lookup agrees, strengths update in place, and iteration follows arrival
// order, through the growth from scanned slice to table and the table's
// rehashes, and from two-byte slots to four (slotTable).
func TestPtsSet(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, smallPts, smallPts + 1, 100, 5000, narrowSlots / 2} { // the last grows past narrow slots
		var p ptsSet
		want := map[VID]uint8{}
		var order []VID
		for i := 0; i < 3*n; i++ {
			v := VID(r.Intn(2*n + 1))
			if i%7 == 0 {
				v = VID(r.Int31n(1 << factBits)) // sparse ids too, up to the largest a fact holds
			}
			s := uint8(1 + r.Intn(4))
			if _, ok := want[v]; !ok {
				order = append(order, v)
			}
			want[v] = s
			p.set(v, s)
		}
		if p.len() != len(want) {
			t.Fatalf("n=%d: len %d, want %d", n, p.len(), len(want))
		}
		for v, s := range want {
			if got, ok := p.get(v); !ok || got != s {
				t.Fatalf("n=%d: get(%d) = %d, %v; want %d", n, v, got, ok, s)
			}
		}
		for i := 0; i < 100; i++ {
			v := VID(-1 - i)
			if _, ok := p.get(v); ok {
				t.Fatalf("n=%d: get(%d) found a value never set", n, v)
			}
		}
		i := 0
		p.each(func(v VID, s uint8) {
			if v != order[i] || s != want[v] {
				t.Fatalf("n=%d: fact %d is (%d, %d), want (%d, %d)", n, i, v, s, order[i], want[order[i]])
			}
			i++
		})
		if i != len(order) {
			t.Fatalf("n=%d: each visited %d facts, want %d", n, i, len(order))
		}
	}
}

// BenchmarkPtsSet fills sets of the sizes the solver's nodes have (most
// hold a value or two, some tens, a few thousands) and looks every value
// up again, as add does before it queues one.
func BenchmarkPtsSet(b *testing.B) {
	for _, size := range []int{2, 12, 48, 3000} {
		b.Run(fmt.Sprintf("size%d", size), func(b *testing.B) {
			vs := make([]VID, size)
			r := rand.New(rand.NewSource(int64(size)))
			for i := range vs {
				vs[i] = VID(r.Intn(60000))
			}
			for i := 0; i < b.N; i++ {
				var p ptsSet
				for _, v := range vs {
					if _, ok := p.get(v); !ok {
						p.set(v, sResolved)
					}
				}
				for _, v := range vs {
					p.get(v)
				}
			}
		})
	}
}

// TestEdgeIndex: every edge added is found again by its destination,
// transform and receiver, and no other is, through the table's growth
// from two-byte slots to four (slotTable).
func TestEdgeIndex(t *testing.T) {
	var idx edgeIndex
	var edges []edge
	n := narrowSlots // past the narrow tables' half
	for i := 0; i < n; i++ {
		edges = append(edges, edge{dst: NID(i / 3), tr: transform(i % 3), recv: VID(i % 5)})
		idx.add(edges, i)
	}
	if idx.slots.wide == nil {
		t.Fatalf("%d edges in a narrow table of %d slots", n, idx.slots.size())
	}
	for i, e := range edges {
		if got := idx.find(edges, e.dst, e.tr, e.recv); got != i {
			t.Fatalf("edge %d found at %d", i, got)
		}
	}
	if got := idx.find(edges, NID(n), trNone, 0); got != -1 {
		t.Fatalf("an edge never added found at %d", got)
	}
}
