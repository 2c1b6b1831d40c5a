//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import "github.com/cudagraph-capguard/capguard/runtime/backend"

type graph struct {
	d     *Device
	g     C.CUgraph
	nodes int
}

func (g *graph) Nodes() int { return g.nodes }

func (g *graph) Instantiate() (backend.Exec, error) {
	x := &exec{d: g.d}
	err := g.d.do(func() (err error) { x.e, err = instantiate(g.g); return err })
	if err != nil {
		return nil, err
	}
	return x, nil
}

func (g *graph) Destroy() error { return g.d.do(func() error { return graphDestroy(g.g) }) }

type exec struct {
	d *Device
	e C.CUgraphExec
}

func (x *exec) Launch(s backend.Stream) error {
	ss, ok := s.(*stream)
	if !ok {
		return &backend.Error{Op: "cuGraphLaunch", Msg: "not a cuda stream"}
	}
	return x.d.do(func() error { return graphLaunch(x.e, ss.s) })
}

func (x *exec) Destroy() error { return x.d.do(func() error { return execDestroy(x.e) }) }

// Granularity is the device's minimum mapping granularity.
func (d *Device) Granularity() int64 { return d.gran }

// Reserve reserves address space.
func (d *Device) Reserve(size int64) (p backend.Ptr, err error) {
	err = d.do(func() (err error) { p, err = vmReserve(size); return err })
	return p, err
}

// MapFresh maps new physical memory, read-write, at p.
func (d *Device) MapFresh(p backend.Ptr, size int64) error {
	return d.do(func() error { return vmMapFresh(p, size, d.ordinal) })
}

// Unmap unmaps [p, p+size); its physical memory is freed.
func (d *Device) Unmap(p backend.Ptr, size int64) error {
	return d.do(func() error { return vmUnmap(p, size) })
}

// FreeReservation returns a reservation.
func (d *Device) FreeReservation(p backend.Ptr, size int64) error {
	return d.do(func() error { return vmFree(p, size) })
}
