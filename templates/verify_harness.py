"""capguard verify harness: one (target, batch size) case per process.

Written to a temporary folder and run by `capguard verify` with the user's
interpreter as `python3 verify_harness.py CASE.json`. It warms the target up on
a side stream, captures it with torch.cuda.graph, then for each replay writes a
new batch into the static inputs, runs the replay-prep callable if any, churns
the caching allocator and poisons the blocks it hands out, replays, and
compares the replay's outputs with an eager run on the same inputs.

It reports facts, not verdicts: the Go side decides clean / stale-read / fault /
capture-error. Protocol on stdout (anything else the user's code prints is
ignored):

    @@capguard-verify phase NAME
    @@capguard-verify result {JSON}

One case per process because a CUDA fault is sticky: after one, the process
can print its result but can launch nothing more. The harness ends with
os._exit so that no teardown touches a poisoned context.
"""

import importlib
import importlib.util
import json
import linecache
import os
import sys
import time
import traceback

PROTOCOL = 1
MARK = "@@capguard-verify"

# Poison patterns written into every block the allocator hands out before a
# replay: a graph that reads memory it no longer owns reads these.
POISON_INT = 0x7FFFFFF0
POISON_FLOAT = -7.0e30


class HarnessError(Exception):
    """A case that could not run; kind is one of no-torch, no-gpu, bad-target, bad-spec, error."""

    def __init__(self, kind, message):
        Exception.__init__(self, message)
        self.kind = kind


def emit(kind, payload):
    sys.stdout.write("%s %s %s\n" % (MARK, kind, payload))
    sys.stdout.flush()


_PHASE = ["start"]


def phase(name):
    _PHASE[0] = name
    emit("phase", name)


# ---------------------------------------------------------------- loading


_MODULES = {}


def load_module(path, dotted, sys_path):
    """Load a Python file once per process; the target and its prep share module state."""
    key = (os.path.realpath(path), dotted or "")
    if key in _MODULES:
        return _MODULES[key]
    for p in reversed(sys_path or []):
        if p not in sys.path:
            sys.path.insert(0, p)
    name = dotted or os.path.splitext(os.path.basename(path))[0]
    if "." in name:
        importlib.import_module(name.rsplit(".", 1)[0])  # the parent package, for relative imports
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HarnessError("bad-target", "cannot load %s as a Python module" % path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _MODULES[key] = mod
    return mod


def resolve_callable(ref, what):
    """ref: {path, module, dotted, qualname}; returns the callable (unbound for Class.method)."""
    try:
        if ref.get("path"):
            mod = load_module(ref["path"], ref.get("dotted", ""), ref.get("sys_path"))
        else:
            for p in reversed(ref.get("sys_path") or []):
                if p not in sys.path:
                    sys.path.insert(0, p)
            mod = importlib.import_module(ref["module"])
    except HarnessError:
        raise
    except BaseException as e:  # a SyntaxError or an ImportError in the user's module
        raise HarnessError("bad-target", "importing the %s failed: %s" % (what, format_exc_short(e)))
    obj = mod
    for part in ref["qualname"].split("."):
        if not hasattr(obj, part):
            raise HarnessError("bad-target", "%s: %s has no attribute %r" % (what, getattr(obj, "__name__", obj), part))
        obj = getattr(obj, part)
    return mod, obj


def format_exc_short(e):
    lines = traceback.format_exception_only(type(e), e)
    return "".join(lines).strip()


# ---------------------------------------------------------------- inputs


def torch_dtype(torch, name):
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise HarnessError("bad-spec", "dtype %r is not a dtype of torch %s" % (name, torch.__version__))
    return dt


def generate(torch, a, gen, device):
    """A fresh tensor for argument spec a, drawn from the case's CPU generator."""
    dt = torch_dtype(torch, a["dtype"])
    shape = tuple(a["shape"])
    init = a.get("init") or "zeros"
    if init == "randn":
        t = torch.randn(shape, generator=gen, dtype=torch.float32) * a.get("std", 1.0) + a.get("mean", 0.0)
    elif init == "rand":
        lo, hi = a.get("low", 0.0), a.get("high", 1.0)
        t = torch.rand(shape, generator=gen, dtype=torch.float32) * (hi - lo) + lo
    elif init == "randint":
        t = torch.randint(int(a["low"]), int(a["high"]), shape, generator=gen, dtype=torch.int64)
    elif init == "arange":
        n = 1
        for s in shape:
            n *= s
        t = (torch.arange(n, dtype=torch.float64) * a.get("step", 1) + a.get("start", 0)).reshape(shape)
        if not (dt.is_floating_point or dt.is_complex):
            t = t.to(torch.int64)
    elif init == "zeros":
        t = torch.zeros(shape, dtype=torch.float32)
    elif init == "ones":
        t = torch.ones(shape, dtype=torch.float32)
    elif init == "full":
        t = torch.full(shape, a["value"], dtype=torch.float64 if dt.is_floating_point else torch.int64)
    else:
        raise HarnessError("bad-spec", "argument %r: unknown init %r" % (a["name"], init))
    t = t.to(dt)
    if device == "cpu":
        return t.pin_memory() if a.get("pin") else t
    return t.to(device)


def poison_(torch, t):
    """Fill an output buffer with a value no kernel writes by accident."""
    if t.dtype == torch.bool:
        t.fill_(True)
    elif t.is_floating_point():
        t.fill_(float("nan"))
    else:
        t.fill_(torch.iinfo(t.dtype).max - 5 if t.dtype != torch.uint8 else 0xA5)


class Inputs(object):
    def __init__(self, torch, case, device):
        self.torch = torch
        self.case = case
        self.device = device
        self.specs = case["args"]
        self.values = {}
        self.gen = torch.Generator().manual_seed(int(case.get("seed", 0)) * 1000003 + int(case["batch_size"]))
        for a in self.specs:  # mirrors after their sources
            if a["role"] != "mirror":
                self.values[a["name"]] = self._first(a)
        for a in self.specs:
            if a["role"] == "mirror":
                self.values[a["name"]] = self._first(a)

    def _device(self, a):
        d = a.get("device") or "cuda"
        return self.device if d == "cuda" else d

    def _first(self, a):
        role = a["role"]
        if role == "const":
            return a.get("value")
        if role == "mirror":
            src = self.values[a["mirror_of"]]
            t = src.detach().to("cpu", dtype=self.torch_dtype_or(a, src.dtype), copy=True)
            return t.pin_memory() if a.get("pin") else t
        t = generate(self.torch, a, self.gen, self._device(a))
        if role == "output":
            poison_(self.torch, t)
        return t

    def torch_dtype_or(self, a, default):
        return torch_dtype(self.torch, a["dtype"]) if a.get("dtype") else default

    def refresh(self):
        """Write a new batch into the static inputs (same tensors, new contents), then the mirrors."""
        for a in self.specs:
            if a["role"] == "static":
                new = generate(self.torch, a, self.gen, self._device(a))
                self.values[a["name"]].copy_(new)
        for a in self.specs:
            if a["role"] == "mirror":
                self.values[a["name"]].copy_(self.values[a["mirror_of"]])

    def call_args(self, skip):
        pos, kw = [], {}
        for a in self.specs:
            if a["name"] in skip or not a.get("pass", True):
                continue
            if a.get("kwarg"):
                kw[a["name"]] = self.values[a["name"]]
            else:
                pos.append(self.values[a["name"]])
        return pos, kw

    def outputs(self):
        return [(a["name"], self.values[a["name"]]) for a in self.specs if a["role"] == "output"]

    def data_ptrs(self):
        out = {}
        for a in self.specs:
            v = self.values[a["name"]]
            if a["role"] in ("static", "fixed", "output") and hasattr(v, "data_ptr"):
                out[a["name"]] = v.data_ptr()
        return out


def flatten(torch, obj, prefix, out):
    if isinstance(obj, torch.Tensor):
        out.append((prefix, obj))
    elif isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj):
            flatten(torch, x, "%s[%d]" % (prefix, i), out)
    elif isinstance(obj, dict):
        for k in obj:
            flatten(torch, obj[k], "%s[%r]" % (prefix, k), out)
    return out


# ---------------------------------------------------------------- comparison


def compare(torch, name, got, want, atol, rtol):
    """Exact comparison (NaN equals NaN) unless the spec gives a tolerance."""
    res = {"output": name, "elements": int(want.numel()), "mismatched": 0, "max_diff": 0.0}
    if got.shape != want.shape or got.dtype != want.dtype:
        res["mismatched"] = int(max(got.numel(), want.numel()))
        res["note"] = "replay gave %s %s, eager %s %s" % (tuple(got.shape), got.dtype, tuple(want.shape), want.dtype)
        return res
    if got.is_floating_point():
        g = got.double()
        w = want.double()
        if atol == 0 and rtol == 0:
            eq = (g == w) | (torch.isnan(g) & torch.isnan(w))
        else:
            eq = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        big = 3.0e38
        diff = (torch.nan_to_num(g, nan=0.0, posinf=big, neginf=-big) - torch.nan_to_num(w, nan=0.0, posinf=big, neginf=-big)).abs()
    elif got.dtype == torch.bool:
        eq = got == want
        diff = (got.to(torch.int64) - want.to(torch.int64)).abs().double()
    else:
        g = got.to(torch.int64)
        w = want.to(torch.int64)
        eq = g == w if (atol == 0 and rtol == 0) else ((g - w).abs().double() <= atol + rtol * w.abs().double())
        diff = (g - w).abs().double()
    ne = ~eq
    n = int(ne.sum().item())
    res["mismatched"] = n
    if n:
        res["max_diff"] = float(diff[ne].max().item())
        flat = int(ne.reshape(-1).nonzero()[0].item())
        idx = []
        for s in reversed(list(got.shape)):
            idx.append(flat % s)
            flat //= s
        idx.reverse()
        ix = tuple(idx)
        res["first_mismatch"] = {
            "output": name,
            "index": idx,
            "replay_value": scalar_repr(got[ix] if ix else got),
            "eager_value": scalar_repr(want[ix] if ix else want),
        }
    return res


def scalar_repr(t):
    v = t.item()
    return repr(v) if isinstance(v, float) else str(v)


# ---------------------------------------------------------------- state liveness


def _skip(obj):
    t = type(obj)
    mod = getattr(t, "__module__", "") or ""
    return (
        mod.startswith(("torch", "triton", "numpy", "builtins", "typing", "functools", "abc", "enum"))
        or isinstance(obj, type)
        or callable(obj)
        or type(obj).__name__ == "module"
    )


def scan_state(torch, roots, device_type="cuda"):
    """Name -> data_ptr of every CUDA tensor reachable from the roots within two steps
    (module globals, their attributes and dict values, an instance's attributes)."""
    found = {}

    def visit(name, obj, depth):
        if isinstance(obj, torch.Tensor):
            if obj.device.type == device_type:
                found[name] = (obj.data_ptr(), tuple(obj.shape), str(obj.dtype).replace("torch.", ""))
            return
        if depth >= 2:
            return
        if isinstance(obj, dict):
            for k, v in list(obj.items())[:256]:
                visit("%s[%r]" % (name, k), v, depth + 1)
            return
        if isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj[:256]):
                visit("%s[%d]" % (name, i), v, depth + 1)
            return
        if _skip(obj):
            return
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            for k, v in list(d.items())[:256]:
                if not k.startswith("__"):
                    visit("%s.%s" % (name, k), v, depth + 1)

    for rname, root in roots:
        if isinstance(root, dict):  # module globals
            for k, v in list(root.items()):
                if not k.startswith("__"):
                    visit(k if not rname else "%s.%s" % (rname, k), v, 0)
        else:
            visit(rname, root, 0)
    return found


def live_blocks(torch):
    """(start, end) of every allocated block of the caching allocator, or None where
    this torch has no memory snapshot."""
    snap = getattr(torch.cuda.memory, "_snapshot", None)
    if snap is None:
        return None
    try:
        s = snap()
    except Exception:
        return None
    segs = s.get("segments", s) if isinstance(s, dict) else s
    out = []
    for seg in segs:
        addr = seg.get("address")
        if addr is None:
            continue
        for b in seg.get("blocks", []):
            if b.get("state") == "active_allocated":
                out.append((addr, addr + b["size"]))
            addr += b["size"]
    return out


def is_live(ptr, blocks):
    if blocks is None:
        return None
    for lo, hi in blocks:
        if lo <= ptr < hi:
            return True
    return False


# ---------------------------------------------------------------- allocator churn


def churn_and_poison(torch, device, empty_cache):
    """Free-and-reuse the caching allocator, then hold poisoned blocks of every size
    class, so that memory a graph no longer owns holds poison at replay."""
    junk = [torch.full((1 << 20,), -7.0, device=device) for _ in range(8)]
    junk += [torch.full((1 << 18,), 123456789, dtype=torch.int64, device=device) for _ in range(8)]
    del junk
    if empty_cache:
        torch.cuda.empty_cache()
    held = []
    # small pool (blocks up to 1 MiB, rounded to 512 bytes): best fit hands the
    # freed small blocks to these first
    for nbytes in (512, 1024, 2048, 4096, 16384, 65536, 262144, 1 << 20):
        for _ in range(48):
            held.append(torch.full((nbytes // 4,), POISON_INT, dtype=torch.int32, device=device))
    for _ in range(16):
        held.append(torch.full((1 << 22,), POISON_INT, dtype=torch.int32, device=device))
    for _ in range(4):
        held.append(torch.full((1 << 22,), POISON_FLOAT, dtype=torch.float32, device=device))
    return held


# ---------------------------------------------------------------- errors


_CUDA_ERROR_KEYS = ("CUDA error", "cudaError", "CUDA driver error", "illegal memory access", "misaligned address",
                    "device-side assert", "unspecified launch failure", "CUBLAS_STATUS", "an illegal instruction")


def is_cuda_error(e):
    """Whether e or an exception it was raised from carries a CUDA error."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if any(k in str(e) for k in _CUDA_ERROR_KEYS):
            return True
        e = e.__cause__ or e.__context__
    return False


def describe(e, user_files):
    """The exception chain, root first, and the deepest frame in the user's files."""
    chain = []
    seen = set()
    x = e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        chain.append(x)
        x = x.__cause__ or x.__context__
    chain.reverse()
    root = chain[0]
    info = {
        "type": type(root).__name__,
        "message": first_lines(str(root)),
        "messages": [first_lines("%s: %s" % (type(c).__name__, c)) for c in chain],
    }
    loc = None
    for c in chain:
        for fr in traceback.extract_tb(c.__traceback__):
            if os.path.realpath(fr.filename) in user_files:
                loc = fr
        if loc is not None:
            break
    if loc is not None:
        info["file"] = loc.filename
        info["line"] = loc.lineno
        info["code"] = (loc.line or linecache.getline(loc.filename, loc.lineno)).strip()
    info["traceback"] = "".join(traceback.format_exception(type(root), root, root.__traceback__))[-4000:]
    return info


def first_lines(s, n=6):
    lines = [l for l in s.strip().splitlines() if l.strip()]
    return "\n".join(lines[:n])[:1500]


# ---------------------------------------------------------------- dry run


class _FakeEvent(object):
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


class _FakeGraph(object):
    """Dry run: "replay" reruns the captured callable eagerly into the captured outputs.
    capture_begin / capture_end do nothing; `capguard trace file.py:fn --dry-run`
    hooks this class as it hooks CUDAGraph."""

    def __init__(self):
        self.rerun = None

    def capture_begin(self, pool=None, capture_error_mode="global"):
        pass

    def capture_end(self):
        pass

    def pool(self):
        return (0, 0)

    def replay(self):
        self.rerun()


class _FakeCapture(object):
    def __init__(self, g):
        self.g = g

    def __enter__(self):
        self.g.capture_begin()
        return self

    def __exit__(self, *a):
        self.g.capture_end()
        return False


class _Null(object):
    def __init__(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def wait_stream(self, other):
        pass


class FakeCuda(object):
    """The few torch.cuda calls the harness makes, on the CPU, for --dry-run: it checks
    the spec, the target, the prep callable and the comparison where no GPU is; its
    verdicts are not evidence of anything about capture."""

    Event = _FakeEvent
    Stream = _Null
    CUDAGraph = _FakeGraph

    def __init__(self, torch):
        self.torch = torch
        tr = sys.modules.get("capguard_tracer")  # capguard trace --dry-run
        if tr is not None and tr.tracer() is not None:
            tr.tracer().hook_graph_class(_FakeGraph, "cuda")

    def stream(self, s):
        return _Null()

    def current_stream(self):
        return _Null()

    def synchronize(self):
        pass

    def graph(self, g):
        return _FakeCapture(g)

    def set_sync_debug_mode(self, mode):
        pass


# ------------------------------------------------- dry run: kernels not run


class KernelNotRun(Exception):
    """Dry run: the target launched a kernel, which a dry run never runs."""


class _Anything(object):
    """Whatever a module-level use of triton.language needs at import time
    (tl.constexpr in annotations, tl.float32 as a default): any attribute,
    call or subscript gives another one."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything(self._name + "." + attr)

    def __call__(self, *a, **k):
        return _Anything(self._name + "()")

    def __getitem__(self, k):
        return _Anything(self._name + "[]")

    def __repr__(self):
        return "<dry-run stand-in for %s>" % self._name


class _StubKernel(object):
    """A @triton.jit (or autotune/heuristics) function in a dry run: it
    imports, and launching it raises KernelNotRun naming it."""

    def __init__(self, fn, why):
        self.fn = fn
        self.why = why
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def _launch(self, *a, **k):
        code = getattr(self.fn, "__code__", None)
        where = " (%s:%d)" % (os.path.basename(code.co_filename), code.co_firstlineno) if code else ""
        raise KernelNotRun("Triton kernel `%s`%s not launched: %s" % (self.__name__, where, self.why))

    def __getitem__(self, grid):
        return self._launch

    def __call__(self, *a, **k):
        self._launch()

    def run(self, *a, **k):
        self._launch()


def install_triton_stub(why):
    """Puts a triton package in sys.modules whose kernels import but never
    run: a dry run checks the spec and the target on the CPU, where no
    Triton kernel can run (and triton may not be installed)."""
    import types

    def deco(*args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            fn = args[0]
            return fn if isinstance(fn, _StubKernel) else _StubKernel(fn, why)
        return lambda fn: fn if isinstance(fn, _StubKernel) else _StubKernel(fn, why)

    tr = types.ModuleType("triton")
    tr.__dict__.update({
        "__version__": "0+dry-run-stub", "jit": deco, "autotune": deco, "heuristics": deco,
        "Config": lambda *a, **k: _Anything("triton.Config"),
        "cdiv": lambda a, b: -(-a // b),
        "next_power_of_2": lambda n: 1 if n <= 1 else 1 << (int(n) - 1).bit_length(),
    })
    tl = types.ModuleType("triton.language")
    tl.__getattr__ = lambda name: _Anything("triton.language." + name)
    tl.constexpr = type("constexpr", (), {})
    tr.language = tl
    tr.__getattr__ = lambda name: _Anything("triton." + name)
    sys.modules["triton"] = tr
    sys.modules["triton.language"] = tl
    for sub in ("runtime", "testing", "compiler"):
        m = types.ModuleType("triton." + sub)
        m.__getattr__ = lambda name, sub=sub: _Anything("triton.%s.%s" % (sub, name))
        setattr(tr, sub, m)
        sys.modules["triton." + sub] = m


# What a CPU-only run cannot do: a kernel launch, CUDA itself, or an op
# registered for CUDA only.
_NEEDS_GPU_KEYS = ("not compiled with CUDA", "Found no NVIDIA driver", "no CUDA GPUs are available",
                   "CUDA driver", "'CUDA' backend", "with arguments from the 'CPU' backend", "cuda is not available",
                   "Cannot access accelerator", "requires CUDA", "Tried to instantiate dummy base class")


def needs_gpu(e):
    """Whether e (or what it was raised from) is a dry run meeting GPU-only work."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, KernelNotRun) or any(k in str(e) for k in _NEEDS_GPU_KEYS):
            return True
        e = e.__cause__ or e.__context__
    return False


# ---------------------------------------------------------------- the case


def run_case(case, result):
    phase("import-torch")
    try:
        import torch
    except BaseException as e:
        raise HarnessError("no-torch", "cannot import torch with %s: %s" % (sys.executable, format_exc_short(e)))
    result["torch"] = torch.__version__
    dry = bool(case.get("dry_run"))
    try:
        import triton

        result["triton"] = triton.__version__
        why = "a dry run launches no kernel"
        if dry:
            result["triton"] += " (not used: a dry run launches no kernel)"
    except BaseException:
        result["triton"] = "not installed" if dry else None
        why = "triton is not installed, and a dry run launches no kernel"
    if dry:
        install_triton_stub(why)
        # Nothing is capturing in a dry run; a CPU build of torch would raise
        # instead of saying so (the persistent_buffer helper asks).
        torch.cuda.is_current_stream_capturing = lambda: False
    result["dry_run"] = dry
    if dry:
        cu = FakeCuda(torch)
        device = torch.device("cpu")
        result["device"] = "cpu (dry run: nothing is captured)"
    else:
        if not torch.cuda.is_available():
            raise HarnessError("no-gpu", "torch %s sees no CUDA device (torch.cuda.is_available() is False)" % torch.__version__)
        cu = torch.cuda
        device = torch.device("cuda", torch.cuda.current_device())
        result["device"] = torch.cuda.get_device_name(device)
        result["capability"] = "%d.%d" % torch.cuda.get_device_capability(device)

    phase("load")
    tgt = case["target"]
    mod, obj = resolve_callable(tgt, "target")
    user_files = {os.path.realpath(tgt["path"])} if tgt.get("path") else set()
    prep = None
    pspec = case.get("prep")
    if pspec:
        pmod, prep = resolve_callable(pspec, "replay-prep callable")
        if getattr(pmod, "__file__", None):
            user_files.add(os.path.realpath(pmod.__file__))
    if getattr(mod, "__file__", None):
        user_files.add(os.path.realpath(mod.__file__))

    phase("inputs")
    torch.manual_seed(int(case.get("seed", 0)))
    inputs = Inputs(torch, case, device)
    construct = case.get("construct") or {}
    skip = set(construct.get("args") or [])
    instance = None
    if tgt.get("class"):
        cargs = [inputs.values[n] for n in construct.get("args") or []]
        try:
            instance = obj(*cargs, **(construct.get("kwargs") or {}))
        except BaseException as e:
            raise HarnessError("bad-target", "constructing %s failed: %s" % (tgt["class"], format_exc_short(e)))
        fn = getattr(instance, tgt["function"])
    else:
        fn = obj
    if not callable(fn):
        raise HarnessError("bad-target", "%s is not callable" % tgt["qualname"])
    pos, kw = inputs.call_args(skip)
    prep_args = [inputs.values[n] for n in (pspec or {}).get("args") or []]
    roots = [("", vars(mod))]
    if instance is not None:
        roots.append(("self", instance))
    if pspec and prep is not None:
        pm = sys.modules.get(getattr(prep, "__module__", ""), None)
        if pm is not None and pm is not mod:
            roots.append((pm.__name__, vars(pm)))

    def step():
        if prep is not None:
            prep(*prep_args)
        return fn(*pos, **kw)

    phase("warmup")
    side = cu.Stream()
    side.wait_stream(cu.current_stream())
    with cu.stream(side):
        for _ in range(int(case.get("warmup", 3))):
            try:
                step()
            except BaseException as e:
                if not (dry and needs_gpu(e)):
                    raise
                # The spec, the inputs, the target (and replay-prep) worked up to
                # work that only a GPU runs: say so, and stop this case there.
                result["status"] = "not-run"
                result["error"] = describe(e, user_files)
                result["error"]["kind"] = "kernel-not-run"
                result["error"]["phase"] = "warmup"
                if not isinstance(e, KernelNotRun):
                    msg = result["error"]["message"].split(". ")[0].split("\n")[0]
                    result["error"]["message"] = "GPU-only work not run (%s: %s)" % (type(e).__name__, msg)
                return
    cu.current_stream().wait_stream(side)
    cu.synchronize()

    phase("capture")
    g = cu.CUDAGraph()
    if prep is not None:
        prep(*prep_args)
    sync_debug = bool(case.get("sync_debug", True)) and hasattr(torch.cuda, "set_sync_debug_mode") and not dry
    result["sync_debug"] = sync_debug
    ptrs_at_capture = inputs.data_ptrs()
    t0 = time.perf_counter()
    try:
        with cu.graph(g):
            if sync_debug:
                cu.set_sync_debug_mode("error")
            try:
                ret = fn(*pos, **kw)
            finally:
                if sync_debug:
                    cu.set_sync_debug_mode("default")
        cu.synchronize()
    except BaseException as e:
        result["status"] = "capture-error"
        result["error"] = describe(e, user_files)
        result["error"]["phase"] = "capture"
        return
    result["capture_ms"] = (time.perf_counter() - t0) * 1e3
    static_out = flatten(torch, ret, "out", [])
    if dry:

        def rerun():
            for (_, dst), (_, src) in zip(static_out, flatten(torch, fn(*pos, **kw), "out", [])):
                dst.copy_(src)

        g.rerun = rerun
    outs = inputs.outputs()
    if not static_out and not outs:
        raise HarnessError("bad-spec", "the target returned no tensor and the spec names no output argument: nothing to compare")
    state_at_capture = scan_state(torch, roots, device.type)

    atol = float((case.get("tolerance") or {}).get("atol", 0.0))
    rtol = float((case.get("tolerance") or {}).get("rtol", 0.0))
    replays = []
    suspects = {}
    result["replays"] = replays
    for r in range(int(case["replays"])):
        rec = {"index": r}
        replays.append(rec)
        phase("prepare %d" % r)
        inputs.refresh()
        if prep is not None:
            prep(*prep_args)
        # liveness: state the graph read at capture that now points elsewhere
        now = scan_state(torch, roots, device.type)
        changed = [k for k in state_at_capture if k in now and now[k][0] != state_at_capture[k][0]]
        if changed:
            blocks = None if dry else live_blocks(torch)
            for k in changed:
                old = state_at_capture[k][0]
                s = suspects.setdefault(k, {"name": k, "reason": "rebound after capture: the graph still reads the tensor it had at capture",
                                             "captured_ptr": "0x%x" % old, "shape": list(state_at_capture[k][1]),
                                             "dtype": state_at_capture[k][2], "replays": 0, "captured_block_live": None})
                s["replays"] += 1
                live = is_live(old, blocks)
                if live is False or s["captured_block_live"] is None:
                    s["captured_block_live"] = live
        moved = [k for k, p in inputs.data_ptrs().items() if ptrs_at_capture.get(k) != p]
        for k in moved:
            suspects.setdefault("arg:" + k, {"name": k, "reason": "static input moved after capture", "replays": 0})["replays"] += 1
        result["suspects"] = list(suspects.values())  # now, so that a fault in this replay still reports them
        held = [] if dry else churn_and_poison(torch, device, bool(case.get("empty_cache")))
        for _, t in outs:
            poison_(torch, t)
        phase("replay %d" % r)
        e0, e1 = cu.Event(enable_timing=True), cu.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        cu.synchronize()
        rec["replay_ms"] = e0.elapsed_time(e1)
        got = [(n, t.clone()) for n, t in static_out] + [(n, t.clone()) for n, t in outs]
        phase("eager %d" % r)
        for _, t in outs:
            poison_(torch, t)
        if prep is not None:
            prep(*prep_args)
        e2, e3 = cu.Event(enable_timing=True), cu.Event(enable_timing=True)
        e2.record()
        wret = fn(*pos, **kw)
        e3.record()
        cu.synchronize()
        rec["eager_ms"] = e2.elapsed_time(e3)
        want = flatten(torch, wret, "out", []) + [(n, t.clone()) for n, t in outs]
        del held
        phase("compare %d" % r)
        if len(want) != len(got):
            rec["equal"] = False
            rec["note"] = "replay gave %d output tensors, eager %d" % (len(got), len(want))
            continue
        cmp = [compare(torch, n, gt, wt, atol, rtol) for (n, gt), (_, wt) in zip(got, want)]
        rec["elements"] = sum(c["elements"] for c in cmp)
        rec["mismatched"] = sum(c["mismatched"] for c in cmp)
        rec["max_diff"] = max([c["max_diff"] for c in cmp] or [0.0])
        rec["equal"] = rec["mismatched"] == 0
        notes = [c["note"] for c in cmp if c.get("note")]
        if notes:
            rec["note"] = "; ".join(notes)
        for c in cmp:
            if c.get("first_mismatch"):
                rec["first_mismatch"] = c["first_mismatch"]
                break
    result["suspects"] = list(suspects.values())
    result["status"] = "ok"


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: verify_harness.py CASE.json\n")
        return 2
    result = {"protocol": PROTOCOL, "status": "error", "python": sys.version.split()[0], "executable": sys.executable}
    try:
        with open(argv[0]) as f:
            case = json.load(f)
        result["batch_size"] = case.get("batch_size")
        if case.get("protocol") != PROTOCOL:
            raise HarnessError("bad-spec", "case protocol %r, harness speaks %d" % (case.get("protocol"), PROTOCOL))
        run_case(case, result)
    except HarnessError as e:
        result["status"] = "error"
        result["error"] = {"kind": e.kind, "message": str(e), "phase": _PHASE[0]}
    except BaseException as e:  # a fault after capture, or a bug in the user's code
        user = set()
        try:
            user.add(os.path.realpath(case["target"]["path"]))
        except Exception:
            pass
        info = describe(e, user)
        if is_cuda_error(e):
            result["status"] = "fault"
        else:
            result["status"] = "error"
            info["kind"] = "error"
        info["phase"] = _PHASE[0]
        result["error"] = info
    emit("result", json.dumps(result, sort_keys=True))
    try:  # os._exit skips atexit: capguard trace's tracer writes its final map now
        tr = sys.modules.get("capguard_tracer")
        if tr is not None and tr.tracer() is not None:
            tr.tracer().write()
    except BaseException:
        pass
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
