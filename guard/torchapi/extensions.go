package torchapi

// Compiled extensions. A project's own C++/CUDA operator library, built with
// torch.utils.cpp_extension, is called as a Python module (`import my_ext;
// my_ext.op(x)`, or the module a run-time load returned): each call runs the
// compiled operator, which launches its CUDA kernels on the current stream
// exactly as a `torch.ops.*` call does. The analysis knows such a module when
// the project proves it is one of CUDA code:
//
//   - a build declaration names it: `CUDAExtension("my_ext", sources)` or
//     `CUDAExtension(name="pkg._C", ...)` in a setup script (a CppExtension
//     is CPU code: not counted);
//   - a run-time load returns it, with CUDA sources in the call itself:
//     `with_cuda=True`, a non-empty literal `cuda_sources` / `cuda_files`, or
//     a literal `.cu` / `.cuh` file among the literal `sources`.

// CUDAExtensionBuilders are the build declarations whose first argument (or
// `name=`) is the dotted module name of a CUDA extension.
var CUDAExtensionBuilders = map[string]bool{
	"torch.utils.cpp_extension.CUDAExtension": true,
}

// ExtensionLoaders compile and load an extension at run time and return it
// as a module: torch's `load` and `load_inline`, and Apache TVM FFI's
// `tvm_ffi.cpp.load` and `load_inline` (a documented public API with the
// same shape: `cuda_files` / `cuda_sources` hold its CUDA code).
var ExtensionLoaders = map[string]bool{
	"torch.utils.cpp_extension.load":        true,
	"torch.utils.cpp_extension.load_inline": true,
	"tvm_ffi.cpp.load":                      true,
	"tvm_ffi.cpp.load_inline":               true,
}

// LoaderCUDAKeywords are the loaders' keyword arguments that hold CUDA
// code: a non-empty literal there proves the module is CUDA code.
var LoaderCUDAKeywords = map[string]bool{"cuda_sources": true, "cuda_files": true}

// CUDAExtensionModule is the external name the analysis gives the module a
// loader returned when its call proves CUDA code: a call of one of its
// attributes launches kernels.
const CUDAExtensionModule = "torch.utils.cpp_extension.load()"
