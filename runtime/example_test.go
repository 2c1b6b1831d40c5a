package runtime_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cudagraph-capguard/capguard/runtime"
	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"github.com/cudagraph-capguard/capguard/runtime/sim"
)

// A toy decode server. Its static inputs (the int64 page table a request
// writes), its index buffer (the int32 copy the reader gathers through), the
// bf16 key pool and the output live in an Arena as persistent buffers, so the
// captured step reads and writes the same addresses on every replay.
const (
	rows     = 512 // page-table entries per sequence
	maxBatch = 8
	nKeys    = 1 << 12
)

type server struct {
	env   *runtime.Env
	step  runtime.Step
	graph *runtime.Graph // nil: serve eagerly
	batch int
}

// safeStep converts into a persistent int32 buffer inside the graph.
func safeStep(e *runtime.Env, batch int) error {
	idx := e.Persistent("page_table_i32", 4*maxBatch*rows)
	return reader(e, idx, batch)
}

// tempStep converts into a temporary, as `page_table.to(torch.int32)` does.
func tempStep(e *runtime.Env, batch int) error {
	idx := e.Temp(4 * int64(batch*rows))
	return reader(e, idx, batch)
}

func reader(e *runtime.Env, idx backend.Ptr, batch int) error {
	n := batch * rows
	src := e.Persistent("page_table_i64", 8*maxBatch*rows)
	keys := e.Persistent("keys", 2*nKeys)
	out := e.Persistent("out", 4*maxBatch*rows)
	grid, block := backend.D1((n+255)/256), backend.D1(256)
	e.Launch("cvt_i64_i32", grid, block, src, idx, int32(n))
	e.Launch("gather_bf16", grid, block, idx, keys, out, int32(n), int32(nKeys-1))
	return e.Err()
}

// writeRequest puts a request's page table (and, once, the keys) into the
// persistent input buffers.
func writeRequest(e *runtime.Env, batch, seed int) error {
	src := e.Persistent("page_table_i64", 8*maxBatch*rows)
	keys := e.Persistent("keys", 2*nKeys)
	e.Persistent("out", 4*maxBatch*rows)
	b := make([]byte, 8*batch*rows)
	for i := 0; i < batch*rows; i++ {
		binary.LittleEndian.PutUint64(b[8*i:], uint64((i*7919+seed*104729)%nKeys))
	}
	e.Upload(src, b)
	k := make([]byte, 2*nKeys)
	for i := 0; i < nKeys; i++ {
		binary.LittleEndian.PutUint16(k[2*i:], uint16(math.Float32bits(float32(i%97)/8)>>16))
	}
	e.Upload(keys, k)
	return e.Err()
}

// startUp checks the step before capturing it for production, and falls back
// to eager execution when the check does not come out clean.
func startUp(dev backend.Backend, step runtime.Step, batch int) (*server, *runtime.Report, error) {
	rep, err := runtime.Check(dev, runtime.Case{
		Name:    "decode",
		Modules: []backend.ModuleSource{runtime.SelfTestModule("")},
		Batches: []int{batch},
		Inputs:  func(e *runtime.Env, b, v int) error { return writeRequest(e, b, v) },
		Step:    step,
		Outputs: []runtime.Output{{Key: "out", Type: runtime.Float32, Len: func(b int) int { return b * rows }}},
	}, runtime.Options{})
	if err != nil {
		return nil, nil, err
	}
	env, err := runtime.NewEnv(dev, runtime.EnvOptions{Modules: []backend.ModuleSource{runtime.SelfTestModule("")}})
	if err != nil {
		return nil, nil, err
	}
	s := &server{env: env, step: step, batch: batch}
	if rep.Verdict == runtime.Clean {
		if err := writeRequest(env, batch, 0); err != nil {
			return nil, nil, err
		}
		if err := env.Run(step, batch); err != nil { // warm up: persistent buffers at full size
			return nil, nil, err
		}
		if s.graph, err = env.CaptureGraph(step, batch); err != nil {
			return nil, nil, err
		}
	}
	return s, rep, nil
}

// serve runs one request and returns a checksum of the output.
func (s *server) serve(seed int) (float64, error) {
	if err := writeRequest(s.env, s.batch, seed); err != nil {
		return 0, err
	}
	var err error
	if s.graph != nil {
		err = s.graph.Replay()
	} else {
		err = s.env.Run(s.step, s.batch)
	}
	if err != nil {
		return 0, err
	}
	out, _ := s.env.Arena().Lookup("out")
	b := make([]byte, 4*s.batch*rows)
	s.env.Download(b, out.Addr)
	sum := 0.0
	for i := 0; i < s.batch*rows; i++ {
		sum += float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return sum, s.env.Err()
}

func (s *server) close() {
	if s.graph != nil {
		s.graph.Close()
	}
	s.env.Close()
}

// A Go server keeps its static inputs and index buffers in an Arena, runs
// Check on its step at start-up, captures it when the check is clean, and
// serves eagerly when it is not. The simulator stands in for the GPU here;
// runtime.Open("cuda", 0) gives the real one in a cuda build.
func Example() {
	dev := sim.Open(sim.Options{})
	defer dev.Close()
	for _, st := range []struct {
		name string
		step runtime.Step
	}{{"persistent index buffer", safeStep}, {"temporary index buffer", tempStep}} {
		srv, rep, err := startUp(dev, st.step, 4)
		if err != nil {
			fmt.Println(err)
			return
		}
		mode := "CUDA graph"
		if srv.graph == nil {
			mode = "eager (fallback)"
		}
		sum, err := srv.serve(42)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: check %s, serving with %s, checksum %.2f\n", st.name, rep.Verdict, mode, sum)
		srv.close()
	}
	// Output:
	// persistent index buffer: check clean, serving with CUDA graph, checksum 12344.75
	// temporary index buffer: check write-after-free, serving with eager (fallback), checksum 12344.75
}
