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
	} {
		if c.got != c.want {
			t.Errorf("%s is %d bytes, not %d", c.name, c.got, c.want)
		}
	}
}
