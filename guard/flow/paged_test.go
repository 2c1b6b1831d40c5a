package flow

import "testing"

// TestPaged: elements keep their index and their address while the table
// grows past several pages, and hold what was added, in order.
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
	for i := int32(1); i < int32(n); i++ {
		if x := *p.at(i); x != int(i)*2 {
			t.Fatalf("element %d = %d, want %d", i, x, i*2)
		}
	}
}
