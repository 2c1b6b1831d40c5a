package flow

import (
	"testing"
	"unsafe"
)

// TestSizes: the solver holds one node a variable, field and return, one
// constraint an attribute access, call and store, and one callArgs a
// call; a large engine's package has about 640k nodes and 300k
// constraints at its solve's end, when the peak memory is reached. A field
// added to one of them costs that many times its size: mind the memory,
// then update the sizes here.
func TestSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"node", unsafe.Sizeof(node{}), 72},
		{"constraint", unsafe.Sizeof(constraint{}), 88},
		{"callArgs", unsafe.Sizeof(callArgs{}), 80},
		{"fact", unsafe.Sizeof(fact(0)), 4},
	} {
		if c.got != c.want {
			t.Errorf("%s is %d bytes, not %d", c.name, c.got, c.want)
		}
	}
}

// TestFactPacking: a fact gives back the value and the strength it was
// made of, for the largest value id it holds and every strength, and a
// set raised to a stronger strength keeps its value.
func TestFactPacking(t *testing.T) {
	for _, v := range []VID{0, 1, 12345, 1<<factBits - 1} {
		for _, st := range []uint8{sName, sHierarchy, sAnnotated, sResolved} {
			if f := mkFact(v, st); f.vid() != v || f.str() != st {
				t.Errorf("mkFact(%d, %d) gives back %d, %d", v, st, f.vid(), f.str())
			}
		}
	}
	var p ptsSet
	for v := VID(0); v < 3*smallPts; v++ {
		p.insert(v, sName)
	}
	if !p.raise(7, sResolved) || p.raise(7, sAnnotated) {
		t.Error("raise: a stronger strength changed nothing, or a weaker one changed it")
	}
	if st, ok := p.get(7); !ok || st != sResolved {
		t.Errorf("get(7) = %d, %v; want %d", st, ok, sResolved)
	}
	if i := p.find(7); i != 7 || p.facts[i].vid() != 7 {
		t.Errorf("find(7) = %d after the raise", i)
	}
}
