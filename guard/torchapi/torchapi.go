package torchapi

import "strings"

// Allocators are the torch factories that allocate a new tensor of a given
// shape (CG102, CG201 and the value model read them).
var Allocators = map[string]bool{
	"torch.empty": true, "torch.zeros": true, "torch.ones": true, "torch.full": true, "torch.arange": true,
	"torch.randn": true, "torch.rand": true, "torch.new_empty": true, "torch.new_zeros": true, "torch.new_full": true,
}

// TensorMethods take device-side work arguments that capture bakes.
var TensorMethods = map[string]bool{
	"clamp": true, "clamp_": true, "narrow": true, "view": true, "reshape": true, "expand": true, "repeat": true,
	"fill_": true, "new_empty": true, "new_zeros": true, "new_full": true, "new_ones": true, "split": true,
	"chunk": true, "topk": true, "roll": true, "masked_fill": true, "masked_fill_": true, "add": true, "add_": true,
	"mul": true, "mul_": true, "sub": true, "sub_": true, "div": true, "div_": true, "index_fill_": true,
	"unflatten": true, "select": true, "lt": true, "le": true, "gt": true, "ge": true, "eq": true,
}

// DataDependentOps are the torch operations (functions and methods alike)
// whose output size, or whose arguments, torch reads back from tensor data
// on the host before it launches anything: under capture the read is a
// synchronization (capture fails). Measured on an H200: bincount and histc
// without a range fail capture (testdata/gpu/probes/cg104_bincount_pos.py,
// cg104_histc_pos.py); nonzero_static with its fixed size, histc with a
// range, and counts by scatter_add_ replay clean (the _neg probes).
var DataDependentOps = map[string]string{
	"nonzero":            "it syncs to size its result",
	"argwhere":           "it syncs to size its result",
	"masked_select":      "it syncs to size its result",
	"unique":             "it syncs to size its result",
	"unique_consecutive": "it syncs to size its result",
	// Its length is max(minlength, x.max() + 1): minlength does not fix it.
	"bincount": "it reads the input's maximum back to size its result, with or without `minlength` (count with `scatter_add_` into a buffer of fixed length instead)",
	// Without a range (min = max = 0, the default) it reads the data's min and max.
	"histc": "without `min` and `max` it reads the data's minimum and maximum back to the host (give the range)",
}

// LayoutViews return a view of their receiver when its layout allows one
// (a parameter's contiguous storage does): with viewMethods, the methods
// that keep a `.data` rebind on the same storage.
var LayoutViews = map[string]bool{"reshape": true, "reshape_as": true, "view_as": true, "flatten": true, "movedim": true, "swapaxes": true}

// ViewMethods alias their input: reading them in the graph is fine.
var ViewMethods = map[string]bool{
	"view": true, "narrow": true, "select": true, "unsqueeze": true, "squeeze": true, "transpose": true,
	"permute": true, "expand": true, "t": true, "unflatten": true, "as_strided": true, "detach": true,
}

var DerivingMethods = map[string]bool{
	"cumsum": true, "clamp": true, "repeat": true, "index_select": true, "gather": true, "cumprod": true,
	"sum": true, "amax": true, "argsort": true, "sort": true, "diff": true, "masked_fill": true, "add": true,
	"sub": true, "mul": true, "div": true, "floor_divide": true, "remainder": true, "float": true,
}

// HarmlessUses are attribute uses of a temporary that do not let it escape.
var HarmlessUses = map[string]bool{
	"shape": true, "stride": true, "numel": true, "size": true, "dtype": true, "device": true,
	"data_ptr": true, "dim": true, "ndim": true, "is_contiguous": true, "element_size": true,
}

// RawAllocators hand out memory outside torch.cuda.graph's private pool.
var RawAllocators = map[string]bool{
	"torch.cuda.caching_allocator_alloc": true, "torch.cuda.memory.caching_allocator_alloc": true,
	"cupy.cuda.alloc": true, "cupy.cuda.memory.alloc": true,
}

// DtypeMethods are tensor methods that convert to a fixed dtype.
var DtypeMethods = map[string]string{
	"int": "torch.int32", "long": "torch.int64", "float": "torch.float32", "half": "torch.float16",
	"bfloat16": "torch.bfloat16", "double": "torch.float64", "short": "torch.int16", "bool": "torch.bool",
	"byte": "torch.uint8",
}

// MetaMethods are tensor methods that return metadata, not data.
var MetaMethods = map[string]bool{
	"size": true, "numel": true, "dim": true, "ndimension": true, "stride": true, "element_size": true,
	"is_contiguous": true, "data_ptr": true, "get_device": true, "nelement": true, "storage_offset": true,
	"is_floating_point": true, "is_complex": true, "is_pinned": true, "untyped_storage": true, "storage": true,
	"nbytes": true, "_nnz": true, "nnz": true, "dense_dim": true, "sparse_dim": true,
}

// MetaAttrs are tensor attributes that are metadata.
var MetaAttrs = map[string]bool{
	"shape": true, "dtype": true, "device": true, "ndim": true, "is_cuda": true, "layout": true,
	"requires_grad": true, "is_sparse": true, "itemsize": true, "nbytes": true, "is_leaf": true,
}

// TensorAttrs are tensor attributes that are tensors.
var TensorAttrs = map[string]bool{"T": true, "mT": true, "H": true, "mH": true, "real": true, "imag": true, "data": true, "grad": true}

// SplitMethods return a tuple of tensors: unpacking their result binds tensors.
var SplitMethods = map[string]bool{
	"chunk": true, "split": true, "unbind": true, "topk": true, "sort": true, "max": true, "min": true,
	"tensor_split": true, "split_with_sizes": true, "unique": true, "aminmax": true, "kthvalue": true, "mode": true,
	"median": true, "var_mean": true, "std_mean": true, "frexp": true,
}

// TorchFactories are torch functions that make a tensor on the default (or
// their `device=`) device, besides the allocators.
var TorchFactories = map[string]bool{
	"torch.linspace": true, "torch.logspace": true, "torch.eye": true, "torch.empty_strided": true,
	"torch.tril_indices": true, "torch.triu_indices": true, "torch.scalar_tensor": true, "torch.randint": true,
}

// StrMethods are methods of Python strings (their results are host data).
var StrMethods = map[string]bool{
	"split": true, "rsplit": true, "strip": true, "lstrip": true, "rstrip": true, "lower": true, "upper": true,
	"replace": true, "startswith": true, "endswith": true, "format": true, "join": true, "partition": true,
	"rpartition": true, "splitlines": true, "encode": true, "decode": true, "removeprefix": true, "removesuffix": true,
}

// TorchMeta are torch functions that return metadata, not tensors.
var TorchMeta = map[string]bool{
	"torch.numel": true, "torch.Size": true, "torch.device": true, "torch.finfo": true, "torch.iinfo": true,
	"torch.promote_types": true, "torch.result_type": true, "torch.can_cast": true, "torch.typename": true,
	"torch.broadcast_shapes": true, "torch.dtype": true, "torch.compile": true, "torch.no_grad": true,
	"torch.inference_mode": true, "torch.enable_grad": true, "torch.autocast": true, "torch.Generator": true,
}

// PytreeWalkers are torch's pytree functions that take a nested structure
// of tensors apart or put it together (the private module and its public
// alias, torch 2.6+): they read the structure, never a tensor's data
// (tree_map is not one: its function may read them).
var PytreeWalkers = map[string]bool{
	"torch.utils._pytree.tree_flatten": true, "torch.utils._pytree.tree_leaves": true,
	"torch.utils._pytree.tree_unflatten": true, "torch.utils._pytree.tree_structure": true,
	"torch.utils._pytree.tree_flatten_with_path": true, "torch.utils._pytree.tree_leaves_with_path": true,
	"torch.utils.pytree.tree_flatten": true, "torch.utils.pytree.tree_leaves": true,
	"torch.utils.pytree.tree_unflatten": true, "torch.utils.pytree.tree_structure": true,
	"torch.utils.pytree.tree_flatten_with_path": true, "torch.utils.pytree.tree_leaves_with_path": true,
}

// ReadsNoData reports whether torch function q, given tensors, reads none
// of their data: metadata (TorchMeta), type and state predicates
// (HostPredicate, but torch.is_nonzero, which reads its tensor), and the
// pytree walkers.
func ReadsNoData(q string) bool {
	return TorchMeta[q] || PytreeWalkers[q] || HostPredicate(q) && q != "torch.is_nonzero"
}

// HostPredicate reports whether q, a dotted name in torch's namespace, is
// one of torch's type and state predicates: its last part begins with
// "is_", "are_" or "_is_" (`torch.is_tensor(v)`, `torch.is_grad_enabled()`,
// `torch.compiler.is_compiling()`, `torch.are_deterministic_algorithms_enabled()`,
// `torch.autograd._is_checkpoint_valid()`). They return a Python bool read
// on the host and launch nothing (torch.is_nonzero reads its tensor
// argument first: CG101 names it).
func HostPredicate(q string) bool {
	if !strings.HasPrefix(q, "torch.") {
		return false
	}
	return PredicateName(q[strings.LastIndexByte(q, '.')+1:])
}

// PredicateName: a function or method name that says it returns a bool
// (`is_contiguous`, `_is_view`, `are_deterministic_algorithms_enabled`).
func PredicateName(name string) bool {
	return strings.HasPrefix(name, "is_") || strings.HasPrefix(name, "_is_") || strings.HasPrefix(name, "are_")
}

// Dtypes are torch's dtype objects by their names in the torch namespace
// (`torch.float32` and its alias `torch.float`).
var Dtypes = map[string]bool{
	"torch.float32": true, "torch.float": true, "torch.float64": true, "torch.double": true,
	"torch.float16": true, "torch.half": true, "torch.bfloat16": true,
	"torch.complex32": true, "torch.chalf": true, "torch.complex64": true, "torch.cfloat": true,
	"torch.complex128": true, "torch.cdouble": true,
	"torch.uint8": true, "torch.uint16": true, "torch.uint32": true, "torch.uint64": true,
	"torch.int8": true, "torch.int16": true, "torch.short": true, "torch.int32": true, "torch.int": true,
	"torch.int64": true, "torch.long": true, "torch.bool": true,
	"torch.float8_e4m3fn": true, "torch.float8_e4m3fnuz": true, "torch.float8_e5m2": true,
	"torch.float8_e5m2fnuz": true, "torch.float8_e8m0fnu": true, "torch.float4_e2m1fn_x2": true,
	"torch.qint8": true, "torch.quint8": true, "torch.qint32": true, "torch.quint4x2": true, "torch.quint2x4": true,
}

// DtypeAttrs are the attributes a torch.dtype has (torch/_C/__init__.pyi's
// dtype class): reading any other raises AttributeError.
var DtypeAttrs = map[string]bool{
	"is_floating_point": true, "is_complex": true, "is_signed": true, "itemsize": true,
	"to_real": true, "to_complex": true,
	"__reduce__": true, "__repr__": true, "__str__": true, "__eq__": true, "__ne__": true, "__hash__": true,
	"__class__": true, "__doc__": true,
}

// NoSuchAttr reports whether the external object named q is known to
// have no attribute attr (a dtype's attributes are a closed set).
func NoSuchAttr(q, attr string) bool {
	return Dtypes[q] && !DtypeAttrs[attr]
}

// CPUStateGetters return the state of a random number generator as a CPU
// tensor (torch.get_rng_state's ByteTensor; torch.cuda.get_rng_state
// copies the device generator's state to the host): comparing or reading
// them reads host memory, never the device.
var CPUStateGetters = map[string]bool{
	"torch.get_rng_state": true, "torch.random.get_rng_state": true, "torch.cuda.get_rng_state": true,
	"torch.cuda.random.get_rng_state": true,
}

// TorchClass reports whether q, a dotted name in torch's namespace, is a
// class other than a tensor type: its last part is in CapWords
// (`torch.torch_version.TorchVersion`, `torch.optim.AdamW`,
// `torch.distributions.Normal`, `torch.Stream`) and does not end in
// "Tensor" (`torch.Tensor`, `torch.LongTensor`, `torch.cuda.FloatTensor`
// make tensors). Calling one makes an object of that class, not a tensor:
// `TorchVersion(torch.__version__) < "2.11"` compares version strings on
// the host.
func TorchClass(q string) bool {
	if !strings.HasPrefix(q, "torch.") {
		return false
	}
	last := q[strings.LastIndexByte(q, '.')+1:]
	if last == "" || last[0] < 'A' || last[0] > 'Z' || strings.HasSuffix(last, "Tensor") {
		return false
	}
	return true
}

// TensorOnlyMethods are methods only tensors have: their result is a
// tensor whatever the receiver is known to be.
var TensorOnlyMethods = map[string]bool{
	"contiguous": true, "cuda": true, "cpu": true, "pin_memory": true, "view": true, "reshape": true,
	"unsqueeze": true, "squeeze": true, "permute": true, "transpose": true, "t": true, "to": true, "float": true,
	"half": true, "bfloat16": true, "long": true, "int": true, "clone": true, "detach": true, "flatten": true,
	"expand": true, "expand_as": true, "narrow": true, "masked_fill": true, "gather": true, "scatter": true,
	"index_select": true, "cumsum": true, "amax": true, "amin": true, "argmax": true, "argmin": true,
	"sum": true, "mean": true, "abs": true, "isnan": true, "isinf": true, "any": true, "all": true, "nonzero": true,
	"softmax": true, "exp": true, "sqrt": true, "norm": true, "max": true, "min": true, "prod": true,
	"new_empty": true, "new_zeros": true, "new_full": true, "new_ones": true, "eq": true, "ne": true,
	"lt": true, "le": true, "gt": true, "ge": true, "clamp": true, "clamp_min": true, "clamp_max": true,
	"repeat_interleave": true, "repeat": true, "masked_select": true, "type_as": true, "view_as": true,
	"reshape_as": true, "logical_not": true, "sign": true, "tanh": true, "sigmoid": true, "float_power": true,
}

// AliasMethods return their receiver, or a view of it, at least sometimes.
var AliasMethods = map[string]bool{
	"to": true, "contiguous": true, "view": true, "reshape": true, "detach": true, "expand": true, "flatten": true,
	"view_as": true, "reshape_as": true, "squeeze": true, "unsqueeze": true, "transpose": true, "permute": true,
	"t": true, "narrow": true, "select": true, "type": true, "float": true, "half": true, "bfloat16": true,
	"int": true, "long": true, "double": true, "bool": true, "cuda": true, "requires_grad_": true,
	"cpu": true, "type_as": true, "short": true, "byte": true, "char": true,
}

// The torch functions rules tell apart, one vocabulary for all of them.
var (
	// HostReads are the tensor methods that copy its data to the host.
	HostReads = map[string]bool{"item": true, "tolist": true, "cpu": true, "numpy": true}
	// HostBuilders make a tensor from host (Python or NumPy) data.
	HostBuilders = withLegacyConstructors(map[string]bool{"torch.tensor": true, "torch.as_tensor": true, "torch.from_numpy": true, "torch.asarray": true})
	// LikeFactories allocate a tensor shaped like another.
	LikeFactories = map[string]bool{"torch.empty_like": true, "torch.zeros_like": true, "torch.ones_like": true, "torch.full_like": true}
	// RandomFactories draw random numbers: a fresh draw is not a derivation
	// of the inputs, and moving one into a graph changes what it computes.
	RandomFactories = map[string]bool{"torch.rand": true, "torch.randn": true, "torch.randint": true, "torch.randperm": true,
		"torch.rand_like": true, "torch.randn_like": true, "torch.randint_like": true, "torch.normal": true,
		"torch.bernoulli": true, "torch.multinomial": true, "torch.poisson": true}
	// TensorDraws are the random functions that draw from a tensor they
	// are given (probabilities, rates, means), on that tensor's device
	// unless `device=` says otherwise; from numbers they draw on the
	// default device (`torch.normal(0.0, 1.0, size)`).
	TensorDraws = map[string]bool{"torch.bernoulli": true, "torch.multinomial": true, "torch.poisson": true, "torch.normal": true}
)

// FreshOps are out-of-place torch operations: called as `torch.X`,
// `torch.ops.aten.X` (any overload: `.default`, `.Tensor`) or
// `torch.nn.functional.X`, each returns a new tensor, never one of its
// arguments or a view of one (tensors.TorchOpFresh).
var FreshOps = map[string]bool{"add": true, "sub": true, "mul": true, "div": true, "neg": true, "abs": true,
	"exp": true, "log": true, "sqrt": true, "rsqrt": true, "pow": true, "where": true, "maximum": true,
	"minimum": true, "clamp": true, "matmul": true, "mm": true, "bmm": true, "addmm": true, "einsum": true,
	"cat": true, "stack": true, "cumsum": true, "sum": true, "mean": true, "amax": true, "softmax": true,
	"log_softmax": true, "sigmoid": true, "tanh": true, "relu": true, "silu": true, "gelu": true,
	"linear": true, "gather": true, "index_select": true, "masked_fill": true, "empty_like": true,
	"zeros_like": true, "ones_like": true, "full_like": true, "clone": true, "eq": true, "ne": true,
	"lt": true, "le": true, "gt": true, "ge": true, "repeat_interleave": true, "bincount": true,
	"empty": true, "zeros": true, "ones": true, "full": true, "arange": true}

// DeviceModules are torch.cuda and the modules other device backends
// register beside it (torch._register_device_module): their functions
// query and set the device (`torch.xpu.get_device_name()`,
// `torch.npu.current_device()`) and make no tensor.
var DeviceModules = []string{"torch.cuda.", "torch.xpu.", "torch.mps.", "torch.mtia.", "torch.accelerator.",
	"torch.npu.", "torch.musa.", "torch.mlu.", "torch.hpu."}

// DeviceModule reports whether qualified name q is in one of
// DeviceModules.
func DeviceModule(q string) bool {
	for _, ns := range DeviceModules {
		if strings.HasPrefix(q, ns) {
			return true
		}
	}
	return false
}

// NonTensorNamespaces are torch's modules whose functions make no tensor
// (compilers, tracers, tooling, quantization workflows): the value model
// does not take what they return for a tensor, as it does another
// torch.* function's.
var NonTensorNamespaces = []string{"torch.compiler.", "torch.jit.", "torch.fx.", "torch.profiler.", "torch.utils.",
	"torch.overrides.", "torch.hub.", "torch.onnx.", "torch.export.", "torch.testing.", "torch.multiprocessing.",
	"torch.autograd.profiler.", "torch.version.", "torch.ao.", "torch.quantization.", "torch.package."}

// NonTensorModule reports whether qualified name q is in one of
// NonTensorNamespaces.
func NonTensorModule(q string) bool {
	for _, ns := range NonTensorNamespaces {
		if strings.HasPrefix(q, ns) {
			return true
		}
	}
	return false
}

// ModuleState are the wrappers that make a tensor a module's state: a
// parameter (torch.nn.Parameter) or, since torch 2.5, a buffer
// (torch.nn.Buffer). Bound to a module's attribute, the tensor is
// registered, and Module.to, .cuda, .half and their kin move or cast it
// with the module ("Moves and/or casts the parameters and buffers",
// torch.nn.Module.to's documentation): where it was made says nothing of
// where it lives when the module runs. A plain tensor attribute is not
// moved.
var ModuleState = map[string]bool{
	"torch.nn.Parameter": true, "torch.nn.parameter.Parameter": true,
	"torch.nn.Buffer": true, "torch.nn.parameter.Buffer": true,
}

// ObjectNamespaces are torch's namespaces whose callables build objects
// that are not tensors (an optimizer, a module, a data loader, a process
// group, a profiler): a value they return is no tensor derived from the
// inputs. torch.nn.functional and torch.nn.init compute tensors.
var ObjectNamespaces = []string{"torch.optim.", "torch.utils.", "torch.distributed.", "torch.profiler.",
	"torch.autograd.profiler.", "torch.cuda.", "torch.backends.", "torch.library.", "torch.fx.", "torch.jit.",
	"torch.compiler.", "torch._dynamo.", "torch.export."}

// ObjectBuilder reports whether qualified callable q builds a non-tensor
// object: a callable of ObjectNamespaces, or a class of torch.nn
// (torch.nn.Linear; not torch.nn.functional.* or torch.nn.init.*).
func ObjectBuilder(q string) bool {
	for _, ns := range ObjectNamespaces {
		if strings.HasPrefix(q, ns) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(q, "torch.nn."); ok && !strings.HasPrefix(rest, "functional.") && !strings.HasPrefix(rest, "init.") {
		return true
	}
	return false
}

// LegacyConstructors are torch's legacy tensor constructors
// (`torch.Tensor(data)`, `torch.LongTensor(lens)`, `torch.cuda.FloatTensor(x)`):
// called with data they build a tensor from it, like torch.tensor; the
// value is true for the `torch.cuda.` ones, which build it on the device.
// Without a device argument the others build on the default device, the
// CPU unless a program sets another.
var LegacyConstructors = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range []string{"", "Float", "Double", "Half", "BFloat16", "Byte", "Char", "Short", "Int", "Long", "Bool"} {
		m["torch."+t+"Tensor"] = false
		if t != "" {
			m["torch.cuda."+t+"Tensor"] = true
		}
	}
	return m
}()

func withLegacyConstructors(m map[string]bool) map[string]bool {
	for q := range LegacyConstructors {
		m[q] = true
	}
	return m
}

// GraphCompilers are torch's compilers whose modes can capture CUDA graphs
// (torch.compile's documented `mode` and `options`).
var GraphCompilers = map[string]bool{"torch.compile": true, "torch._dynamo.optimize": true}

// GraphCompileModes are torch.compile's modes that capture CUDA graphs of
// what they compile (CUDA Graph Trees, "cudagraphs" in the docs' table):
// "reduce-overhead", and "max-autotune", which enables them by default on
// a GPU; "max-autotune-no-cudagraphs" and "default" do not.
var GraphCompileModes = map[string]bool{"reduce-overhead": true, "max-autotune": true}

// CompileGraphSetting says whether torch.compile's keyword name with the
// value text val makes it capture CUDA graphs, and how to say so ("" when
// it does not): `mode="reduce-overhead"`, or inductor's
// `options={"triton.cudagraphs": True}`.
func CompileGraphSetting(name, val string) string {
	switch name {
	case "mode":
		if v := strings.Trim(val, `"'`); GraphCompileModes[v] {
			return "torch.compile(mode=\"" + v + "\") captures CUDA graphs"
		}
	case "options":
		if strings.Contains(val, "triton.cudagraphs") && strings.Contains(val, "True") {
			return "torch.compile with inductor's triton.cudagraphs option captures CUDA graphs"
		}
	}
	return ""
}

// GradDisabling are torch's documented context managers and decorators that
// turn autograd off for what runs in them (called with no argument).
var GradDisabling = map[string]bool{
	"torch.no_grad": true, "torch.inference_mode": true, "torch.autograd.no_grad": true,
	"torch.autograd.grad_mode.no_grad": true, "torch.autograd.grad_mode.inference_mode": true,
}
