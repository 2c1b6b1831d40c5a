package flow

import "testing"

// TestCallArgsMore: a call whose positional arguments have no splat,
// string literal or constant keeps no per-argument record (more is nil),
// and one that has them answers each argument at its own index, the
// arguments before the first such one included.
func TestCallArgsMore(t *testing.T) {
	plain := &callArgs{}
	plain.addPos(1, false, "", false, "")
	plain.addPos(2, false, "", false, "")
	if plain.more != nil {
		t.Errorf("plain arguments keep a record: %+v", plain.more)
	}
	a := &callArgs{}
	a.addPos(1, false, "", false, "")
	a.addPos(2, true, "", false, "")
	a.addPos(3, false, "name", true, "'name'")
	a.addPos(4, false, "", false, "")
	if len(a.pos) != 4 {
		t.Fatalf("%d positional arguments, want 4", len(a.pos))
	}
	for i, want := range []bool{false, true, false, false, false} {
		if got := a.splat(i); got != want {
			t.Errorf("splat(%d) = %v, want %v", i, got, want)
		}
	}
	for i, want := range []string{"", "", "name", "", ""} {
		l, ok := a.lit(i)
		if l != want || ok != (want != "") {
			t.Errorf("lit(%d) = %q, %v; want %q", i, l, ok, want)
		}
	}
	if got := a.konst(2); got != "'name'" {
		t.Errorf("konst(2) = %q, want 'name'", got)
	}
	if got := a.konst(0) + a.konst(3) + a.konst(9) + a.konst(-1); got != "" {
		t.Errorf("konst of the other arguments = %q, want none", got)
	}
	if _, ok := a.lit(-1); ok {
		t.Error("lit(-1) is a literal")
	}
}
