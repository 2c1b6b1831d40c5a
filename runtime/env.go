package runtime

import (
	"fmt"
	"time"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

// Step is one call of the code to capture — a decode step, a reader — at a
// batch size. It allocates through the Env (Temp, Persistent) and launches
// through it.
type Step func(e *Env, batch int) error

// EnvOptions configure an Env.
type EnvOptions struct {
	// Placement of temporaries (default Auto).
	Placement Placement
	// Modules to load; their kernels are launched by name.
	Modules []backend.ModuleSource
}

// Env is where a Step runs: a stream, an Arena and loaded kernels on one
// backend. Its methods record the first error and turn later calls into
// no-ops, so a step can launch without checking each call; Err returns it.
// An Env is not safe for concurrent use.
type Env struct {
	b       backend.Backend
	s       backend.Stream
	arena   *Arena
	mods    []backend.Module
	kernels map[string]backend.Kernel
	err     error

	capturing  bool          // a capture is open now
	referenced []backend.Ptr // pointer arguments of captured work
}

// NewEnv makes an Env on b: a stream, an arena and the modules loaded.
// Close releases all of it.
func NewEnv(b backend.Backend, opt EnvOptions) (*Env, error) {
	e := &Env{b: b, kernels: map[string]backend.Kernel{}}
	var err error
	if e.arena, err = NewArena(b, opt.Placement); err != nil {
		return nil, err
	}
	if e.s, err = b.NewStream(); err != nil {
		e.Close()
		return nil, fmt.Errorf("create stream: %w", err)
	}
	for _, src := range opt.Modules {
		m, err := b.LoadModule(src)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("load module %s: %w", src.Name, err)
		}
		e.mods = append(e.mods, m)
		for name := range src.Go {
			k, err := m.Function(name)
			if err != nil {
				e.Close()
				return nil, fmt.Errorf("module %s: %w", src.Name, err)
			}
			e.kernels[name] = k
		}
	}
	return e, nil
}

// Backend is the Env's backend.
func (e *Env) Backend() backend.Backend { return e.b }

// Arena is the Env's arena.
func (e *Env) Arena() *Arena { return e.arena }

// Err is the first error a method recorded since the Env was made or reset.
func (e *Env) Err() error { return e.err }

func (e *Env) fail(err error) {
	if e.err == nil && err != nil {
		e.err = err
	}
}

// Temp allocates a temporary, freed when the step returns.
func (e *Env) Temp(size int64) backend.Ptr {
	if e.err != nil {
		return 0
	}
	p, err := e.arena.temp(size, caller(1))
	e.fail(err)
	return p
}

// Persistent returns the buffer kept under key (same address every call).
func (e *Env) Persistent(key string, size int64) backend.Ptr {
	if e.err != nil {
		return 0
	}
	p, err := e.arena.Persistent(key, size)
	e.fail(err)
	return p
}

// Upload copies host bytes to the device, synchronously (never captured: a
// value uploaded during a capture is baked into the graph as it was).
func (e *Env) Upload(dst backend.Ptr, b []byte) {
	if e.err == nil {
		e.fail(e.b.CopyHtoD(dst, b))
	}
}

// Download copies device bytes to the host after synchronising the stream.
func (e *Env) Download(b []byte, src backend.Ptr) {
	e.Synchronize()
	if e.err == nil {
		e.fail(e.b.CopyDtoH(b, src))
	}
}

func (e *Env) note(ps ...backend.Ptr) {
	if e.capturing {
		e.referenced = append(e.referenced, ps...)
	}
}

// Launch launches the named kernel on the stream.
func (e *Env) Launch(kernel string, grid, block backend.Dim, args ...backend.Arg) {
	if e.err != nil {
		return
	}
	k, ok := e.kernels[kernel]
	if !ok {
		e.fail(fmt.Errorf("no kernel %q loaded", kernel))
		return
	}
	for _, a := range args {
		if p, ok := a.(backend.Ptr); ok {
			e.note(p)
		}
	}
	e.fail(e.s.Launch(k, grid, block, args...))
}

// MemsetD32 sets n 32-bit words at p, on the stream.
func (e *Env) MemsetD32(p backend.Ptr, v uint32, n int64) {
	if e.err == nil {
		e.note(p)
		e.fail(e.s.MemsetD32(p, v, n))
	}
}

// CopyDtoD copies n bytes between device buffers, on the stream.
func (e *Env) CopyDtoD(dst, src backend.Ptr, n int64) {
	if e.err == nil {
		e.note(dst, src)
		e.fail(e.s.CopyDtoD(dst, src, n))
	}
}

// Synchronize waits for the stream. Under capture this is an error that
// invalidates the capture, as on CUDA.
func (e *Env) Synchronize() {
	if e.err == nil {
		e.fail(e.s.Synchronize())
	}
}

// captureRegion captures f and returns the graph; on error there is none.
func (e *Env) captureRegion(f func() error) (backend.Graph, error) {
	if err := e.s.BeginCapture(); err != nil {
		e.fail(err)
		return nil, err
	}
	e.capturing = true
	e.fail(f())
	e.capturing = false
	g, err := e.s.EndCapture()
	if err != nil {
		// An invalidated capture explains a failed call inside it: report it.
		if backend.KindOf(err) == backend.Capture && backend.KindOf(e.err) != backend.Capture {
			e.err = fmt.Errorf("%w (inside the capture: %v)", err, e.err)
		} else {
			e.fail(err)
		}
		return nil, e.err
	}
	if e.err != nil {
		g.Destroy()
		return nil, e.err
	}
	return g, nil
}

// Run runs step eagerly at batch, waits for it and frees its temporaries.
func (e *Env) Run(step Step, batch int) error { return e.run(nil, step, batch) }

func (e *Env) run(prepare, step Step, batch int) error {
	e.err = nil
	if prepare != nil {
		e.fail(prepare(e, batch))
	}
	if e.err == nil {
		e.fail(step(e, batch))
	}
	e.Synchronize()
	_, err := e.arena.Release()
	e.fail(err)
	return e.err
}

// Graph is a captured, instantiated step.
type Graph struct {
	e     *Env
	g     backend.Graph
	x     backend.Exec
	Batch int
	// Freed are the step's temporaries, freed when the captured call returned.
	Freed []Buffer
	// Suspects are the freed temporaries the captured work still references.
	Suspects []Buffer
	// Nodes is the graph's node count.
	Nodes int
	// Took is the time to capture and instantiate.
	Took time.Duration
}

// CaptureGraph captures step at batch and instantiates it. Its temporaries
// are freed when it returns, as a Python temporary is when the captured
// function returns; Graph.Suspects are those the graph still references.
func (e *Env) CaptureGraph(step Step, batch int) (*Graph, error) {
	return e.captureGraph(nil, step, batch)
}

// captureGraph runs prepare (if any) outside the capture, then captures step,
// in one call: the temporaries of both are freed when the call returns.
func (e *Env) captureGraph(prepare, step Step, batch int) (*Graph, error) {
	t0 := time.Now()
	e.err, e.referenced = nil, nil
	if prepare != nil {
		e.fail(prepare(e, batch))
	}
	var bg backend.Graph
	if e.err == nil {
		bg, _ = e.captureRegion(func() error { return step(e, batch) })
	}
	// Wait for prepare's eager work before unmapping what it uses:
	// cuMemUnmap does not wait, and on a GPU that other processes keep busy
	// the work is still queued (8 self-tests sharing an H200 faulted so).
	if err := e.s.Synchronize(); err != nil && e.err == nil {
		e.err = err
	}
	freed, rerr := e.arena.Release()
	if e.err != nil {
		if bg != nil {
			bg.Destroy()
		}
		return nil, e.err
	}
	if rerr != nil {
		bg.Destroy()
		return nil, rerr
	}
	g := &Graph{e: e, g: bg, Batch: batch, Freed: freed, Nodes: bg.Nodes()}
	x, err := g.g.Instantiate()
	if err != nil {
		g.g.Destroy()
		return nil, &phaseError{"instantiate", err}
	}
	g.x = x
	for _, f := range freed {
		for _, p := range e.referenced {
			if p >= f.Addr && p < f.Addr+backend.Ptr(f.Size) {
				g.Suspects = append(g.Suspects, f)
				break
			}
		}
	}
	g.Took = time.Since(t0)
	return g, nil
}

// phaseError marks an error of the capture phase that is not a device
// capture error (instantiation).
type phaseError struct {
	phase string
	err   error
}

func (p *phaseError) Error() string { return p.phase + ": " + p.err.Error() }
func (p *phaseError) Unwrap() error { return p.err }

// Replay launches the graph and waits for it.
func (g *Graph) Replay() error {
	if err := g.x.Launch(g.e.s); err != nil {
		return err
	}
	return g.e.s.Synchronize()
}

// Close destroys the exec and the graph.
func (g *Graph) Close() error {
	var first error
	if g.x != nil {
		first = g.x.Destroy()
		g.x = nil
	}
	if g.g != nil {
		if err := g.g.Destroy(); err != nil && first == nil {
			first = err
		}
		g.g = nil
	}
	return first
}

// Close unloads the modules, destroys the stream and frees the arena. It
// tries everything and returns the first error.
func (e *Env) Close() error {
	var first error
	keep := func(err error) {
		if first == nil && err != nil {
			first = err
		}
	}
	if e.arena != nil {
		keep(e.arena.Close())
	}
	for _, m := range e.mods {
		keep(m.Unload())
	}
	e.mods = nil
	if e.s != nil {
		keep(e.s.Destroy())
		e.s = nil
	}
	return first
}
