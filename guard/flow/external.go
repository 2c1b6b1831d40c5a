package flow

import (
	"strings"
	"unicode"
)

// transparent are external callables that return (a wrapper that calls)
// their first argument: decorators and wrappers that keep a function's
// behaviour. Called without a positional argument (`@torch.no_grad()`,
// `@functools.lru_cache(maxsize=8)`, `@torch.compile(mode=...)`), they
// return a decorator that is transparent too.
var transparent = map[string]bool{
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
	"torch.compiler.allow_in_graph": true, "torch.library.custom_op": true, "torch.fx.wrap": true,
	"contextlib.contextmanager": true, "contextlib.asynccontextmanager": true,
	"staticmethod": true, "classmethod": true, "property": true,
	"abc.abstractmethod": true, "typing.overload": true, "typing.final": true, "typing_extensions.override": true,
	"typing.override": true, "dataclasses.dataclass": true, "typing.runtime_checkable": true,
	"torch.cuda.nvtx.range": true, "nvtx.annotate": true, "torch.profiler.record_function": true,
}

// isTransparent reports whether calling the external name returns its
// argument ("x()" stands for a decorator that a call returned).
func isTransparent(d string) bool {
	return transparent[strings.TrimSuffix(d, "()")]
}

// containerClasses are torch.nn's module containers: their elements are
// the modules given to them.
var containerClasses = []string{"nn.ModuleList", "nn.Sequential", "nn.ModuleDict", "nn.ParameterList", "nn.ParameterDict",
	"nn.modules.container.ModuleList", "nn.modules.container.Sequential", "nn.modules.container.ModuleDict"}

// builtinContainers make a container of their argument's elements.
var builtinContainers = map[string]bool{
	"list": true, "tuple": true, "set": true, "frozenset": true, "sorted": true, "reversed": true, "iter": true,
	"collections.deque": true, "collections.OrderedDict": true, "collections.defaultdict": false,
	"copy.copy": true, "copy.deepcopy": true, "itertools.chain": true,
}

// torchObjects are torch callables that make objects, not tensors.
var torchObjects = map[string]bool{
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

// external handles a call of an external name.
func (s *solver) external(ci int32, d string, st uint8) {
	c := &s.cons[ci]
	a := c.args
	if a == nil {
		a = &callArgs{}
	}
	pos := append(append([]NID{}, c.prepend...), a.pos...)
	arg := func(i int) NID {
		if i < len(pos) {
			return pos[i]
		}
		return noNode
	}
	lit := func(i int) (string, bool) {
		i -= len(c.prepend)
		if i >= 0 && i < len(a.lits) && a.litOK[i] {
			return a.lits[i], true
		}
		return "", false
	}
	last := d[strings.LastIndexByte(d, '.')+1:]
	switch {
	case d == "functools.partial" || d == "partial":
		if len(pos) == 0 {
			return
		}
		pv := s.intern(Value{Kind: VPartial, Site: c.site, Elems: pos[0], Args: pos[1:]})
		s.add(c.dst, pv, st)
		return
	case isTransparent(d):
		if len(pos) > 0 {
			s.copyTo(pos[0], c.dst, st)
		} else if !strings.HasSuffix(d, "()") {
			s.add(c.dst, s.ext(d+"()"), st)
		}
		return
	case d == "getattr":
		if name, ok := lit(1); ok {
			nc := s.newCons(constraint{kind: cLoad, owner: c.owner, site: c.site, attr: name, dst: c.dst})
			s.watchCapped(arg(0), nc, st)
		} else if len(pos) >= 2 {
			nc := s.newCons(constraint{kind: cLoad, owner: c.owner, site: c.site, attr: "*", dst: c.dst})
			s.watchCapped(arg(0), nc, st)
		}
		s.copyTo(arg(2), c.dst, st)
		return
	case d == "setattr":
		name, ok := lit(1)
		if !ok {
			name = "*"
		}
		nc := s.newCons(constraint{kind: cStore, owner: c.owner, site: c.site, attr: name, src: arg(2)})
		s.watchCapped(arg(0), nc, st)
		return
	case d == "super":
		// Handled where the call is built (it needs the enclosing method).
		return
	case d == "type":
		if len(pos) == 1 {
			nc := s.newCons(constraint{kind: cType, owner: c.owner, site: c.site, dst: c.dst})
			s.watchCapped(arg(0), nc, st)
		}
		return
	case d == "next":
		s.elemsIntoCapped(c, arg(0), c.dst, st)
		s.copyTo(arg(1), c.dst, st)
		return
	case d == "enumerate" || d == "zip" || d == "itertools.zip_longest" || d == "itertools.product":
		out := s.cont(c.site, tagPlain)
		tup := s.cont(c.site.Parent, tagPlain)
		for _, p := range pos {
			s.elemsIntoCapped(c, p, s.values[tup].Elems, st)
		}
		s.add(s.values[out].Elems, tup, st)
		s.add(c.dst, out, st)
		return
	case d == "map" || d == "filter" || d == "itertools.starmap":
		// The function is the first argument; any argument that holds a
		// function is called with the elements of the others.
		out := s.cont(c.site, tagPlain)
		if len(pos) >= 2 {
			for i := range pos {
				elem := s.newNode()
				for j, p := range pos {
					if j != i {
						s.elemsIntoCapped(c, p, elem, st)
					}
				}
				res := s.values[out].Elems
				if d == "filter" {
					s.copyTo(elem, s.values[out].Elems, st)
					res = s.newNode()
				}
				nc := s.newCons(constraint{kind: cCall, owner: c.owner, site: c.site, dst: res, fnOnly: true,
					args: &callArgs{pos: []NID{elem}, posSplat: []bool{false}, lits: []string{""}, litOK: []bool{false}, consts: []string{""}}, recvNode: noNode})
				s.watchCapped(pos[i], nc, st)
			}
		}
		s.add(c.dst, out, st)
		return
	case d == "dict" || d == "collections.defaultdict" || d == "types.SimpleNamespace" || d == "argparse.Namespace":
		out := s.cont(c.site, tagPlain)
		if d == "types.SimpleNamespace" || d == "argparse.Namespace" {
			// Attribute access on a namespace: an instance-like object is
			// not modelled; its keyword values are its elements.
		}
		for i, p := range pos {
			if d == "collections.defaultdict" && i == 0 {
				continue
			}
			s.elemsIntoCapped(c, p, s.values[out].Elems, st)
		}
		for _, k := range a.kw {
			s.copyTo(k.n, s.values[out].Elems, st)
		}
		s.add(c.dst, out, st)
		return
	case builtinContainers[d]:
		out := s.cont(c.site, tagPlain)
		for _, p := range pos {
			s.elemsIntoCapped(c, p, s.values[out].Elems, st)
		}
		s.add(c.dst, out, st)
		return
	case d == "staticmethod" || d == "classmethod":
		s.copyTo(arg(0), c.dst, st)
		return
	}
	for _, cc := range containerClasses {
		if strings.HasSuffix(d, cc) {
			tag := tagPlain
			if strings.HasSuffix(d, "Sequential") {
				tag = tagSequential
			}
			out := s.cont(c.site, tag)
			if tag == tagSequential {
				for i, p := range pos {
					if i < len(a.posSplat)+len(c.prepend) && i >= len(c.prepend) && a.posSplat[i-len(c.prepend)] {
						s.elemsIntoCapped(c, p, s.values[out].Elems, st)
					} else {
						s.copyTo(p, s.values[out].Elems, st)
						// nn.Sequential(OrderedDict(...)): its elements.
						s.elemsIntoCapped(c, p, s.values[out].Elems, st)
					}
				}
			} else {
				for _, p := range pos {
					s.elemsIntoCapped(c, p, s.values[out].Elems, st)
				}
			}
			s.add(c.dst, out, st)
			return
		}
	}
	switch {
	case torchObjects[d] || CompiledKernel(d):
		s.add(c.dst, s.extInst(d), st)
	case strings.HasPrefix(d, "torch.") && !startsUpper(last) && !strings.HasPrefix(d, "torch.nn.") ||
		strings.HasPrefix(d, "torch.nn.functional.") || strings.HasPrefix(d, "torch.ops."):
		s.add(c.dst, s.tensor, st)
	case startsUpper(last):
		s.add(c.dst, s.extInst(d), st)
	}
}

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
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
