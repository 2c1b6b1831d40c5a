package torchapi

import "strings"

// KernelDecorator reports whether a decorator, by its dotted name as
// written (`triton.jit`, `cute.kernel`, `T.prim_func`), makes the function
// it decorates kernel code: a body a kernel compiler traces or compiles
// (device code, or a kernel DSL's host-side launch code that it traces
// once per signature), never run as Python under capture. It is the one
// table of kernel DSL decorators:
//
//   - Triton: jit, autotune, heuristics (`triton.jit`, `tl.jit`...), and a
//     bare `jit` (from triton or another kernel compiler);
//   - CuTe DSL (CUTLASS Python): `cute.kernel`, `cute.jit`;
//   - TileLang and TVM TensorIR: `T.prim_func`, `T.macro`, `tilelang.jit`,
//     `tir.prim_func`;
//   - Numba CUDA: `cuda.jit`.
func KernelDecorator(name string) bool {
	parts := strings.Split(name, ".")
	last := parts[len(parts)-1]
	mod := strings.Join(parts[:len(parts)-1], ".")
	switch last {
	case "jit":
		return mod == "" || strings.Contains(mod, "triton") || mod == "tl" || strings.HasPrefix(mod, "tl.") ||
			mod == "cute" || strings.HasSuffix(mod, ".cute") || mod == "tilelang" || strings.HasPrefix(mod, "tilelang.") ||
			mod == "cuda" || strings.HasSuffix(mod, "numba.cuda")
	case "autotune", "heuristics":
		return mod == "" || strings.Contains(mod, "triton")
	case "kernel":
		return mod == "cute" || strings.HasSuffix(mod, ".cute")
	case "prim_func", "macro":
		return mod == "T" || mod == "tir" || strings.HasSuffix(mod, ".tir") || strings.HasPrefix(mod, "tilelang")
	}
	return false
}

// DeviceCodeDecorator: name, a KernelDecorator, makes its function's body
// device code a kernel compiler compiles (Triton's jit, autotune and
// heuristics, `cute.kernel`, `T.prim_func` and `T.macro`, `tir.prim_func`,
// `numba.cuda.jit`), not a DSL's host-side launch code that it traces in
// Python (`cute.jit`, `tilelang.jit`), whose body launches kernels and
// builds what the caller gets, nor a bare `jit`, which may be a CPU
// compiler's (numba, jax). Nothing such a body binds is a host value.
func DeviceCodeDecorator(name string) bool {
	if !KernelDecorator(name) {
		return false
	}
	parts := strings.Split(name, ".")
	last := parts[len(parts)-1]
	mod := strings.Join(parts[:len(parts)-1], ".")
	switch last {
	case "jit":
		return strings.Contains(mod, "triton") || mod == "tl" || strings.HasPrefix(mod, "tl.") || mod == "cuda" || strings.HasSuffix(mod, "numba.cuda")
	case "autotune", "heuristics":
		return mod != ""
	}
	return true // cute.kernel, prim_func, macro
}

// CompiledKernel: d is a kernel compiler's compile call, whose result is a
// launchable kernel (CuTe DSL's `cute.compile`, TileLang's
// `tilelang.compile`, TVM's `tvm.build`): calling it launches the kernel.
func CompiledKernel(d string) bool {
	switch {
	case strings.HasSuffix(d, "cute.compile"), d == "tilelang.compile", strings.HasPrefix(d, "tilelang.") && strings.HasSuffix(d, ".compile"),
		d == "tvm.build", d == "tvm.compile":
		return true
	}
	return false
}
