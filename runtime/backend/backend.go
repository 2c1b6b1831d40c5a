// Package backend defines the few device operations the capguard runtime
// checker needs — memory, modules, launches, stream capture, graph replay —
// so that the checker runs unchanged on the CUDA driver (runtime/cuda, build
// tag cuda) and on the pure-Go simulator (runtime/sim) that CI uses.
//
// Addresses are plain integers (Ptr). Launch arguments are Go values of the
// kernel's parameter types: Ptr, int32, uint32, int64, uint64 or float32. A
// capture records each launch with the argument values it had, as CUDA does.
package backend

import (
	"errors"
	"fmt"
	"math"
)

// Ptr is a device address.
type Ptr uint64

// Dim is a launch grid or block shape.
type Dim struct{ X, Y, Z int }

// D1 is a one-dimensional Dim.
func D1(x int) Dim { return Dim{x, 1, 1} }

// Threads is the number of elements the shape covers.
func (d Dim) Threads() int { return max(d.X, 1) * max(d.Y, 1) * max(d.Z, 1) }

// Arg is one kernel argument: Ptr, int32, uint32, int64, uint64 or float32.
type Arg = any

// Memory is device memory as a simulated kernel sees it. Reads and writes
// outside live memory fail with a fault.
type Memory interface {
	Read(p Ptr, b []byte) error
	Write(p Ptr, b []byte) error
}

// KernelFunc is the Go equivalent of a device kernel, run by the simulator
// once per launch (not per thread).
type KernelFunc func(m Memory, grid, block Dim, args []Arg) error

// ModuleSource is one module of kernels: PTX for a GPU, and the same kernels
// as Go functions for the simulator. A backend uses the half it can run.
type ModuleSource struct {
	Name string
	PTX  string
	Go   map[string]KernelFunc
}

// Backend is one device context. Methods that have no stream are synchronous.
// A Backend is not safe for concurrent use; the cuda backend serialises its
// calls on its own locked OS thread.
type Backend interface {
	Name() string   // "sim" or "cuda"
	Device() string // a one-line description of the device
	Alloc(size int64) (Ptr, error)
	Free(p Ptr) error
	CopyHtoD(dst Ptr, src []byte) error
	CopyDtoH(dst []byte, src Ptr) error
	LoadModule(src ModuleSource) (Module, error)
	NewStream() (Stream, error)
	Close() error
}

// Module is a loaded module.
type Module interface {
	Function(name string) (Kernel, error)
	Unload() error
}

// Kernel is a function of a loaded module.
type Kernel interface{ Name() string }

// Stream orders device work; while capturing, its work is recorded, not run.
type Stream interface {
	Launch(k Kernel, grid, block Dim, args ...Arg) error
	MemsetD32(p Ptr, v uint32, n int64) error
	CopyDtoD(dst, src Ptr, size int64) error
	// BeginCapture starts recording the stream's work into a graph.
	BeginCapture() error
	// EndCapture stops recording and returns the graph; it fails with a
	// capture error when the capture was invalidated.
	EndCapture() (Graph, error)
	Synchronize() error
	Destroy() error
}

// Graph is a captured graph.
type Graph interface {
	Nodes() int
	Instantiate() (Exec, error)
	Destroy() error
}

// Exec is an instantiated graph; Launch replays it on a stream.
type Exec interface {
	Launch(s Stream) error
	Destroy() error
}

// VirtualMemory is implemented by backends that can put fresh physical memory
// under a chosen virtual address (CUDA's cuMemAddressReserve, cuMemCreate,
// cuMemMap, cuMemSetAccess). The checker uses it to cover a freed temporary
// exactly, rather than hoping a new allocation lands on it.
type VirtualMemory interface {
	// Granularity is the size every mapping is a multiple of.
	Granularity() int64
	// Reserve reserves size bytes of address space, mapping nothing.
	Reserve(size int64) (Ptr, error)
	// MapFresh creates new physical memory and maps it, read-write, at p.
	MapFresh(p Ptr, size int64) error
	// Unmap unmaps [p, p+size) and releases its physical memory.
	Unmap(p Ptr, size int64) error
	// FreeReservation returns a reservation made by Reserve.
	FreeReservation(p Ptr, size int64) error
}

// Kind classifies a device error.
type Kind int

const (
	// Other is any error that is neither a fault nor a capture error.
	Other Kind = iota
	// Fault is an error raised by device work: an illegal address, a
	// failed launch. On CUDA it is sticky: the context is unusable after it.
	Fault
	// Capture is an error of stream capture: an operation that cannot be
	// captured, an invalidated capture.
	Capture
)

func (k Kind) String() string {
	switch k {
	case Fault:
		return "fault"
	case Capture:
		return "capture"
	}
	return "other"
}

// Error is a device error.
type Error struct {
	Op   string // the operation, e.g. "cuGraphLaunch"
	Code int    // the backend's code (a CUresult on CUDA), 0 if none
	Kind Kind
	Msg  string
}

func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("%s: %s (error %d)", e.Op, e.Msg, e.Code)
	}
	return fmt.Sprintf("%s: %s", e.Op, e.Msg)
}

// KindOf is the Kind of err: Other unless err is or wraps an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Other
}

// WithoutVM is b with only the Backend methods: it hides VirtualMemory.
type WithoutVM struct{ Backend }

// ArgBits is the 8-byte parameter slot value of a kernel argument and its
// size in bytes; ok is false for a type a kernel cannot take.
func ArgBits(a Arg) (bits uint64, size int, ok bool) {
	switch v := a.(type) {
	case Ptr:
		return uint64(v), 8, true
	case int32:
		return uint64(uint32(v)), 4, true
	case uint32:
		return uint64(v), 4, true
	case int64:
		return uint64(v), 8, true
	case uint64:
		return v, 8, true
	case float32:
		return uint64(math.Float32bits(v)), 4, true
	}
	return 0, 0, false
}
