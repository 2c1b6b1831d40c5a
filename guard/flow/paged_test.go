package flow

import "testing"

// TestPaged: elements keep their index and their address while the table
// grows past several pages, and each visits them in order.
func TestPaged(t *testing.T) {
	var p paged[int]
	first := p.at(p.add(7))
	n := 3*pageSize + 5
	for i := 1; i < n; i++ {
		if got := p.add(i * 2); got != int32(i) {
			t.Fatalf("add %d returned index %d", i, got)
		}
	}
	if p.len() != n {
		t.Fatalf("len %d, want %d", p.len(), n)
	}
	if first != p.at(0) || *first != 7 {
		t.Fatal("the first element moved as the table grew")
	}
	if len(p.pages) != 4 {
		t.Errorf("%d pages for %d elements, want 4", len(p.pages), n)
	}
	k := 0
	p.each(func(i int32, x *int) {
		if int(i) != k || (i > 0 && *x != int(i)*2) {
			t.Fatalf("each: element %d = %d at step %d", i, *x, k)
		}
		k++
	})
	if k != n {
		t.Errorf("each visited %d, want %d", k, n)
	}
}
