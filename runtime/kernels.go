package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"github.com/cudagraph-capguard/capguard/templates"
)

// SelfTestModule is the self-test's kernels: the committed PTX of
// templates/cuda/selftest.cu for a GPU, and Go equivalents for the simulator.
// ptx replaces the PTX when not empty.
func SelfTestModule(ptx string) backend.ModuleSource {
	if ptx == "" {
		ptx = templates.SelfTestPTX
	}
	return backend.ModuleSource{
		Name: "selftest",
		PTX:  ptx,
		Go: map[string]backend.KernelFunc{
			"cvt_i64_i32": goCvtI64I32,
			"gather_bf16": goGatherBF16,
		},
	}
}

func argPtr(args []backend.Arg, i int) (backend.Ptr, error) {
	if i >= len(args) {
		return 0, fmt.Errorf("argument %d missing", i)
	}
	p, ok := args[i].(backend.Ptr)
	if !ok {
		return 0, fmt.Errorf("argument %d is %T, want Ptr", i, args[i])
	}
	return p, nil
}

func argI32(args []backend.Arg, i int) (int32, error) {
	if i >= len(args) {
		return 0, fmt.Errorf("argument %d missing", i)
	}
	v, ok := args[i].(int32)
	if !ok {
		return 0, fmt.Errorf("argument %d is %T, want int32", i, args[i])
	}
	return v, nil
}

// goCvtI64I32 is cvt_i64_i32: dst[i] = int32(src[i]) for i < min(n, threads).
func goCvtI64I32(m backend.Memory, grid, block backend.Dim, args []backend.Arg) error {
	src, err := argPtr(args, 0)
	if err != nil {
		return err
	}
	dst, err := argPtr(args, 1)
	if err != nil {
		return err
	}
	n, err := argI32(args, 2)
	if err != nil {
		return err
	}
	cnt := min(int(n), grid.Threads()*block.Threads())
	if cnt <= 0 {
		return nil
	}
	in := make([]byte, 8*cnt)
	if err := m.Read(src, in); err != nil {
		return err
	}
	out := make([]byte, 4*cnt)
	for i := 0; i < cnt; i++ {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(binary.LittleEndian.Uint64(in[8*i:])))
	}
	return m.Write(dst, out)
}

// goGatherBF16 is gather_bf16: out[i] = float32(keys[idx[i] & mask]).
func goGatherBF16(m backend.Memory, grid, block backend.Dim, args []backend.Arg) error {
	idx, err := argPtr(args, 0)
	if err != nil {
		return err
	}
	keys, err := argPtr(args, 1)
	if err != nil {
		return err
	}
	out, err := argPtr(args, 2)
	if err != nil {
		return err
	}
	n, err := argI32(args, 3)
	if err != nil {
		return err
	}
	mask, err := argI32(args, 4)
	if err != nil {
		return err
	}
	cnt := min(int(n), grid.Threads()*block.Threads())
	if cnt <= 0 {
		return nil
	}
	ib := make([]byte, 4*cnt)
	if err := m.Read(idx, ib); err != nil {
		return err
	}
	kb := make([]byte, 2*(int(uint32(mask))+1))
	if err := m.Read(keys, kb); err != nil {
		return err
	}
	ob := make([]byte, 4*cnt)
	for i := 0; i < cnt; i++ {
		j := int32(binary.LittleEndian.Uint32(ib[4*i:])) & mask
		k := uint32(binary.LittleEndian.Uint16(kb[2*j:]))
		binary.LittleEndian.PutUint32(ob[4*i:], k<<16) // bf16 bits are a float32's top half
	}
	return m.Write(out, ob)
}
