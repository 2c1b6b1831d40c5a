package backend

import (
	"fmt"
	"testing"
)

func TestKindOfSeesThroughWrapping(t *testing.T) {
	f := &Error{Op: "cuGraphLaunch", Code: 700, Kind: Fault, Msg: "illegal address"}
	if KindOf(fmt.Errorf("replay: %w", fmt.Errorf("batch 4: %w", f))) != Fault {
		t.Error("wrapped fault not seen")
	}
	if KindOf(fmt.Errorf("plain")) != Other || KindOf(nil) != Other {
		t.Error("a non-device error has a device kind")
	}
	if got := f.Error(); got != "cuGraphLaunch: illegal address (error 700)" {
		t.Errorf("message %q", got)
	}
}

func TestArgBits(t *testing.T) {
	for _, tc := range []struct {
		a    Arg
		bits uint64
		size int
	}{
		{Ptr(0x7f0000001000), 0x7f0000001000, 8},
		{int32(-1), 0xffffffff, 4},
		{uint32(7), 7, 4},
		{int64(-2), 0xfffffffffffffffe, 8},
		{float32(1), 0x3f800000, 4},
	} {
		bits, size, ok := ArgBits(tc.a)
		if !ok || bits != tc.bits || size != tc.size {
			t.Errorf("%T %v: %#x %d %v", tc.a, tc.a, bits, size, ok)
		}
	}
	if _, _, ok := ArgBits(3); ok {
		t.Error("a Go int is not a kernel argument type")
	}
}
