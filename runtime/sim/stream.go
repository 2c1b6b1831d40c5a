package sim

import (
	"encoding/binary"
	"fmt"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

type kernel struct {
	name string
	fn   backend.KernelFunc
}

func (k *kernel) Name() string { return k.name }

type module struct {
	d      *Device
	src    backend.ModuleSource
	closed bool
}

// LoadModule loads the Go half of a module; its PTX is ignored.
func (d *Device) LoadModule(src backend.ModuleSource) (backend.Module, error) {
	if err := d.check("cuModuleLoadData"); err != nil {
		return nil, err
	}
	if len(src.Go) == 0 {
		return nil, &backend.Error{Op: "cuModuleLoadData", Msg: fmt.Sprintf("module %q has no Go kernels for the simulator", src.Name)}
	}
	d.live.Modules++
	return &module{d: d, src: src}, nil
}

func (m *module) Function(name string) (backend.Kernel, error) {
	fn, ok := m.src.Go[name]
	if !ok || m.closed {
		return nil, &backend.Error{Op: "cuModuleGetFunction", Msg: fmt.Sprintf("module %q has no kernel %q", m.src.Name, name)}
	}
	return &kernel{name: name, fn: fn}, nil
}

func (m *module) Unload() error {
	return release("cuModuleUnload", "unloaded", &m.closed, &m.d.live.Modules)
}

// node is one recorded piece of stream work.
type node struct {
	k           *kernel
	grid, block backend.Dim
	args        []backend.Arg
	memset      *memsetOp
	copy        *copyOp
}

type memsetOp struct {
	p backend.Ptr
	v uint32
	n int64
}

type copyOp struct {
	dst, src backend.Ptr
	n        int64
}

type stream struct {
	d           *Device
	capturing   bool
	invalidated error
	nodes       []node
	pending     error  // a fault, reported at the next Synchronize
	queue       []node // Async: work not yet run
	destroyed   bool
}

// NewStream makes a stream.
func (d *Device) NewStream() (backend.Stream, error) {
	if err := d.check("cuStreamCreate"); err != nil {
		return nil, err
	}
	d.live.Streams++
	s := &stream{d: d}
	d.streams = append(d.streams, s)
	return s, nil
}

func (s *stream) ok(op string) error {
	if s.destroyed {
		return &backend.Error{Op: op, Msg: "stream destroyed"}
	}
	return s.d.check(op)
}

// run executes one node now; a fault is kept for the next Synchronize.
func (s *stream) run(n node) {
	if s.pending != nil {
		return // the stream is broken until synchronised
	}
	var err error
	switch {
	case n.memset != nil:
		b := make([]byte, 4*n.memset.n)
		for i := int64(0); i < n.memset.n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], n.memset.v)
		}
		err = s.d.Write(n.memset.p, b)
	case n.copy != nil:
		b := make([]byte, n.copy.n)
		if err = s.d.Read(n.copy.src, b); err == nil {
			err = s.d.Write(n.copy.dst, b)
		}
	default:
		err = n.k.fn(s.d, n.grid, n.block, n.args)
		if err != nil && backend.KindOf(err) != backend.Fault {
			err = &backend.Error{Op: n.k.name, Code: 719, Kind: backend.Fault, Msg: err.Error()}
		}
	}
	if err != nil {
		s.pending = err
		if s.d.opt.Sticky {
			s.d.sticky = err
		}
	}
}

func (s *stream) submit(op string, n node) error {
	if err := s.ok(op); err != nil {
		return err
	}
	s.enqueue(n)
	return nil
}

// enqueue records nodes under capture (unless it was invalidated), else runs them.
func (s *stream) enqueue(nodes ...node) {
	if s.capturing {
		if s.invalidated == nil {
			s.nodes = append(s.nodes, nodes...)
		}
		return
	}
	if s.d.opt.Async {
		s.queue = append(s.queue, nodes...)
		return
	}
	for _, n := range nodes {
		s.run(n)
	}
}

// queueTouches: queued work uses [addr, addr+size) (a pointer argument,
// a memset or a copy inside it).
func (s *stream) queueTouches(addr, size uint64) bool {
	in := func(p backend.Ptr) bool { return uint64(p) >= addr && uint64(p) < addr+size }
	for _, n := range s.queue {
		switch {
		case n.memset != nil:
			if in(n.memset.p) {
				return true
			}
		case n.copy != nil:
			if in(n.copy.dst) || in(n.copy.src) {
				return true
			}
		default:
			for _, a := range n.args {
				if p, ok := a.(backend.Ptr); ok && in(p) {
					return true
				}
			}
		}
	}
	return false
}

// drain runs the deferred work (Async).
func (s *stream) drain() {
	q := s.queue
	s.queue = nil
	for _, n := range q {
		s.run(n)
	}
}

// release marks a handle released, once, and uncounts it.
func release(op, what string, done *bool, live *int) error {
	if *done {
		return &backend.Error{Op: op, Msg: "already " + what}
	}
	*done = true
	*live--
	return nil
}

func (s *stream) Launch(k backend.Kernel, grid, block backend.Dim, args ...backend.Arg) error {
	kk, ok := k.(*kernel)
	if !ok {
		return &backend.Error{Op: "cuLaunchKernel", Msg: "not a sim kernel"}
	}
	for i, a := range args {
		if _, _, ok := backend.ArgBits(a); !ok {
			return &backend.Error{Op: "cuLaunchKernel", Msg: fmt.Sprintf("%s: argument %d has type %T", kk.name, i, a)}
		}
	}
	return s.submit("cuLaunchKernel", node{k: kk, grid: grid, block: block, args: append([]backend.Arg(nil), args...)})
}

func (s *stream) MemsetD32(p backend.Ptr, v uint32, n int64) error {
	return s.submit("cuMemsetD32Async", node{memset: &memsetOp{p, v, n}})
}

func (s *stream) CopyDtoD(dst, src backend.Ptr, n int64) error {
	return s.submit("cuMemcpyAsync", node{copy: &copyOp{dst, src, n}})
}

func (s *stream) BeginCapture() error {
	if err := s.ok("cuStreamBeginCapture"); err != nil {
		return err
	}
	if s.capturing {
		return &backend.Error{Op: "cuStreamBeginCapture", Code: 900, Kind: backend.Capture, Msg: "stream is already capturing"}
	}
	s.capturing, s.invalidated, s.nodes = true, nil, nil
	return nil
}

func (s *stream) EndCapture() (backend.Graph, error) {
	if err := s.ok("cuStreamEndCapture"); err != nil {
		return nil, err
	}
	if !s.capturing {
		return nil, &backend.Error{Op: "cuStreamEndCapture", Code: 400, Kind: backend.Capture, Msg: "stream is not capturing"}
	}
	s.capturing = false
	nodes := s.nodes
	s.nodes = nil
	if s.invalidated != nil {
		return nil, &backend.Error{Op: "cuStreamEndCapture", Code: opInvalid, Kind: backend.Capture,
			Msg: "capture was invalidated: " + s.invalidated.Error()}
	}
	s.d.live.Graphs++
	return &graph{d: s.d, nodes: nodes}, nil
}

// Synchronize waits for the stream; it reports a pending fault. On a capturing
// stream it fails and invalidates the capture, as CUDA does.
func (s *stream) Synchronize() error {
	if err := s.ok("cuStreamSynchronize"); err != nil {
		return err
	}
	if s.capturing {
		err := &backend.Error{Op: "cuStreamSynchronize", Code: opNotCapt, Kind: backend.Capture,
			Msg: "operation not permitted when stream is capturing"}
		s.invalidated = err
		return err
	}
	s.drain()
	err := s.pending
	s.pending = nil
	return err
}

func (s *stream) Destroy() error {
	if !s.destroyed {
		s.drain() // the device finishes queued work after the handle goes
	}
	return release("cuStreamDestroy", "destroyed", &s.destroyed, &s.d.live.Streams)
}

type graph struct {
	d         *Device
	nodes     []node
	destroyed bool
}

func (g *graph) Nodes() int { return len(g.nodes) }

func (g *graph) Instantiate() (backend.Exec, error) {
	if err := g.d.check("cuGraphInstantiate"); err != nil {
		return nil, err
	}
	if g.destroyed {
		return nil, &backend.Error{Op: "cuGraphInstantiate", Msg: "graph destroyed"}
	}
	g.d.live.Execs++
	return &exec{d: g.d, nodes: append([]node(nil), g.nodes...)}, nil
}

func (g *graph) Destroy() error {
	return release("cuGraphDestroy", "destroyed", &g.destroyed, &g.d.live.Graphs)
}

type exec struct {
	d         *Device
	nodes     []node
	destroyed bool
}

// Launch replays the recorded work, each launch with its recorded arguments.
func (e *exec) Launch(s backend.Stream) error {
	ss, ok := s.(*stream)
	if !ok {
		return &backend.Error{Op: "cuGraphLaunch", Msg: "not a sim stream"}
	}
	if err := ss.ok("cuGraphLaunch"); err != nil {
		return err
	}
	if e.destroyed {
		return &backend.Error{Op: "cuGraphLaunch", Msg: "exec destroyed"}
	}
	ss.enqueue(e.nodes...)
	return nil
}

func (e *exec) Destroy() error {
	return release("cuGraphExecDestroy", "destroyed", &e.destroyed, &e.d.live.Execs)
}
