//go:build cuda

package cuda

/*
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

// gorgonia.org/cu calls cuInit in its package init and exits the process
// with status 1 when it fails. This constructor runs first, when the binary
// is loaded, and exits with status 2 (could not run) and a message saying
// what to do instead.
__attribute__((constructor)) static void capguard_cuda_preinit(void) {
	CUresult r = cuInit(0);
	if (r == CUDA_SUCCESS) return;
	const char* s = NULL;
	cuGetErrorString(r, &s);
	fprintf(stderr,
		"capguard: the CUDA driver did not initialise (CUresult %d: %s).\n"
		"capguard: this binary has the cuda backend and needs an NVIDIA driver and GPU;\n"
		"capguard: check nvidia-smi, or use the default build (go build ./cli/capguard) with --backend sim.\n",
		(int)r, s ? s : "unknown error");
	_exit(2);
}

static CUresult cg_begin_capture(CUstream s) {
	// Relaxed: the step allocates its temporaries with raw allocations while
	// it is captured, exactly as the hazard does; the global and thread-local
	// modes forbid cuMemAlloc/cuMemMap under capture and would turn the hazard
	// into a capture error. A sync on the capturing stream is still an error.
	return cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED);
}
static CUresult cg_end_capture(CUstream s, CUgraph* g) { return cuStreamEndCapture(s, g); }
static CUresult cg_instantiate(CUgraphExec* e, CUgraph g) { return cuGraphInstantiateWithFlags(e, g, 0); }
static CUresult cg_graph_launch(CUgraphExec e, CUstream s) { return cuGraphLaunch(e, s); }
static CUresult cg_graph_destroy(CUgraph g) { return cuGraphDestroy(g); }
static CUresult cg_exec_destroy(CUgraphExec e) { return cuGraphExecDestroy(e); }
static CUresult cg_graph_nodes(CUgraph g, size_t* n) { return cuGraphGetNodes(g, NULL, n); }
static const char* cg_error_string(CUresult r) {
	const char* s = NULL;
	if (cuGetErrorString(r, &s) != CUDA_SUCCESS || s == NULL) return "unknown CUDA error";
	return s;
}

// Virtual memory: put fresh physical memory under a chosen address.
static void cg_prop(CUmemAllocationProp* p, int dev) {
	p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p->location.id = dev;
}
static CUresult cg_vm_supported(int dev, int* yes) {
	return cuDeviceGetAttribute(yes, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, (CUdevice)dev);
}
static CUresult cg_vm_granularity(int dev, size_t* g) {
	CUmemAllocationProp p = {0};
	cg_prop(&p, dev);
	return cuMemGetAllocationGranularity(g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
}
static CUresult cg_vm_reserve(CUdeviceptr* p, size_t size) { return cuMemAddressReserve(p, size, 0, 0, 0); }
static CUresult cg_vm_map_fresh(CUdeviceptr p, size_t size, int dev) {
	CUmemAllocationProp prop = {0};
	cg_prop(&prop, dev);
	CUmemGenericAllocationHandle h;
	CUresult r = cuMemCreate(&h, size, &prop, 0);
	if (r != CUDA_SUCCESS) return r;
	r = cuMemMap(p, size, 0, h, 0);
	// The mapping holds the memory; it is freed when unmapped.
	CUresult rr = cuMemRelease(h);
	if (r != CUDA_SUCCESS) return r;
	if (rr != CUDA_SUCCESS) { cuMemUnmap(p, size); return rr; }
	CUmemAccessDesc a = {0};
	a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	a.location.id = dev;
	a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	r = cuMemSetAccess(p, size, &a, 1);
	if (r != CUDA_SUCCESS) cuMemUnmap(p, size);
	return r;
}
static CUresult cg_vm_unmap(CUdeviceptr p, size_t size) { return cuMemUnmap(p, size); }
static CUresult cg_vm_free(CUdeviceptr p, size_t size) { return cuMemAddressFree(p, size); }
*/
import "C"

import (
	"unsafe"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
	"gorgonia.org/cu"
)

func cstream(s cu.Stream) C.CUstream { return C.CUstream(unsafe.Pointer(s.C())) }

// check turns a CUresult into a classified *backend.Error.
func check(op string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return newError(op, int(r), C.GoString(C.cg_error_string(r)))
}

func beginCapture(s cu.Stream) error {
	return check("cuStreamBeginCapture", C.cg_begin_capture(cstream(s)))
}

func endCapture(s cu.Stream) (C.CUgraph, error) {
	var g C.CUgraph
	err := check("cuStreamEndCapture", C.cg_end_capture(cstream(s), &g))
	return g, err
}

func graphNodes(g C.CUgraph) int {
	var n C.size_t
	if C.cg_graph_nodes(g, &n) != C.CUDA_SUCCESS {
		return -1
	}
	return int(n)
}

func instantiate(g C.CUgraph) (C.CUgraphExec, error) {
	var e C.CUgraphExec
	err := check("cuGraphInstantiateWithFlags", C.cg_instantiate(&e, g))
	return e, err
}

func graphLaunch(e C.CUgraphExec, s cu.Stream) error {
	return check("cuGraphLaunch", C.cg_graph_launch(e, cstream(s)))
}

func graphDestroy(g C.CUgraph) error { return check("cuGraphDestroy", C.cg_graph_destroy(g)) }

func execDestroy(e C.CUgraphExec) error { return check("cuGraphExecDestroy", C.cg_exec_destroy(e)) }

func vmSupported(dev int) bool {
	var yes C.int
	return C.cg_vm_supported(C.int(dev), &yes) == C.CUDA_SUCCESS && yes != 0
}

func vmGranularity(dev int) (int64, error) {
	var g C.size_t
	err := check("cuMemGetAllocationGranularity", C.cg_vm_granularity(C.int(dev), &g))
	return int64(g), err
}

func vmReserve(size int64) (backend.Ptr, error) {
	var p C.CUdeviceptr
	err := check("cuMemAddressReserve", C.cg_vm_reserve(&p, C.size_t(size)))
	return backend.Ptr(p), err
}

func vmMapFresh(p backend.Ptr, size int64, dev int) error {
	return check("cuMemCreate/cuMemMap/cuMemSetAccess", C.cg_vm_map_fresh(C.CUdeviceptr(p), C.size_t(size), C.int(dev)))
}

func vmUnmap(p backend.Ptr, size int64) error {
	return check("cuMemUnmap", C.cg_vm_unmap(C.CUdeviceptr(p), C.size_t(size)))
}

func vmFree(p backend.Ptr, size int64) error {
	return check("cuMemAddressFree", C.cg_vm_free(C.CUdeviceptr(p), C.size_t(size)))
}
