// Package cuda is the capguard runtime checker's CUDA backend: the CUDA
// driver through gorgonia.org/cu (context, modules, memory, streams,
// launches), plus a small cgo shim for what cu lacks — stream capture
// (cuStreamBeginCapture in relaxed mode, cuStreamEndCapture),
// cuGraphInstantiateWithFlags, cuGraphLaunch, graph destruction — and the
// virtual-memory calls (cuMemAddressReserve, cuMemCreate, cuMemMap,
// cuMemSetAccess) that let the checker put fresh, poisoned memory under
// exactly the addresses a graph's freed temporaries had.
//
// It builds only with the build tag cuda and needs cuda.h and libcuda.so at
// build time (scripts/fetch-cuda-headers.sh, scripts/build-cuda.sh) and the
// driver (libcuda.so.1) at run time. gorgonia.org/cu initialises the driver in
// its package init and exits the process when that fails; this package's
// shim checks first and exits with status 2 and a message instead.
//
// A CUDA context is current per OS thread. Each Device therefore owns one
// goroutine locked to its OS thread, creates its own context there (not the
// device's primary context, so a sticky fault in the checker does not poison
// the rest of the process) and runs every call on it. A Device can be used
// from any goroutine, one call at a time.
package cuda
