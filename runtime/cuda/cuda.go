//go:build cuda

package cuda

import (
	"fmt"
	goruntime "runtime"
	"unsafe"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"gorgonia.org/cu"
)

// Devices is the number of CUDA devices.
func Devices() (int, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return 0, &unavailable{fmt.Sprintf("cuDeviceGetCount: %v", err)}
	}
	return n, nil
}

// Device is a CUDA context on one device, with its own locked OS thread.
type Device struct {
	ordinal int
	desc    string
	ctx     cu.CUContext
	work    chan func()
	vm      bool
	gran    int64
	closed  bool
}

// do runs f on the device's thread and waits for it.
func (d *Device) do(f func() error) error {
	if d.closed {
		return &backend.Error{Op: "cuda", Msg: "device closed"}
	}
	done := make(chan error, 1)
	d.work <- func() { done <- f() }
	return <-done
}

// Open creates a context on device ordinal, on a new OS thread that runs
// every later call. The result implements backend.VirtualMemory when the
// device supports virtual memory management.
func Open(ordinal int) (backend.Backend, error) {
	n, err := Devices()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, &unavailable{"the CUDA driver sees no device: check nvidia-smi, CUDA_VISIBLE_DEVICES and the container's GPU access"}
	}
	if ordinal < 0 || ordinal >= n {
		return nil, &unavailable{fmt.Sprintf("no CUDA device %d: this machine has %d (0..%d)", ordinal, n, n-1)}
	}
	d := &Device{ordinal: ordinal, work: make(chan func())}
	ready := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		defer goruntime.UnlockOSThread()
		ready <- d.init()
		for f := range d.work {
			f()
		}
	}()
	if err := <-ready; err != nil {
		close(d.work)
		return nil, err
	}
	if d.vm {
		return d, nil
	}
	return backend.WithoutVM{Backend: d}, nil
}

// init runs on the device's thread.
func (d *Device) init() error {
	dev, err := cu.GetDevice(d.ordinal)
	if err != nil {
		return wrap("cuDeviceGet", err)
	}
	name, _ := dev.Name()
	major, minor, _ := dev.ComputeCapability()
	sms, _ := dev.Attribute(cu.MultiprocessorCount)
	d.desc = fmt.Sprintf("%s (device %d, sm_%d%d, %d SMs, driver %d)", name, d.ordinal, major, minor, sms, cu.Version())
	if d.ctx, err = dev.MakeContext(cu.SchedAuto); err != nil {
		return wrap("cuCtxCreate", err)
	}
	if vmSupported(d.ordinal) {
		if g, err := vmGranularity(d.ordinal); err == nil && g > 0 {
			d.vm, d.gran = true, g
		}
	}
	return nil
}

func (d *Device) Name() string   { return "cuda" }
func (d *Device) Device() string { return d.desc }

func (d *Device) Alloc(size int64) (backend.Ptr, error) {
	var p cu.DevicePtr
	err := d.do(func() (err error) { p, err = cu.MemAlloc(size); return wrap("cuMemAlloc", err) })
	return backend.Ptr(p), err
}

func (d *Device) Free(p backend.Ptr) error {
	return d.do(func() error { return wrap("cuMemFree", cu.MemFree(cu.DevicePtr(p))) })
}

func (d *Device) CopyHtoD(dst backend.Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	// cuMemcpyHtoD from pageable memory returns once the bytes are staged,
	// before the DMA into device memory completes, and it runs on the legacy
	// stream, which the checker's non-blocking stream does not wait for: a
	// replay launched right after could read the previous inputs. Seen on an
	// H200 with 8 self-tests sharing the GPU (a persistent-buffer case read
	// stale inputs in 2 of 8). Wait for the context after the copy.
	return d.do(func() error {
		if err := wrap("cuMemcpyHtoD", cu.MemcpyHtoD(cu.DevicePtr(dst), unsafe.Pointer(&src[0]), int64(len(src)))); err != nil {
			return err
		}
		return wrap("cuCtxSynchronize", cu.Synchronize())
	})
}

func (d *Device) CopyDtoH(dst []byte, src backend.Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return d.do(func() error {
		return wrap("cuMemcpyDtoH", cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), cu.DevicePtr(src), int64(len(dst))))
	})
}

// Close destroys the context (and everything left in it) and ends the
// device's thread.
func (d *Device) Close() error {
	if d.closed {
		return nil
	}
	err := d.do(func() error { return wrap("cuCtxDestroy", d.ctx.Destroy()) })
	d.closed = true
	close(d.work)
	return err
}

type module struct {
	d *Device
	m cu.Module
}

type kernel struct {
	name string
	f    cu.Function
}

func (k *kernel) Name() string { return k.name }

// LoadModule JIT-compiles the module's PTX for the device.
func (d *Device) LoadModule(src backend.ModuleSource) (backend.Module, error) {
	if src.PTX == "" {
		return nil, &backend.Error{Op: "cuModuleLoadData", Msg: fmt.Sprintf("module %q has no PTX", src.Name)}
	}
	m := &module{d: d}
	err := d.do(func() (err error) { m.m, err = cu.LoadData(src.PTX); return wrap("cuModuleLoadData", err) })
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", src.Name, err)
	}
	return m, nil
}

func (m *module) Function(name string) (backend.Kernel, error) {
	k := &kernel{name: name}
	err := m.d.do(func() (err error) { k.f, err = m.m.Function(name); return wrap("cuModuleGetFunction "+name, err) })
	if err != nil {
		return nil, err
	}
	return k, nil
}

func (m *module) Unload() error {
	return m.d.do(func() error { return wrap("cuModuleUnload", m.m.Unload()) })
}

type stream struct {
	d *Device
	s cu.Stream
}

// NewStream makes a non-blocking stream.
func (d *Device) NewStream() (backend.Stream, error) {
	s := &stream{d: d}
	err := d.do(func() (err error) { s.s, err = cu.MakeStream(cu.NonBlocking); return wrap("cuStreamCreate", err) })
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *stream) Launch(k backend.Kernel, grid, block backend.Dim, args ...backend.Arg) error {
	kk, ok := k.(*kernel)
	if !ok {
		return &backend.Error{Op: "cuLaunchKernel", Msg: "not a cuda kernel"}
	}
	// One 8-byte slot per argument: cu copies 8 bytes from each pointer.
	slots := make([]uint64, len(args))
	params := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		bits, _, ok := backend.ArgBits(a)
		if !ok {
			return &backend.Error{Op: "cuLaunchKernel", Msg: fmt.Sprintf("%s: argument %d has type %T", kk.name, i, a)}
		}
		slots[i] = bits
		params[i] = unsafe.Pointer(&slots[i])
	}
	return s.d.do(func() error {
		return wrap("cuLaunchKernel "+kk.name, kk.f.Launch(max(grid.X, 1), max(grid.Y, 1), max(grid.Z, 1),
			max(block.X, 1), max(block.Y, 1), max(block.Z, 1), 0, s.s, params))
	})
}

func (s *stream) MemsetD32(p backend.Ptr, v uint32, n int64) error {
	return s.d.do(func() error {
		return wrap("cuMemsetD32Async", cu.MemsetD32Async(cu.DevicePtr(p), uint(v), n, s.s))
	})
}

func (s *stream) CopyDtoD(dst, src backend.Ptr, n int64) error {
	return s.d.do(func() error {
		return wrap("cuMemcpyAsync", cu.MemcpyAsync(cu.DevicePtr(dst), cu.DevicePtr(src), n, s.s))
	})
}

func (s *stream) BeginCapture() error {
	return s.d.do(func() error { return beginCapture(s.s) })
}

func (s *stream) EndCapture() (backend.Graph, error) {
	g := &graph{d: s.d}
	err := s.d.do(func() (err error) {
		if g.g, err = endCapture(s.s); err == nil {
			g.nodes = graphNodes(g.g)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

func (s *stream) Synchronize() error {
	return s.d.do(func() error { return wrap("cuStreamSynchronize", s.s.Synchronize()) })
}

func (s *stream) Destroy() error {
	return s.d.do(func() error { return wrap("cuStreamDestroy", s.s.Destroy()) })
}
