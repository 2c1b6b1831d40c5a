package torchapi

// ContainerMethods are methods whose effect on a project container the
// analysis models (append, extend, get, items...).
var ContainerMethods = map[string]bool{
	"append": true, "add": true, "appendleft": true, "put": true, "put_nowait": true, "insert": true,
	"extend": true, "update": true, "extendleft": true, "union": true, "setdefault": true, "get": true,
	"pop": true, "popitem": true, "popleft": true, "get_nowait": true, "values": true, "copy": true,
	"items": true, "__getitem__": true, "__iter__": true, "__setitem__": true,
}

// ContainerStores are the container methods that put a value in (list,
// set, dict, deque, queue): the one table, which the points-to analysis
// models and CG301 reads to say where a temporary is kept.
var ContainerStores = map[string]bool{
	"append": true, "add": true, "appendleft": true, "put": true, "put_nowait": true, "insert": true,
	"extend": true, "update": true, "extendleft": true, "setdefault": true,
}

// TensorHomonyms are the ContainerStores that torch.Tensor also has
// (`t.add(x)` adds, `t.put(index, source)` scatters): they store only
// when the receiver is a container.
var TensorHomonyms = map[string]bool{"add": true, "put": true}

// ModuleReturnsSelf are nn.Module methods that return the module itself
// (`model = Model(cfg).to(device).eval()`).
var ModuleReturnsSelf = map[string]bool{
	"to": true, "cuda": true, "cpu": true, "eval": true, "train": true, "half": true, "float": true, "double": true,
	"bfloat16": true, "requires_grad_": true, "share_memory": true, "apply": true, "type": true, "to_empty": true,
	"xpu": true, "npu": true, "ipu": true,
}

// ReturnsReceiver are the ModuleReturnsSelf methods whose result is the
// receiver itself on a tensor too, or that a tensor does not have
// (`model.eval()`, `t.requires_grad_()`): a value read through one is the
// receiver (a field bound to `param.eval()` holds what was passed for
// param), where `.to()`, `.cuda()` or `.float()` of a tensor is a new one.
var ReturnsReceiver = map[string]bool{"eval": true, "train": true, "requires_grad_": true}

// TrueUnderCapture are calls that return true wherever a CUDA graph is
// being captured (a capture runs on a CUDA device), so that `if
// torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
// raise ...` is a capture guard.
var TrueUnderCapture = map[string]bool{
	"torch.cuda.is_available":   true,
	"torch.cuda.is_initialized": true,
}

// CaptureAPINames are torch.cuda's CUDA-graph names: a check that one
// exists (`hasattr(torch.cuda, "is_current_stream_capturing")`) is true
// wherever a capture runs.
var CaptureAPINames = map[string]bool{
	"is_current_stream_capturing": true, "graph": true, "CUDAGraph": true, "graphs": true,
	"make_graphed_callables": true, "graph_pool_handle": true,
}

// OpRegistration are torch's documented ways to register a Python function
// as an operator's implementation (torch.library): the function then runs
// wherever the operator runs, under any caller's capture. The value is
// the registered function's positional index in the call; -1 for a
// decorator (the decorated definition). Fake (meta) implementations are
// not here: they run on no device.
var OpRegistration = map[string]int{
	"torch.library.Library.impl":    1,
	"torch.library.impl":            -1,
	"torch.library.register_kernel": -1,
	"torch.library.custom_op":       -1,
	"torch.library.triton_op":       -1,
}

// Transparent are external callables that return (a wrapper that calls)
// their first argument: decorators and wrappers that keep a function's
// behaviour. Called without a positional argument (`@torch.no_grad()`,
// `@functools.lru_cache(maxsize=8)`, `@torch.compile(mode=...)`), they
// return a decorator that is transparent too.
var Transparent = map[string]bool{
	"functools.lru_cache": true, "functools.cache": true, "functools.wraps": true,
	"functools.update_wrapper": true, "functools.singledispatch": true, "functools.total_ordering": true,
	"functools.cached_property": true, "cached_property": true,
	"torch.compile": true, "torch.jit.script": true, "torch.jit.trace": true, "torch.jit.ignore": true,
	"torch.jit.unused": true, "torch.jit.export": true,
	"torch.no_grad": true, "torch.inference_mode": true, "torch.enable_grad": true,
	"torch.autograd.no_grad": true, "torch.autocast": true, "torch.amp.autocast": true,
	"torch.cuda.amp.autocast": true, "torch.cuda.amp.custom_fwd": true, "torch.cuda.amp.custom_bwd": true,
	"torch.amp.custom_fwd": true, "torch.amp.custom_bwd": true,
	"torch._dynamo.disable": true, "torch.compiler.disable": true, "torch._dynamo.allow_in_graph": true,
	"torch.compiler.allow_in_graph": true, "torch.library.custom_op": true, "torch.library.triton_op": true, "torch.library.wrap_triton": true,
	"torch.fx.wrap":             true,
	"contextlib.contextmanager": true, "contextlib.asynccontextmanager": true,
	"staticmethod": true, "classmethod": true, "property": true,
	"abc.abstractmethod": true, "typing.overload": true, "typing.final": true, "typing_extensions.override": true,
	"typing.override": true, "dataclasses.dataclass": true, "typing.runtime_checkable": true,
	"torch.cuda.nvtx.range": true, "nvtx.annotate": true, "torch.profiler.record_function": true,
}

// RemoteCall is Ray's documented maker of remote functions and actor
// classes (`@ray.remote`, `ray.remote(num_gpus=1)(Cls)`): what it makes runs
// in a worker process, called over Ray's RPC (`f.remote(x)`,
// `actor.step.remote(x)`), so no caller's capture (one process's stream)
// holds it. Its calls are not call edges: a remote call does not run on the
// caller's stream.
var RemoteCall = struct{ Decorator string }{"ray.remote"}

// ProcessStarters are the documented launchers that run a function as the
// entry of another process or thread: the classes whose `target=` keyword
// names it (the standard library's `multiprocessing.Process` and
// `threading.Thread`, torch's re-export of multiprocessing, also made
// through a context: `mp.get_context("spawn").Process(target=f)`), and the
// functions whose first argument (or `fn=`) does
// (`torch.multiprocessing.spawn`, `torch.multiprocessing.start_processes`). The entry runs what
// its own process or thread does (a worker's loop, a server's), so no
// caller's capture (one stream of the calling thread) holds it.
var ProcessStarters = struct {
	Modules []string        // the modules whose classes they are (a name under one of them)
	Classes map[string]bool // class names: the entry is the `target=` keyword
	Funcs   map[string]bool // full names: the entry is the first argument or `fn=`
}{
	Modules: []string{"multiprocessing", "torch.multiprocessing", "threading"},
	Classes: map[string]bool{"Process": true, "Thread": true},
	Funcs:   map[string]bool{"torch.multiprocessing.spawn": true, "torch.multiprocessing.start_processes": true},
}

// BuiltinContainers make a container of their argument's elements.
var BuiltinContainers = map[string]bool{
	"list": true, "tuple": true, "set": true, "frozenset": true, "sorted": true, "reversed": true, "iter": true,
	"collections.deque": true, "collections.OrderedDict": true, "collections.defaultdict": false,
	"copy.copy": true, "copy.deepcopy": true, "itertools.chain": true,
}

// ValueBuiltins are Python's builtins whose result is made from their
// arguments' values, so a host value read from the device stays one
// through them (`float(x.item())`, `all(done)`, `max(scores)`,
// `enumerate(ids.tolist())`: contexts.hostReadLocals).
var ValueBuiltins = map[string]bool{
	"float": true, "int": true, "bool": true, "all": true, "any": true, "min": true, "max": true,
	"sum": true, "abs": true, "round": true, "list": true, "tuple": true, "set": true,
	"sorted": true, "reversed": true, "enumerate": true, "zip": true,
}

// TorchObjects are torch callables that make objects, not tensors.
var TorchObjects = map[string]bool{
	"torch.cuda.graph": true, "torch.cuda.graphs.graph": true, "torch.cuda.stream": true, "torch.cuda.device": true,
	"torch.cuda.current_stream": true, "torch.cuda.default_stream": true, "torch.cuda.graph_pool_handle": true,
	"torch.cuda.Stream": true, "torch.cuda.Event": true, "torch.cuda.CUDAGraph": true, "torch.device": true,
	"torch.Generator": true, "torch.npu.graph": true, "torch.npu.NPUGraph": true, "torch.npu.Stream": true,
	"torch.cuda.get_device_properties": true, "torch.cuda.get_device_capability": true, "torch.cuda.is_available": true,
	"torch.cuda.device_count": true, "torch.cuda.current_device": true, "torch.get_default_dtype": true,
	"torch.distributed.get_rank": true, "torch.distributed.get_world_size": true, "torch.distributed.new_group": true,
	"torch.cuda.synchronize": true, "torch.cuda.set_device": true, "torch.set_default_dtype": true,
	"torch.set_default_device": true, "torch.cuda.is_current_stream_capturing": true, "torch.is_tensor": true,
	"torch.finfo": true, "torch.iinfo": true, "torch.Size": true, "torch.dtype": true,
}

// ModuleOwnTensors are the tensors a torch.nn module's constructor makes
// itself (`nn.Linear(1, 1).weight` is a new Parameter): binding its
// `.data` right after making the module sets up a new object.
var ModuleOwnTensors = map[string]bool{
	"weight": true, "bias": true, "running_mean": true, "running_var": true, "in_proj_weight": true,
	"in_proj_bias": true,
}

// ModuleTensorAttrs are the attributes of a torch module (outside the
// project, or a value only declared as one) that hold or give tensors: its
// weights and nn.Module's tensor methods. Any other attribute is unknown:
// the methods that give submodules (`named_modules()`) give modules of
// unknown classes, and a name nn.Module does not define (`get_model`,
// `ctx_mgr`) belongs to the project class the value really is.
var ModuleTensorAttrs = map[string]bool{
	"weight": true, "bias": true, "running_mean": true, "running_var": true, "in_proj_weight": true,
	"in_proj_bias": true, "weight_scale": true, "forward": true, "__call__": true, "to": true, "cuda": true,
	"cpu": true, "half": true, "float": true, "bfloat16": true, "double": true, "type": true,
	"parameters": true, "named_parameters": true, "buffers": true, "named_buffers": true,
	"state_dict": true, "get_parameter": true, "get_buffer": true,
}

// ContainerClasses are torch.nn's module containers: their elements are
// the modules given to them.
var ContainerClasses = []string{"nn.ModuleList", "nn.Sequential", "nn.ModuleDict", "nn.ParameterList", "nn.ParameterDict",
	"nn.modules.container.ModuleList", "nn.modules.container.Sequential", "nn.modules.container.ModuleDict"}

// TensorTypeNames are the annotations that declare a tensor (`x: torch.Tensor`,
// `w: nn.Parameter`).
var TensorTypeNames = map[string]bool{"Tensor": true, "torch.Tensor": true, "torch.FloatTensor": true, "torch.LongTensor": true, "torch.IntTensor": true, "torch.BoolTensor": true, "torch.nn.Parameter": true, "nn.Parameter": true, "Parameter": true}

// Parametrize are pytest's decorator that runs a test once for each of a
// list of argument values (`@pytest.mark.parametrize("kind", ["a", "b"])`,
// or `mark.parametrize` after `from pytest import mark`): a test
// parameter it names takes only those values, which a constant-dispatch
// call of the test passes on (guarded returns, guard/flow).
var Parametrize = map[string]bool{"pytest.mark.parametrize": true, "mark.parametrize": true}

// ModuleImporters import a module named by a string at run time and
// return it: `importlib.import_module(name)`, the standard library's
// documented way (flow/importstr.go resolves the names it can read).
var ModuleImporters = map[string]bool{
	"importlib.import_module": true,
}
