package runtime

import (
	"encoding/binary"
	"math"
	"math/rand"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

// The self-test's reader: a page table of rowLen int64 entries per sequence,
// converted to int32 and used to gather bf16 keys from a pool of nKeys.
const (
	rowLen = 1024
	nKeys  = 1 << 16
	block  = 256
)

// Planted is a self-test case and the verdict a working detector gives it.
type Planted struct {
	Case     Case
	Expected Verdict
	// Why says what the case plants.
	Why string
}

func grid(n int) backend.Dim { return backend.D1((n + block - 1) / block) }

// readerInputs writes a new page table (int64, in "src") for a batch and,
// for the capture's variant 0, the key pool.
func readerInputs(seed int64, maxBatch int) func(e *Env, batch, variant int) error {
	return func(e *Env, batch, variant int) error {
		src := e.Persistent("src", 8*int64(maxBatch*rowLen))
		keys := e.Persistent("keys", 2*nKeys)
		e.Persistent("out", 4*int64(maxBatch*rowLen))
		r := rand.New(rand.NewSource(seed + int64(1000*batch+variant)))
		n := batch * rowLen
		b := make([]byte, 8*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(r.Int63n(1<<31)))
		}
		e.Upload(src, b)
		if variant == 0 {
			kr := rand.New(rand.NewSource(seed))
			kb := make([]byte, 2*nKeys)
			for i := 0; i < nKeys; i++ {
				f := float32(kr.NormFloat64())
				binary.LittleEndian.PutUint16(kb[2*i:], uint16(math.Float32bits(f)>>16))
			}
			e.Upload(keys, kb)
		}
		return e.Err()
	}
}

// gather launches the reader over idx for a batch.
func gather(e *Env, idx backend.Ptr, batch int) {
	n := batch * rowLen
	keys, _ := e.Arena().Lookup("keys")
	out, _ := e.Arena().Lookup("out")
	e.Launch("gather_bf16", grid(n), backend.D1(block), idx, keys.Addr, out.Addr, int32(n), int32(nKeys-1))
}

// convert launches the int64 -> int32 conversion of the page table into dst.
func convert(e *Env, dst backend.Ptr, batch int) {
	n := batch * rowLen
	src, _ := e.Arena().Lookup("src")
	e.Launch("cvt_i64_i32", grid(n), backend.D1(block), src.Addr, dst, int32(n))
}

func readerOutputs() []Output {
	return []Output{{Key: "out", Type: Float32, Len: func(b int) int { return b * rowLen }}}
}

// PlantedCases are the self-test's cases, in order: (a) write-after-free,
// (b) stale-read, (c) and (d) clean, (e) capture-error. ptx replaces the
// committed PTX when not empty.
func PlantedCases(ptx string) []Planted {
	mod := []backend.ModuleSource{SelfTestModule(ptx)}
	const b = 64 // 65,536 page-table entries, as in the reference probe
	var prepared backend.Ptr
	return []Planted{
		{
			Expected: WriteAfterFree,
			Why:      "temporary converted into and read inside the capture, freed after: the graph writes memory it no longer owns",
			Case: Case{
				Name: "temp-inside-capture", Modules: mod, Batches: []int{b},
				Inputs:  readerInputs(1, b),
				Outputs: readerOutputs(),
				Step: func(e *Env, batch int) error {
					tmp := e.Temp(4 * int64(batch*rowLen))
					convert(e, tmp, batch)
					gather(e, tmp, batch)
					return e.Err()
				},
			},
		},
		{
			Expected: StaleRead,
			Why:      "temporary converted before the capture, only the reader captured: replays read the first batch's (freed) page table",
			Case: Case{
				Name: "temp-before-capture", Modules: mod, Batches: []int{b},
				Inputs:  readerInputs(2, b),
				Outputs: readerOutputs(),
				Prepare: func(e *Env, batch int) error {
					prepared = e.Temp(4 * int64(batch*rowLen))
					convert(e, prepared, batch)
					return e.Err()
				},
				Step: func(e *Env, batch int) error {
					gather(e, prepared, batch)
					return e.Err()
				},
			},
		},
		{
			Expected: Clean,
			Why:      "persistent int32 buffer refreshed by a captured conversion (the fix)",
			Case: Case{
				Name: "persistent-refreshed", Modules: mod, Batches: []int{b},
				Inputs:  readerInputs(3, b),
				Outputs: readerOutputs(),
				Step:    persistentStep(b),
			},
		},
		{
			Expected: Clean,
			Why:      "graphs at batch sizes 1, 8 and 64 share one persistent buffer sized for the largest, replayed in turn",
			Case: Case{
				Name: "persistent-shared-batches", Modules: mod, Batches: []int{1, 8, b},
				Inputs:  readerInputs(4, b),
				Outputs: readerOutputs(),
				Step:    persistentStep(b),
			},
		},
		{
			Expected: CaptureError,
			Why:      "a stream sync inside the captured step (a host read such as .item()): the capture is invalidated",
			Case: Case{
				Name: "sync-inside-capture", Modules: mod, Batches: []int{b},
				Inputs:  readerInputs(5, b),
				Outputs: readerOutputs(),
				Step: func(e *Env, batch int) error {
					idx := e.Persistent("idx32", 4*int64(b*rowLen))
					convert(e, idx, batch)
					e.Synchronize()
					gather(e, idx, batch)
					return e.Err()
				},
			},
		},
	}
}

func persistentStep(maxBatch int) Step {
	return func(e *Env, batch int) error {
		idx := e.Persistent("idx32", 4*int64(maxBatch*rowLen))
		convert(e, idx, batch)
		gather(e, idx, batch)
		return e.Err()
	}
}
