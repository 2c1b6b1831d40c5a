// Package sim is a pure-Go device model for testing the capguard runtime
// checker without a GPU: byte-addressed memory with an allocator that hands
// freed addresses out again (as cuMemAlloc usually does), virtual-memory
// reservations and remapping, kernels as Go functions, a stream capture that
// records each launch with the argument values it had, and replay that re-runs
// the recorded work. Device faults are reported at the next synchronisation,
// as CUDA reports them.
//
// A sync on a capturing stream invalidates the capture, as on CUDA. Every
// allocation, mapping, reservation, stream, graph, exec and module is counted,
// so tests can prove that the checker releases what it made (Live).
package sim

import (
	"fmt"
	"sort"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

// Options tune the model.
type Options struct {
	// NoReuse makes Alloc never hand out a freed address again, so a
	// canary allocated after a free cannot land on the freed range.
	NoReuse bool
	// NoVirtualMemory hides the VirtualMemory interface: the checker must
	// then cover freed ranges by reallocation.
	NoVirtualMemory bool
	// Sticky makes a fault permanent, as on CUDA: every later call fails.
	Sticky bool
	// Async defers stream work (launches, memsets, copies, graph launches)
	// until the stream is synchronised, as a busy GPU does: host code that
	// frees or unmaps memory before waiting for the work that uses it then
	// faults here as it can on a GPU shared by other processes.
	Async bool
}

const (
	allocBase  = 0x7f0000000000
	vmBase     = 0x7e0000000000
	align      = 512
	granule    = 1 << 16
	opNotCapt  = 900 // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
	opInvalid  = 901 // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
	illegalAdr = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
)

type block struct {
	addr backend.Ptr
	data []byte
}

type span struct{ addr, size uint64 }

// Device is one simulated device context.
type Device struct {
	opt      Options
	blocks   []*block // sorted by addr: live allocations and mappings
	allocs   map[backend.Ptr]bool
	free     []span // freed allocation ranges, most recent last
	next     uint64
	vmNext   uint64
	reserved []span
	sticky   error
	closed   bool
	live     Counts
	streams  []*stream // Async: whose queued work Free waits for and Unmap checks
}

// Counts is what a Device holds now.
type Counts struct {
	Allocs, Mappings, Reservations, Streams, Graphs, Execs, Modules int
}

// Total is the sum of all counts.
func (c Counts) Total() int {
	return c.Allocs + c.Mappings + c.Reservations + c.Streams + c.Graphs + c.Execs + c.Modules
}

// Open returns a new simulated device.
func Open(opt Options) backend.Backend {
	d := &Device{opt: opt, allocs: map[backend.Ptr]bool{}, next: allocBase, vmNext: vmBase}
	if opt.NoVirtualMemory {
		return backend.WithoutVM{Backend: d}
	}
	return d
}

// Unwrap returns the *Device behind a backend made by Open.
func Unwrap(b backend.Backend) *Device {
	switch v := b.(type) {
	case *Device:
		return v
	case backend.WithoutVM:
		d, _ := v.Backend.(*Device)
		return d
	}
	return nil
}

// Live is what the device holds now.
func (d *Device) Live() Counts { return d.live }

func (d *Device) Name() string   { return "sim" }
func (d *Device) Device() string { return "simulated device (pure Go)" }

func (d *Device) check(op string) error {
	if d.closed {
		return &backend.Error{Op: op, Msg: "device closed"}
	}
	if d.sticky != nil {
		return d.sticky
	}
	return nil
}

func fault(op string, format string, a ...any) error {
	return &backend.Error{Op: op, Code: illegalAdr, Kind: backend.Fault, Msg: fmt.Sprintf(format, a...)}
}

func roundUp(n, to uint64) uint64 { return (n + to - 1) / to * to }

func (d *Device) insert(b *block) {
	i := sort.Search(len(d.blocks), func(i int) bool { return d.blocks[i].addr >= b.addr })
	d.blocks = append(d.blocks, nil)
	copy(d.blocks[i+1:], d.blocks[i:])
	d.blocks[i] = b
}

func (d *Device) remove(p backend.Ptr) *block {
	for i, b := range d.blocks {
		if b.addr == p {
			d.blocks = append(d.blocks[:i], d.blocks[i+1:]...)
			return b
		}
	}
	return nil
}

// find returns the block holding [p, p+n) and the offset of p in it.
func (d *Device) find(p backend.Ptr, n int) (*block, int, bool) {
	i := sort.Search(len(d.blocks), func(i int) bool { return d.blocks[i].addr > p }) - 1
	if i < 0 {
		return nil, 0, false
	}
	b := d.blocks[i]
	off := uint64(p - b.addr)
	if off+uint64(n) > uint64(len(b.data)) {
		return nil, 0, false
	}
	return b, int(off), true
}

func (d *Device) overlaps(addr, size uint64) bool {
	for _, b := range d.blocks {
		s, e := uint64(b.addr), uint64(b.addr)+uint64(len(b.data))
		if addr < e && s < addr+size {
			return true
		}
	}
	return false
}

// Read copies device memory at p into b; outside live memory it faults.
func (d *Device) Read(p backend.Ptr, b []byte) error {
	blk, off, ok := d.find(p, len(b))
	if !ok {
		return fault("read", "illegal address: %d bytes at %#x are not mapped", len(b), uint64(p))
	}
	copy(b, blk.data[off:])
	return nil
}

// Write copies b into device memory at p; outside live memory it faults.
func (d *Device) Write(p backend.Ptr, b []byte) error {
	blk, off, ok := d.find(p, len(b))
	if !ok {
		return fault("write", "illegal address: %d bytes at %#x are not mapped", len(b), uint64(p))
	}
	copy(blk.data[off:], b)
	return nil
}

// Alloc allocates size bytes, reusing the most recently freed range that fits.
func (d *Device) Alloc(size int64) (backend.Ptr, error) {
	if err := d.check("cuMemAlloc"); err != nil {
		return 0, err
	}
	if size <= 0 {
		return 0, &backend.Error{Op: "cuMemAlloc", Msg: "invalid size"}
	}
	n := roundUp(uint64(size), align)
	addr := uint64(0)
	if !d.opt.NoReuse {
		for i := len(d.free) - 1; i >= 0; i-- {
			f := d.free[i]
			if f.size >= n {
				addr = f.addr
				if f.size == n {
					d.free = append(d.free[:i], d.free[i+1:]...)
				} else {
					d.free[i] = span{f.addr + n, f.size - n}
				}
				break
			}
		}
	}
	if addr == 0 {
		addr = d.next
		d.next += n
	}
	d.insert(&block{addr: backend.Ptr(addr), data: make([]byte, n)})
	d.allocs[backend.Ptr(addr)] = true
	d.live.Allocs++
	return backend.Ptr(addr), nil
}

// Free frees an allocation made by Alloc; its range can be handed out again.
func (d *Device) Free(p backend.Ptr) error {
	if err := d.check("cuMemFree"); err != nil {
		return err
	}
	if !d.allocs[p] {
		return &backend.Error{Op: "cuMemFree", Msg: fmt.Sprintf("%#x is not an allocation", uint64(p))}
	}
	d.drainAll() // cuMemFree waits for the device's work first
	b := d.remove(p)
	delete(d.allocs, p)
	d.free = append(d.free, span{uint64(p), uint64(len(b.data))})
	d.live.Allocs--
	return nil
}

// CopyHtoD copies host bytes to the device.
func (d *Device) CopyHtoD(dst backend.Ptr, src []byte) error {
	if err := d.check("cuMemcpyHtoD"); err != nil {
		return err
	}
	if err := d.Write(dst, src); err != nil {
		return &backend.Error{Op: "cuMemcpyHtoD", Msg: err.Error()}
	}
	return nil
}

// CopyDtoH copies device bytes to the host.
func (d *Device) CopyDtoH(dst []byte, src backend.Ptr) error {
	if err := d.check("cuMemcpyDtoH"); err != nil {
		return err
	}
	if err := d.Read(src, dst); err != nil {
		return &backend.Error{Op: "cuMemcpyDtoH", Msg: err.Error()}
	}
	return nil
}

// Close frees nothing: what is still live stays counted, so tests see leaks.
func (d *Device) Close() error { d.closed = true; return nil }

// Granularity of mappings.
func (d *Device) Granularity() int64 { return granule }

// Reserve reserves address space.
func (d *Device) Reserve(size int64) (backend.Ptr, error) {
	if err := d.check("cuMemAddressReserve"); err != nil {
		return 0, err
	}
	if size <= 0 || size%granule != 0 {
		return 0, &backend.Error{Op: "cuMemAddressReserve", Msg: "size is not a multiple of the granularity"}
	}
	a := d.vmNext
	d.vmNext += uint64(size) + granule // a guard gap between reservations
	d.reserved = append(d.reserved, span{a, uint64(size)})
	d.live.Reservations++
	return backend.Ptr(a), nil
}

func (d *Device) inReservation(addr, size uint64) bool {
	for _, r := range d.reserved {
		if addr >= r.addr && addr+size <= r.addr+r.size {
			return true
		}
	}
	return false
}

// MapFresh maps new (zeroed) physical memory at p.
func (d *Device) MapFresh(p backend.Ptr, size int64) error {
	if err := d.check("cuMemMap"); err != nil {
		return err
	}
	a, n := uint64(p), uint64(size)
	if size <= 0 || a%granule != 0 || n%granule != 0 || !d.inReservation(a, n) || d.overlaps(a, n) {
		return &backend.Error{Op: "cuMemMap", Msg: fmt.Sprintf("cannot map %d bytes at %#x", size, a)}
	}
	d.insert(&block{addr: p, data: make([]byte, n)})
	d.live.Mappings++
	return nil
}

// Unmap unmaps a mapping made by MapFresh.
func (d *Device) Unmap(p backend.Ptr, size int64) error {
	if err := d.check("cuMemUnmap"); err != nil {
		return err
	}
	if d.allocs[p] {
		return &backend.Error{Op: "cuMemUnmap", Msg: "not a mapping"}
	}
	b, off, ok := d.find(p, int(size))
	if !ok || off != 0 || len(b.data) != int(size) {
		return &backend.Error{Op: "cuMemUnmap", Msg: fmt.Sprintf("no mapping of %d bytes at %#x", size, uint64(p))}
	}
	// cuMemUnmap does not wait: queued work that uses the range faults.
	for _, st := range d.streams {
		if st.pending == nil && st.queueTouches(uint64(p), uint64(size)) {
			st.pending = &backend.Error{Op: "cuMemUnmap", Code: illegalAdr, Kind: backend.Fault,
				Msg: fmt.Sprintf("%#x (+%d) unmapped while queued work uses it", uint64(p), size)}
			if d.opt.Sticky {
				d.sticky = st.pending
			}
		}
	}
	d.remove(p)
	d.live.Mappings--
	return nil
}

// drainAll runs every stream's queued work (Async).
func (d *Device) drainAll() {
	for _, st := range d.streams {
		st.drain()
	}
}

// FreeReservation returns a reservation; it must hold no mapping.
func (d *Device) FreeReservation(p backend.Ptr, size int64) error {
	if err := d.check("cuMemAddressFree"); err != nil {
		return err
	}
	for i, r := range d.reserved {
		if r.addr == uint64(p) && r.size == uint64(size) {
			if d.overlaps(r.addr, r.size) {
				return &backend.Error{Op: "cuMemAddressFree", Msg: "reservation still has mappings"}
			}
			d.reserved = append(d.reserved[:i], d.reserved[i+1:]...)
			d.live.Reservations--
			return nil
		}
	}
	return &backend.Error{Op: "cuMemAddressFree", Msg: "not a reservation"}
}
