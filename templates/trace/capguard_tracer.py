"""capguard trace: record what really runs under CUDA-graph capture.

Loaded at interpreter start by the sitecustomize that `capguard trace` puts on
PYTHONPATH (or imported by `capguard trace file.py:func`); it never needs an
edit of the traced program. Once torch is imported it wraps the graph APIs
(CUDAGraph.capture_begin / capture_end / replay, so torch.cuda.graph and
make_graphed_callables too; torch.cuda.synchronize during capture;
torch.npu's NPUGraph where torch_npu is importable) and records, in the
capture map (CAPGUARD_TRACE_OUT, schema "capguard-capture-map" version 2,
described in capguard's README):

- per graph: the capture site, the pool, the capture time, the replays;
- every Python function entered on the capturing thread while it captures
  (sys.monitoring PY_START on Python >= 3.12, sys.setprofile before), with
  its stack from the capture site, and every line of them it executes
  (LINE events on those code objects only; sys.settrace before 3.12);
- runtime CG203: a padded buffer whose tail replay prep left from an earlier,
  larger batch; runtime state stored under capture (CG201);
- every storage a captured op or Triton launch reads: address, size, private
  pool or external; for external inputs the allocation stack (when
  CAPGUARD_TRACE_ALLOC_STACKS=1: torch.cuda.memory._record_memory_history)
  and the attributes that held it;
- between capture end and each graph's first N replays (N =
  CAPGUARD_TRACE_PREP_REPLAYS, default 3): the functions that ran and the
  in-place writes into storage a graph reads (replay-prep);
- at each of those first N replays: whether each external input is still
  alive and still bound where it was (a freed or rebound input is a runtime
  finding); once every graph has had its N replays the original replay is
  put back, so later replays run without the tracer;
- host syncs, host values read from tensor data (item / int / float / bool /
  tolist / numpy), host-to-device copies and data-dependent shapes during
  capture, with their Python line; the scalar arguments of Triton launches
  under capture, and which of them equal a value read from tensor data in
  the same capture pass.

Every hook body is guarded: a failure inside the tracer is counted in the
map's "tracer_errors" and never reaches the program. The map is written
atomically at each capture end, at each new finding and at exit.

Environment:
    CAPGUARD_TRACE_OUT            the map's path (required; nothing is traced without it)
    CAPGUARD_TRACE_PID            the pid whose map is OUT; other processes write OUT.PID.json
    CAPGUARD_TRACE_ALLOC_STACKS   1: record allocation stacks (costs time on every allocation)
    CAPGUARD_TRACE_MAX_ENTRIES    the allocation history's ring size (default 20000)
    CAPGUARD_TRACE_PREP_REPLAYS   N, the replays per graph that are checked and whose replay-prep
                                  is recorded (default 3; 0: replay is never wrapped)
    CAPGUARD_TRACE_HISTORY        "prep" (default: stop the allocation history when the
                                  replay-prep recording ends) or "always"
    CAPGUARD_TRACE_ALL_FUNCTIONS  1: record torch's, triton's and the standard library's functions too
    CAPGUARD_TRACE_CAPTURE_OPS    0: no dispatch mode under capture (the ops are not watched)
    CAPGUARD_TRACE_SKIP           os.pathsep-separated path prefixes not to record
    CAPGUARD_TRACE_MONITOR        "auto" (default), "monitoring" or "setprofile"
"""

import atexit
import functools
import gc
import json
import os
import sys
import threading
import time
import weakref

SCHEMA = "capguard-capture-map"
VERSION = 2  # 2: graphs[].lines and prep_lines (executed lines), inputs[].read_bytes, findings' sizes and bound_by

_HERE = os.path.dirname(os.path.abspath(__file__))
_TRACER_FILES = (os.path.abspath(__file__),)

# Ops whose tensor result size depends on tensor data: they sync under capture.
# bincount's length is max(input) + 1; histc's range, with min == max, the
# data's min and max: both read device data on the host inside one op.
_DYNAMIC_SHAPE_OPS = ("nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_dim",
                      "unique_consecutive", "repeat_interleave", "argwhere", "bincount", "histc")
_MAX_STACK = 64
_VIEW_OPS = ("slice", "select", "view", "_unsafe_view", "as_strided", "narrow", "expand", "t", "transpose", "permute",
             "unsqueeze", "squeeze", "alias", "detach", "_reshape_alias", "split", "split_with_sizes", "chunk", "unbind",
             "diagonal", "unfold", "view_as", "reshape", "__getitem__")
# Ops that read tensor data on the host. torch 1.x shows a mode only
# _local_scalar_dense; torch 2.x shows item (int(), float(), .item()) and
# is_nonzero (bool()) themselves, and never the _local_scalar_dense inside.
_HOST_READ_OPS = ("_local_scalar_dense", "item", "is_nonzero", "equal")
_MAX_READS = 64  # host reads kept per graph
# Code objects Dynamo makes (the resume functions after a graph break): not the program's functions.
_DYNAMO_MADE = ("torch_dynamo_resume_in_", "__resume_at_")
_MAX_LAUNCHES = 256  # launch sites kept per graph
_FINDING_LISTS = ("stack", "alloc", "dropped", "reader_stack", "rebound_alloc", "occupant_alloc", "values", "bound_by")
_INPUT_LISTS = ("shape", "reader_stack", "holders", "alloc", "dropped")


# Torch functions (as a TorchFunctionMode sees them) that read tensor data
# on the host, and the op name a dispatch mode would show for each.
_WINDOW_READS = {"item": "item", "__int__": "item", "__float__": "item", "__index__": "item",
                 "__bool__": "is_nonzero", "equal": "equal"}


def _generated_code_dirs(env):
    """The folders of code torch and Triton write and import at run time
    (Inductor's output code, run inside torch.compile'd calls under capture;
    Triton's cache): not the program's functions. Inductor's default is
    TEMP/torchinductor_USER, Triton's ~/.triton/cache."""
    out = []
    ind = env.get("TORCHINDUCTOR_CACHE_DIR", "")
    if not ind:
        try:
            import getpass
            import tempfile

            ind = os.path.join(tempfile.gettempdir(), "torchinductor_" + getpass.getuser())
        except Exception:
            ind = ""
    tri = env.get("TRITON_CACHE_DIR", "") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
    for p in (ind, tri):
        if p:
            out.append(os.path.abspath(p).rstrip(os.sep) + os.sep)
    return out


def _compact_lines(by_path):
    """{path: set of lines} -> {path: [[first, last], ...]}, ranges of consecutive lines."""
    out = {}
    for path, ls in by_path.items():
        rs = []
        for n in sorted(ls):
            if rs and n == rs[-1][1] + 1:
                rs[-1][1] = n
            else:
                rs.append([n, n])
        if rs:
            out[path] = rs
    return out


def _merge_ranges(rs):
    out = []
    for a, b in sorted(rs):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _subtract_ranges(rs, cut):
    out = []
    for a, b in rs:
        cur = a
        for c, d in cut:
            if d <= cur or c >= b:
                continue
            if c > cur:
                out.append((cur, c))
            cur = max(cur, d)
        if cur < b:
            out.append((cur, b))
    return out


def _intersect_ranges(rs, other):
    out = []
    for a, b in rs:
        for c, d in _merge_ranges(other):
            lo, hi = max(a, c), min(b, d)
            if lo < hi:
                out.append((lo, hi))
    return _merge_ranges(out)


def _read_what(op):
    """How the program read: from the op or method name."""
    base = op.split(".")[0] if not op.startswith("Tensor.") else op
    return {"item": "`.item()` / `int()` / `float()`", "_local_scalar_dense": "`.item()` / `int()` / `float()`",
            "is_nonzero": "`bool()`", "equal": "`torch.equal`", "Tensor.tolist": "`.tolist()`",
            "Tensor.numpy": "`.numpy()`"}.get(base, "`%s`" % base)


def _now_ms():
    return time.perf_counter() * 1e3


def _code_qual(code):
    q = getattr(code, "co_qualname", None)
    return q if q else code.co_name


def _qual_from_frame(code, frame):
    """Python < 3.11 has no co_qualname: a method's class from its first
    argument (self or cls), a module function from the module's globals."""
    name = code.co_name
    try:
        if code.co_argcount > 0:
            first = frame.f_locals.get(code.co_varnames[0])
            cls = first if isinstance(first, type) else type(first)
            for c in getattr(cls, "__mro__", ()):
                fn = c.__dict__.get(name)
                fn = getattr(fn, "__func__", fn)
                if getattr(fn, "__code__", None) is code:
                    return "%s.%s" % (c.__qualname__, name)
        fn = frame.f_globals.get(name)
        if getattr(fn, "__code__", None) is code:
            return name
    except Exception:
        pass
    return None


class Tracer(object):
    def __init__(self, env=None):
        env = os.environ if env is None else env
        self.out = env.get("CAPGUARD_TRACE_OUT", "")
        # The first traced process writes OUT; the processes it starts (which
        # inherit CAPGUARD_TRACE_PID) write OUT.PID.json beside it.
        root_pid = env.get("CAPGUARD_TRACE_PID", "")
        self.pid = os.getpid()
        if not root_pid:
            try:
                os.environ["CAPGUARD_TRACE_PID"] = str(self.pid)
            except Exception:
                pass
        if root_pid and root_pid != str(self.pid) and self.out:
            self.out = "%s.%d.json" % (self.out[:-5] if self.out.endswith(".json") else self.out, self.pid)
        self.alloc_stacks = env.get("CAPGUARD_TRACE_ALLOC_STACKS", "0") == "1"
        self.max_entries = int(env.get("CAPGUARD_TRACE_MAX_ENTRIES", "20000") or 20000)
        try:
            self.prep_replays = max(0, int(env.get("CAPGUARD_TRACE_PREP_REPLAYS", "3")))
        except ValueError:
            self.prep_replays = 3
        self.history_mode = env.get("CAPGUARD_TRACE_HISTORY", "prep") or "prep"
        self.all_functions = env.get("CAPGUARD_TRACE_ALL_FUNCTIONS", "0") == "1"
        # 0: no dispatch mode under capture (torch.compile'd calls run with the
        # tracer's modes off either way: on_dynamo); functions, lines and capture
        # errors are still recorded
        self.capture_ops = env.get("CAPGUARD_TRACE_CAPTURE_OPS", "1") != "0"
        self.monitor_pref = env.get("CAPGUARD_TRACE_MONITOR", "auto") or "auto"
        dt = env.get("CAPGUARD_TRACE_DEVICE_TYPES", "")
        # The device types whose tensors a graph captures; default: every type but cpu and meta.
        # (The tests set "cpu" to run the tracer on CPU torch with a stand-in graph class.)
        self.device_types = set(x for x in dt.split(",") if x) or None
        self._api = []
        self.skip = [os.path.abspath(p) for p in (env.get("CAPGUARD_TRACE_SKIP", "") or "").split(os.pathsep) if p]
        self._generated = _generated_code_dirs(env)
        self.lock = threading.RLock()
        self.torch = None
        self.graphs = []  # graph records (dicts), by id
        self.findings = []
        self._finding_keys = {}
        self.errors = []
        self.error_count = 0
        self.hooked = []
        self.history = None  # "on", "off", None (not asked / not possible)
        self.monitor = None
        self._lib_cache = {}
        self._code_cache = {}
        self._lib_prefixes = self._library_prefixes()
        self.capturing = None  # the graph record being captured
        self.capture_thread = None
        self.window = None  # the open replay-prep window
        self.windows_since_capture = 0
        self.started = time.time()
        self._mode_cls = None
        self._wmode_cls = None
        self._mode = None
        self._wmode = None
        self._ever_written = {}  # storage -> [(lo, hi, line)] written by earlier replay-prep windows
        self._bound_by = {}  # holder name -> graph ids whose capture bound it
        self._stored = {}  # storage -> what a capture bound to program state (_find_stored)
        self._last_replayed = None  # the graph record replayed last
        self._sink = None
        self._exc_at_begin = {}  # id(graph) -> the exception being handled when its capture began
        self._line_codes = set()
        self._local_line_codes = []  # code objects with local LINE events on
        self._lines = None  # where the monitor records executed lines ({path: set}), or None
        self._trace_fn = None
        self.line_monitor = None
        self._baseline = {}  # thread -> dispatch state before the tracer's first mode there
        self._triton_hooked = False
        self._replay_hooks = {}  # hooked graph class -> its replay hook's state
        self._pending_read = None  # (graph, finding, read record) of the host read being run
        self._pre_reads = []  # host reads on the capturing thread since the last capture ended
        self._seq = 0
        self._dirty = False
        self.cwd = os.getcwd()
        self.argv = list(getattr(sys, "argv", []) or [])
        # torch.compile'd calls (see on_dynamo): how the tracer keeps out of
        # them, and how many calls it took its modes off for
        self._tl = threading.local()
        self.compile_hook = None
        self.compiled_hidden = 0

    # ------------------------------------------------------------ bookkeeping

    def fail(self, where, e):
        self.error_count += 1
        if len(self.errors) < 20:
            self.errors.append("%s: %s: %s" % (where, type(e).__name__, str(e)[:300]))

    def _library_prefixes(self):
        out = []
        try:
            import sysconfig

            for k in ("stdlib", "platstdlib"):
                p = sysconfig.get_paths().get(k)
                if p:
                    out.append(os.path.abspath(p) + os.sep)
        except Exception:
            pass
        for p in (getattr(sys, "base_prefix", None), getattr(sys, "prefix", None)):
            if p:
                out.append(os.path.join(os.path.abspath(p), "lib", "python%d.%d" % sys.version_info[:2]) + os.sep)
        return out

    def _add_package_prefix(self, mod):
        try:
            f = getattr(mod, "__file__", None)
            if f:
                self._lib_prefixes.append(os.path.dirname(os.path.abspath(f)) + os.sep)
                self._lib_cache.clear()
        except Exception:
            pass

    def is_lib(self, filename):
        """Tracer, torch, triton, the standard library, pseudo-files, code
        generated by Inductor and Triton, and CAPGUARD_TRACE_SKIP."""
        r = self._lib_cache.get(filename)
        if r is not None:
            return r
        r = False
        if not filename or filename.startswith("<"):
            r = True
        else:
            a = os.path.abspath(filename)
            if a in _TRACER_FILES or a.startswith(_HERE + os.sep):
                r = True
            else:
                for p in self._lib_prefixes:
                    if a.startswith(p) and "site-packages" not in a[len(p):] and "dist-packages" not in a[len(p):]:
                        r = True
                        break
                    if a.startswith(p) and p.rstrip(os.sep).endswith(("torch", "triton", "torch_npu")):
                        r = True
                        break
                if not r:
                    r = any(a.startswith(p) for p in self._generated)
                if not r:
                    for p in self.skip:
                        if a == p or a.startswith(p.rstrip(os.sep) + os.sep):
                            r = True
                            break
        self._lib_cache[filename] = r
        return r

    def recorded(self, code):
        """Whether functions of this code object are recorded."""
        if self.all_functions:
            return not (code.co_filename in _TRACER_FILES or os.path.abspath(code.co_filename).startswith(_HERE + os.sep))
        return not self.is_lib(code.co_filename)

    def code_info(self, code, frame=None):
        r = self._code_cache.get(code)
        if r is None:
            qual = _code_qual(code)
            if not hasattr(code, "co_qualname") and frame is not None:
                qual = _qual_from_frame(code, frame) or qual
            r = (os.path.abspath(code.co_filename) if not code.co_filename.startswith("<") else code.co_filename,
                 qual, code.co_firstlineno)
            self._code_cache[code] = r
        return r

    def frame_dict(self, f):
        path, qual, first = self.code_info(f.f_code, f)
        return {"path": path, "qual": qual, "line": f.f_lineno, "first_line": first}

    def user_frame(self, f):
        """The innermost recorded frame from f outwards. The program's own
        mode handlers (__torch_function__, __torch_dispatch__ of a mode
        around the op) are passed: the op's line is their caller's."""
        while f is not None:
            c = f.f_code
            if not self.is_lib(c.co_filename) and c.co_name not in ("__torch_function__", "__torch_dispatch__"):
                return f
            f = f.f_back
        return None

    def stack_from(self, f, stop=None):
        """Recorded frames from f outwards to stop (included), root first."""
        out = []
        while f is not None and len(out) < _MAX_STACK:
            if not self.is_lib(f.f_code.co_filename):
                out.append(self.frame_dict(f))
            if f is stop:
                break
            f = f.f_back
        out.reverse()
        return out

    # ------------------------------------------------------------ output

    def snapshot_map(self):
        torch = self.torch
        m = {
            "schema": SCHEMA,
            "version": VERSION,
            "tool": {
                "tracer": "capguard-trace",
                "python": sys.version.split()[0],
                "torch": getattr(torch, "__version__", None) if torch else None,
                "monitor": self.monitor,
                "lines": self.line_monitor,
                "alloc_stacks": self.history is not None,
                "capture_ops": self.capture_ops,
                "prep_replays": self.prep_replays,
                "compiled_calls": self.compile_hook,
                "compiled_calls_hidden": self.compiled_hidden,
            },
            "command": self.argv,
            "cwd": self.cwd,
            "pid": self.pid,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "hooked": list(self.hooked),
            "graphs": [self._graph_out(g) for g in self.graphs],
            "findings": list(self.findings),
            "tracer_errors": list(self.errors),
            "tracer_error_count": self.error_count,
        }
        try:
            import triton

            m["tool"]["triton"] = triton.__version__
        except Exception:
            m["tool"]["triton"] = None
        return m

    def _graph_out(self, g):
        out = {}
        for k, v in g.items():
            if k.startswith("_"):
                continue
            out[k] = v
        out["functions"] = list(g["_functions"].values())
        out["inputs"] = [self._input_out(i) for i in g["_inputs"].values()]
        out["replay_prep"] = list(g["_prep"].values())
        out["between"] = list(g["_between"].values())
        out["launch_args"] = [dict((k, v) for k, v in l.items() if not k.startswith("_")) for l in g["_launches"].values()]
        out["host_reads"] = [dict((k, v) for k, v in r.items() if not k.startswith("_")) for r in g["_host_reads"]]
        out["lines"] = _compact_lines(g["_lines"])
        out["prep_lines"] = _compact_lines(g["_prep_lines"])
        for f in out["functions"] + out["replay_prep"]:
            f.setdefault("stack", [])
        for f in out["between"]:
            f.setdefault("stack", [])
        for f in out["replay_prep"]:
            f.setdefault("writes", [])
        return out

    def _input_out(self, i):
        out = dict((k, v) for k, v in i.items() if not k.startswith("_"))
        if i.get("_read_hi") is not None:
            out["read_bytes"] = [i["_read_lo"], i["_read_hi"]]
        for k in _INPUT_LISTS:
            if out.get(k) is None:
                out[k] = []
        return out

    def write(self):
        if not self.out:
            return
        with self.lock:
            try:
                data = json.dumps(self.snapshot_map(), indent=1, sort_keys=True, default=str)
                d = os.path.dirname(os.path.abspath(self.out))
                tmp = os.path.join(d, ".%s.%d.tmp" % (os.path.basename(self.out), self.pid))
                with open(tmp, "w") as f:
                    f.write(data)
                os.replace(tmp, self.out)
                self._dirty = False
            except Exception as e:
                self.fail("write", e)

    # ------------------------------------------------------------ hooking

    def on_torch(self, torch):
        """Called once torch is imported."""
        if self.torch is not None:
            return
        self.torch = torch
        self._add_package_prefix(torch)
        try:
            self._define_modes(torch)
        except Exception as e:
            self.fail("dispatch-mode", e)
        cuda = getattr(torch, "cuda", None)
        if cuda is not None:
            try:
                self.hook_graph_class(getattr(cuda, "CUDAGraph", None), "cuda")
            except Exception as e:
                self.fail("hook CUDAGraph", e)
            self._hook_sync(cuda, "torch.cuda")
            self._hook_lazy_init(cuda)
            self._hook_make_graphed(cuda)
        self.on_npu()
        if "triton" in sys.modules:
            self.on_triton(sys.modules["triton"])
        if "torch._dynamo.eval_frame" in sys.modules:
            self.on_dynamo(sys.modules["torch._dynamo.eval_frame"])

    def on_dynamo(self, ef):
        """Called once torch._dynamo.eval_frame is imported (the first
        torch.compile): every torch.compile'd call runs with the tracer's
        modes off this thread's stacks.

        Why: Dynamo guards each compiled entry on the state it was compiled
        in, the torch-function mode stack and, in every tensor guard, the
        thread's dispatch keys (a dispatch mode sets the Python key). A mode
        of the tracer's present when a compiled function runs (the capture's
        dispatch mode, or the replay-prep window's function mode in the
        warm-up run an engine makes before each capture) fails the guards of
        the entry the program compiled without it: Dynamo recompiles, under
        capture (where Inductor's compile itself is not capturable: the
        capture fails, on nano-vllm at its fifth graph) and until it hits its
        recompile limit. The tracer must never change what the program runs,
        so it adds an enter/exit hook to each torch.compile context (the
        hooks compile_wrapper runs before Dynamo checks its guards, and after
        the call, on errors too): the compiled call, its guards, its compile
        and its graph breaks see the program's own stacks. Functions entered
        inside a compiled call are recorded as "compiled" (Dynamo runs
        transformed code: their lines are not the source's), and the ops of
        a compiled call are not seen by the capture's mode."""
        if self.compile_hook is not None:
            return
        C = getattr(ef, "_TorchDynamoContext", None)
        init = C.__dict__.get("__init__") if isinstance(C, type) else None
        if init is None:
            self.compile_hook = "unavailable: torch._dynamo has no _TorchDynamoContext"
            return
        tracer = self

        @functools.wraps(init)
        def __init__(ctx, *a, **k):
            init(ctx, *a, **k)
            try:
                hooks = ctx.__dict__.get("enter_exit_hooks")
                if getattr(ctx, "callback", None) is None:
                    return  # torch._dynamo.disable: no compiled code runs in it
                if isinstance(hooks, list):
                    hooks.append(tracer._compiled_enter)
                else:
                    tracer.compile_hook = "unavailable: this torch's compile contexts have no enter_exit_hooks"
            except Exception as e:
                tracer.fail("compile context hook", e)

        self._dynamo_skips_tracer(ef)
        try:
            C.__init__ = __init__
        except Exception as e:
            self.fail("hook torch.compile contexts", e)
            self.compile_hook = "unavailable: %s" % type(e).__name__
            return
        self.compile_hook = "modes off in compiled calls"
        self.hooked.append("torch.compile calls")

    def _dynamo_skips_tracer(self, ef):
        """Mark every code object of the tracer as skipped by Dynamo: its
        sys.monitoring callbacks and wrappers run inside compiled calls too
        (PY_START of the compiled code), and Dynamo would otherwise convert
        their frames (an extra frame compiled, guards on the tracer's state)."""
        skip = getattr(ef, "skip_code", None)
        if skip is None:
            return
        seen = set()

        def walk(code):
            if id(code) in seen:
                return
            seen.add(id(code))
            try:
                skip(code)
            except Exception as e:
                self.fail("dynamo skip_code", e)
            for c in code.co_consts:
                if hasattr(c, "co_consts"):
                    walk(c)

        mod = sys.modules.get(__name__)
        for v in list(vars(mod).values()) if mod is not None else []:
            for f in ([v] if not isinstance(v, type) else list(vars(v).values())):
                f = getattr(f, "__func__", f)
                code = getattr(f, "__code__", None)
                if code is not None and os.path.abspath(code.co_filename) in _TRACER_FILES:
                    walk(code)

    def in_compiled(self):
        """Whether this thread runs inside a torch.compile'd call."""
        return getattr(self._tl, "compiled", 0) > 0

    def _compiled_enter(self):
        """A torch.compile context's enter hook: take the tracer's modes off
        this thread's stacks until the compiled call returns (the returned
        cleanup puts back those still open, under the program's own)."""
        tl = self._tl
        depth = getattr(tl, "compiled", 0)
        tl.compiled = depth + 1
        hidden = []
        unpatched = False
        if depth == 0 and getattr(self, "_host_methods", None):
            # Tensor.tolist / numpy back to torch's own while compiled code
            # runs (Dynamo would inline the tracer's wrappers)
            try:
                self._patch_tolist(False)
                unpatched = True
            except Exception as e:
                self.fail("host methods off for a compiled call", e)
        if depth == 0 and (self._mode is not None or self._wmode is not None):
            me = threading.get_ident()
            for m in (self._mode, self._wmode):
                if m is None or getattr(m, "_capguard_thread", None) != me:
                    continue
                try:
                    if self._hide_mode(m):
                        hidden.append(m)
                except Exception as e:
                    self.fail("mode off for a compiled call", e)
            if hidden:
                self.compiled_hidden += 1

        def cleanup():
            tl.compiled = depth
            if unpatched and (self.capturing is not None or self.window is not None):
                try:
                    self._patch_tolist(True)
                except Exception as e:
                    self.fail("host methods back after a compiled call", e)
            for m in hidden:
                if not getattr(m, "_capguard_hidden", False):
                    continue  # closed while the compiled call ran
                m._capguard_hidden = False
                if m is not self._mode and m is not self._wmode:
                    continue
                try:
                    m.__enter__()
                    self._to_bottom(m, m._capguard_kind)
                except Exception as e:
                    self.fail("mode back after a compiled call", e)

        return cleanup

    def _hide_mode(self, m):
        kind = getattr(m, "_capguard_kind", "dispatch")
        modes = self._stack_modes(kind)
        if not any(x is m for x in modes):
            return False
        if modes[-1] is m:
            m.__exit__(None, None, None)
        else:
            self._remove_from_stack(m, kind, modes)
        m._capguard_hidden = True
        return True

    def on_npu(self):
        torch = self.torch
        npu = getattr(torch, "npu", None) if torch is not None else None
        if npu is None or getattr(npu, "_capguard_hooked", False):
            return
        try:
            npu._capguard_hooked = True
            self.hook_graph_class(getattr(npu, "NPUGraph", None), "npu")
            self._hook_sync(npu, "torch.npu")
        except Exception as e:
            self.fail("hook NPUGraph", e)

    def on_triton(self, triton):
        if self._triton_hooked:
            return
        try:
            self._add_package_prefix(triton)
            from triton.runtime.jit import JITFunction

            orig = JITFunction.run
            tracer = self

            def run(self, *args, **kwargs):
                if tracer.capturing is not None and threading.get_ident() == tracer.capture_thread:
                    try:
                        tracer.on_launch(self, args, kwargs)
                    except Exception as e:
                        tracer.fail("triton launch", e)
                return orig(self, *args, **kwargs)

            run.__wrapped__ = orig
            JITFunction.run = run
            self._triton_hooked = True
            self.hooked.append("triton.JITFunction.run")
        except Exception as e:
            self.fail("hook triton", e)

    def hook_graph_class(self, cls, backend):
        if cls is None or getattr(cls, "_capguard_hooked", False):
            return
        tracer = self
        ob, oe, orp = cls.capture_begin, cls.capture_end, cls.replay

        def capture_begin(self, *a, **k):
            try:
                tracer._exc_at_begin[id(self)] = sys.exc_info()[1]
                tracer.before_capture(self, backend, sys._getframe(1), cls)
            except Exception as e:
                tracer.fail("capture_begin", e)
            try:
                r = ob(self, *a, **k)
            except BaseException as e:
                try:
                    tracer.after_capture(self, e)
                except Exception as e2:
                    tracer.fail("capture_begin error", e2)
                raise
            try:
                tracer.capture_started(self)
            except Exception as e:
                tracer.fail("capture started", e)
            return r

        def capture_end(self, *a, **k):
            err = None
            try:
                tracer.capture_ending(self)
                # capture_end called while an exception raised under capture
                # propagates (torch.cuda.graph.__exit__, a finally): the
                # program saw the capture fail even if capture_end succeeds.
                exc = sys.exc_info()[1]
                if exc is not None and exc is not tracer._exc_at_begin.get(id(self)):
                    err = exc
            except Exception as e:
                tracer.fail("capture ending", e)
            try:
                return oe(self, *a, **k)
            except BaseException as e:
                err = e
                raise
            finally:
                try:
                    tracer.after_capture(self, err)
                except Exception as e:
                    tracer.fail("capture_end", e)

        hook = {"orig": orp, "own": "replay" in cls.__dict__, "installed": False}

        def replay(self, *a, **k):
            g = tracer._graph_of(self)
            if g is None or g["replays"] >= tracer.prep_replays:
                # A graph already checked, while another still has replays to
                # check (or a reference to replay taken before the unhook):
                # only end the replay-prep window this replay closes.
                if tracer.window is None:
                    tracer._last_replayed = g
                    return orp(self, *a, **k)
                try:
                    tracer.other_replay(g)
                except Exception as e:
                    tracer.fail("replay", e)
                r = orp(self, *a, **k)
                try:
                    tracer.other_replay(g, after=True)
                except Exception as e:
                    tracer.fail("after replay", e)
                return r
            try:
                tracer.before_replay(self)
            except Exception as e:
                tracer.fail("replay", e)
            r = orp(self, *a, **k)
            try:
                tracer.after_replay(self)
            except Exception as e:
                tracer.fail("after replay", e)
            return r

        for f, o in ((capture_begin, ob), (capture_end, oe), (replay, orp)):
            f.__wrapped__ = o
            f.__doc__ = o.__doc__
        hook["wrapper"] = replay
        cls.capture_begin, cls.capture_end = capture_begin, capture_end
        self._replay_hooks[cls] = hook
        cls._capguard_hooked = True
        self.hooked.append("%s.capture_begin/capture_end/replay" % cls.__name__)

    def _set_replay_hook(self, cls, on):
        """Wrap cls.replay while one of its graphs has replays left to check
        (the first prep_replays of each); otherwise put the original back, so
        that a replay runs no tracer code at all."""
        hook = self._replay_hooks.get(cls)
        if hook is None or hook["installed"] == on:
            return
        try:
            if on:
                cls.replay = hook["wrapper"]
            elif hook["own"]:
                cls.replay = hook["orig"]
            else:
                delattr(cls, "replay")  # the inherited replay again
            hook["installed"] = on
        except Exception as e:
            self.fail("replay hook", e)

    def _update_replay_hooks(self):
        want = set()
        for g in self.graphs:
            if g["status"] == "capturing" or (g["status"] == "captured" and g["replays"] < self.prep_replays and not g.get("_done")):
                want.add(g.get("_cls"))
        for cls in list(self._replay_hooks):
            self._set_replay_hook(cls, cls in want)
        if not want and self._replay_hooks and self.torch is not None:
            # Unhooked: the program runs without tracer code from here on.
            # Its dispatch state must be what it was before tracing.
            self._close_window(None)
            me = threading.get_ident()
            if me in self._baseline:
                self.check_dispatch_state(self._baseline[me], "unhooking")

    def _hook_sync(self, mod, name):
        orig = getattr(mod, "synchronize", None)
        if orig is None or getattr(orig, "_capguard", False):
            return
        tracer = self

        def synchronize(*a, **k):
            if tracer.capturing is not None and threading.get_ident() == tracer.capture_thread:
                try:
                    tracer.host_finding("CG101", "host-sync", "%s.synchronize() while the stream captures" % name, name + ".synchronize", sys._getframe(1))
                except Exception as e:
                    tracer.fail("synchronize", e)
            return orig(*a, **k)

        synchronize._capguard = True
        synchronize.__wrapped__ = orig
        synchronize.__doc__ = orig.__doc__
        mod.synchronize = synchronize
        self.hooked.append(name + ".synchronize")

    def _hook_lazy_init(self, cuda):
        """Start the allocation history once CUDA is initialised (never earlier:
        touching CUDA at import would break programs that fork afterwards)."""
        if not self.alloc_stacks:
            return
        try:
            if cuda.is_initialized():
                self.start_history()
                return
        except Exception:
            pass
        orig = getattr(cuda, "_lazy_init", None)
        if orig is None:
            return
        tracer = self

        def _lazy_init(*a, **k):
            r = orig(*a, **k)
            if tracer.history is None:
                try:
                    tracer.start_history()
                except Exception as e:
                    tracer.fail("memory history", e)
            return r

        _lazy_init.__wrapped__ = orig
        cuda._lazy_init = _lazy_init

    def _hook_make_graphed(self, cuda):
        orig = getattr(cuda, "make_graphed_callables", None)
        if orig is None or getattr(orig, "_capguard", False):
            return
        tracer = self

        def make_graphed_callables(*a, **k):
            tracer._api.append(("make_graphed_callables", sys._getframe(1)))
            try:
                return orig(*a, **k)
            finally:
                tracer._api.pop()

        make_graphed_callables._capguard = True
        make_graphed_callables.__wrapped__ = orig
        make_graphed_callables.__doc__ = orig.__doc__
        cuda.make_graphed_callables = make_graphed_callables
        try:
            import torch.cuda.graphs as g

            g.make_graphed_callables = make_graphed_callables
        except Exception:
            pass
        self.hooked.append("torch.cuda.make_graphed_callables")

    def start_history(self):
        if self.history is not None or not self.alloc_stacks:
            return
        torch = self.torch
        rec = getattr(torch.cuda.memory, "_record_memory_history", None)
        if rec is None:
            self.history = None
            return
        try:
            rec(enabled="all", context="all", stacks="python", max_entries=self.max_entries)
        except TypeError:
            rec(True, trace_alloc_max_entries=self.max_entries, trace_alloc_record_context=True)
        self.history = "on"

    def stop_history(self):
        if self.history != "on":
            return
        try:
            rec = self.torch.cuda.memory._record_memory_history
            try:
                rec(enabled=None)
            except TypeError:
                rec(False)
            self.history = "stopped"
        except Exception as e:
            self.fail("stop memory history", e)

    # ------------------------------------------------------------ dispatch modes

    def _define_modes(self, torch):
        """The capture's dispatch mode and the replay-prep window's function mode.

        Why the window is a TorchFunctionMode and not a TorchDispatchMode: a
        dispatch mode turns the thread's Python dispatch key on while it is
        on the stack, and C++ guards that save and restore the whole
        thread-local key set (torch.inference_mode(), the guards of
        autograd and of torch.compile) put back the key they saved. The
        window opens after one replay and closes before the next, so it
        straddles the program's own regions: a window closed inside an
        inference-mode step that began while it was open left the Python key
        set with no mode on the stack once that step ended, and the next
        factory call without a tensor argument (torch.full(..., device=...))
        hit PyTorch's internal assert "Hit Python dispatch key but no
        arguments had PyInterpreter" (issue 22, on the H200). A function mode
        touches no dispatch key. The capture's mode is pushed in capture_begin
        and popped in capture_end, both inside the graph API's own region."""
        from torch.utils._python_dispatch import TorchDispatchMode

        tracer = self

        class CaptureMode(TorchDispatchMode):
            @classmethod
            def ignore_compile_internals(cls):
                # torch.compile'd code under capture is compiled as without the
                # tracer (Dynamo skips frames under any other dispatch mode).
                return True

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                try:
                    tracer.on_capture_op(func, args, kwargs)
                except Exception as e:
                    tracer.fail("captured op", e)
                try:
                    out = func(*args, **kwargs)
                except BaseException as e:
                    try:
                        tracer.on_capture_op_error(func, args, kwargs, e)
                    except Exception as e2:
                        tracer.fail("captured op error", e2)
                    raise
                try:
                    tracer.on_capture_out(out, func)
                except Exception as e:
                    tracer.fail("captured op output", e)
                return out

        # TorchDispatchMode subclasses get their __torch_dispatch__ wrapped in
        # torch._disable_dynamo, which imports Dynamo (and through it sympy and
        # triton) at the first op the mode sees: an import under capture that
        # the program never asked for. The tracer's modes are off while
        # compiled code runs (on_dynamo), and its code is skipped by Dynamo:
        # the plain function is enough.
        raw = CaptureMode.__dict__.get("__torch_dispatch__")
        inner = getattr(raw, "__wrapped__", None)
        if inner is not None and getattr(getattr(raw, "__code__", None), "co_filename", "").endswith("_compile.py"):
            CaptureMode.__torch_dispatch__ = inner
        self._mode_cls = CaptureMode
        self._write_args = {}
        self._wmode_cls = None
        try:
            from torch.overrides import TorchFunctionMode
        except Exception as e:
            self.fail("function mode", e)
            return
        is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)

        def compiling():
            # (torch.compiler.is_compiling imports Dynamo the first time: a
            # program that never imported it is not compiling)
            return is_compiling is not None and "torch._dynamo" in sys.modules and is_compiling()

        class WindowMode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if compiling() or tracer.window is None or self is not tracer._wmode:
                    return func(*args, **kwargs)  # closed, or traced by torch.compile: a pass-through
                try:
                    read = tracer.on_window_fn(func, args, kwargs)
                except Exception as e:
                    read = None
                    tracer.fail("window op", e)
                out = func(*args, **kwargs)
                if read is not None:
                    try:
                        tracer.read_done(read, out)
                    except Exception as e:
                        tracer.fail("window read", e)
                return out

        self._wmode_cls = WindowMode

    # The dispatch state of a thread: the two mode stacks and the Python keys.

    def dispatch_state(self):
        C = getattr(self.torch, "_C", None)
        st = {}
        for k, fn in (("dispatch_stack", "_len_torch_dispatch_stack"), ("function_stack", "_len_torch_function_stack")):
            f = getattr(C, fn, None)
            if f is not None:
                try:
                    st[k] = int(f())
                except Exception:
                    pass
        inc = getattr(C, "_dispatch_tls_is_dispatch_key_included", None)
        DK = getattr(C, "DispatchKey", None)
        if inc is not None and DK is not None:
            for k in ("Python", "PythonTLSSnapshot"):
                key = getattr(DK, k, None)
                if key is not None:
                    try:
                        st["key_" + k] = bool(inc(key))
                    except Exception:
                        pass
        return st

    def _stack_modes(self, kind):
        """The modes on this thread's dispatch or function stack, bottom first."""
        C = self.torch._C
        n = getattr(C, "_len_torch_%s_stack" % kind)()
        at = getattr(C, "_get_%s_stack_at" % kind)
        return [at(i) for i in range(n)]

    def _enter_mode(self, cls):
        if cls is None:
            return None
        before = self.dispatch_state()
        m = cls()
        m.__enter__()
        m._capguard_before = before
        m._capguard_thread = threading.get_ident()
        m._capguard_kind = "function" if cls is self._wmode_cls else "dispatch"
        try:
            self._to_bottom(m, m._capguard_kind)
        except Exception as e:
            self.fail("mode to the bottom of the stack", e)
        self._baseline.setdefault(threading.get_ident(), before)
        return m

    def _exit_mode(self, m):
        """Pop the tracer's mode m from this thread's stack, in whatever order
        the program pushed its own; then check the dispatch state."""
        if m is None:
            return
        if getattr(m, "_capguard_thread", None) != threading.get_ident():
            # Another thread's stack: it cannot be popped from here. The mode
            # is a pass-through from now on (it checks it is the tracer's open one).
            self.loud("the tracer's %s mode was opened on thread %s and is closed on thread %s: it stays on that thread's stack as a pass-through"
                      % (getattr(m, "_capguard_kind", "?"), getattr(m, "_capguard_thread", "?"), threading.get_ident()))
            return
        kind = getattr(m, "_capguard_kind", "dispatch")
        if getattr(m, "_capguard_hidden", False):
            # off the stack for a torch.compile'd call that is still running
            m._capguard_hidden = False
            self.check_dispatch_state(m._capguard_before, "closing the tracer's %s mode" % kind)
            return
        try:
            modes = self._stack_modes(kind)
        except Exception as e:
            modes = None
            self.fail("mode stack", e)
        try:
            if modes is None or (modes and modes[-1] is m):
                m.__exit__(None, None, None)
            elif any(x is m for x in modes):
                self._remove_from_stack(m, kind, modes)
            else:
                self.loud("the tracer's %s mode is no longer on this thread's stack" % kind)
        except Exception as e:
            self.fail("exit mode", e)
        self.check_dispatch_state(m._capguard_before, "closing the tracer's %s mode" % kind)

    def _to_bottom(self, m, kind):
        """Put the tracer's mode, just pushed, under the program's own: a
        program pops the modes it pushed (TorchFunctionMode.__exit__ and
        TorchDispatchMode.__exit__ pop whatever is on top), so a mode of the
        tracer's on top, left there across the program's region, would be
        popped in place of the program's, and the program's left on."""
        C = self.torch._C
        modes = self._stack_modes(kind)
        if len(modes) < 2 or modes[-1] is not m:
            return
        if kind == "dispatch" and any(getattr(x, "_mode_key", None) is not None for x in modes):
            return  # infra modes (fake, proxy, functional) live beside the stack: leave them alone
        pop = (lambda: C._pop_torch_dispatch_stack(None)) if kind == "dispatch" else C._pop_torch_function_stack
        push = C._push_on_torch_dispatch_stack if kind == "dispatch" else C._push_on_torch_function_stack
        taken = [pop() for _ in modes]  # top first: ours, then the program's
        under = list(reversed(taken[1:]))  # the program's, bottom first
        # torch.set_default_device's mode (DeviceContext) keeps the bottom:
        # its exit pops every mode above it and requires the last to be itself
        # (nano-vllm's set_default_device("cpu") after its captures, with the
        # replay-prep window's mode under it, died there on the H200).
        k = 0
        while k < len(under) and type(under[k]).__name__ == "DeviceContext":
            k += 1
        for x in under[:k] + [taken[0]] + under[k:]:
            push(x)

    def _remove_from_stack(self, m, kind, modes):
        """The program pushed its own mode above the tracer's and has not popped
        it yet: take the tracer's out from under it, keeping the others in order."""
        C = self.torch._C
        pop = C._pop_torch_dispatch_stack if kind == "dispatch" else C._pop_torch_function_stack
        push = C._push_on_torch_dispatch_stack if kind == "dispatch" else C._push_on_torch_function_stack
        above = []
        while modes and modes[-1] is not m:
            above.append(pop(None) if kind == "dispatch" else pop())
            modes.pop()
        pop(None) if kind == "dispatch" else pop()
        for x in reversed(above):
            push(x)
        if kind == "dispatch":
            try:
                import torch.utils._python_dispatch as pd

                flags = getattr(m, "old_dispatch_mode_flags", None)
                if flags:
                    flags.pop()
                nflags = getattr(m, "old_non_infra_dispatch_mode_flags", None)
                if nflags:
                    nflags.pop()
                iflags = getattr(m, "old_without_ignore_compile_internals_dispatch_mode_flags", None)
                if iflags:
                    iflags.pop()
                pd._is_in_torch_dispatch_mode = len(modes) - 1 + len(above) > 0
            except Exception as e:
                self.fail("dispatch mode flags", e)

    def loud(self, msg):
        """A tracer error the user must see: counted in the map and printed."""
        self.fail("dispatch state", RuntimeError(msg))
        try:
            sys.stderr.write("capguard trace: tracer error: %s\n" % msg)
        except Exception:
            pass

    def check_dispatch_state(self, before, when):
        """After the tracer's mode is gone: none of its modes is on this
        thread's stacks, and the Python dispatch keys are as before tracing
        (set exactly when a dispatch mode is on the stack). A mismatch is a
        loud tracer error, and the state is put back."""
        try:
            now = self.dispatch_state()
            ours = []
            for kind in ("dispatch", "function"):
                try:
                    ours += [(kind, x) for x in self._stack_modes(kind)
                             if type(x) in (self._mode_cls, self._wmode_cls)]
                except Exception:
                    pass
            bad = []
            if ours:
                bad.append("%d of the tracer's modes still on the stack" % len(ours))
            n = now.get("dispatch_stack")
            key = now.get("key_Python")
            if n is not None and key is not None and key != (n > 0):
                bad.append("Python dispatch key %s with %d dispatch mode(s) on the stack (before tracing: key %s, %s mode(s))"
                           % ("set" if key else "unset", n, before.get("key_Python"), before.get("dispatch_stack")))
            if not bad:
                return True
            self.loud("dispatch state after %s differs from before tracing: %s; restored" % (when, "; ".join(bad)))
            self._restore_dispatch_state(ours)
            return False
        except Exception as e:
            self.fail("check dispatch state", e)
            return True

    def _restore_dispatch_state(self, ours):
        C = self.torch._C
        for kind, x in ours:
            try:
                self._remove_from_stack(x, kind, self._stack_modes(kind))
            except Exception as e:
                self.fail("restore: remove mode", e)
        now = self.dispatch_state()
        n = now.get("dispatch_stack")
        setk = getattr(C, "_dispatch_tls_set_dispatch_key_included", None)
        if n is None or setk is None:
            return
        for k in ("Python", "PythonTLSSnapshot"):
            if now.get("key_" + k) is not None and now["key_" + k] != (n > 0):
                try:
                    setk(getattr(C.DispatchKey, k), n > 0)
                except Exception as e:
                    self.fail("restore dispatch key", e)

    # ------------------------------------------------------------ function monitoring

    def _start_monitor(self, sink, lines=None):
        """Record every recorded function entered on this thread into
        sink(code, frame), and, when lines is a dict, every line of recorded
        code it executes into lines[path] (a set)."""
        self._sink = sink
        self._lines = lines
        self._mon_thread = threading.get_ident()
        # Lines are recorded in the functions the sink records (entered while
        # it runs, outside imports) and in those running when it starts (the
        # capture site's).
        self._line_codes = set()
        if lines is not None:
            f = sys._getframe(1)
            while f is not None:
                if self.recorded(f.f_code):
                    self._line_codes.add(f.f_code)
                f = f.f_back
        use_mon = hasattr(sys, "monitoring") and self.monitor_pref in ("auto", "monitoring")
        if use_mon:
            try:
                self._start_monitoring(lines is not None)
                self.monitor = "sys.monitoring"
                if lines is not None:
                    self.line_monitor = "sys.monitoring"
                return
            except Exception as e:
                self.fail("sys.monitoring", e)
        sys.setprofile(self._profile)
        self.monitor = "setprofile"
        if lines is not None:
            self._start_settrace()

    def _stop_monitor(self):
        if self.monitor == "sys.monitoring" and getattr(self, "_tool", None) is not None:
            try:
                sys.monitoring.set_events(self._tool, 0)
                for code in self._local_line_codes:
                    sys.monitoring.set_local_events(self._tool, code, 0)
            except Exception as e:
                self.fail("sys.monitoring off", e)
            self._local_line_codes = []
        elif sys.getprofile() == self._profile:
            sys.setprofile(None)
        if self._trace_fn is not None and sys.gettrace() is self._trace_fn:
            sys.settrace(None)
        self._trace_fn = None
        self._sink = None
        self._lines = None

    def _add_line(self, code, line):
        lines = self._lines
        path = self.code_info(code)[0]
        s = lines.get(path)
        if s is None:
            s = lines[path] = set()
        s.add(line)

    def _line_wanted(self, code):
        return code in self._line_codes

    def _want_lines(self, code):
        """Record code's executed lines from now on (its LINE events, with sys.monitoring)."""
        self._line_codes.add(code)
        if self._lines is not None and self.monitor_pref != "setprofile" and getattr(self, "_tool", None) is not None \
                and hasattr(sys, "monitoring") and code not in self._local_line_codes:
            try:
                sys.monitoring.set_local_events(self._tool, code, sys.monitoring.events.LINE)
                self._local_line_codes.append(code)
            except Exception as e:
                self.fail("local LINE events", e)

    def _line_event(self, code, line):
        """sys.monitoring LINE: each line once per capture (DISABLE until the next one)."""
        if self._lines is None or threading.get_ident() != self._mon_thread:
            return None
        try:
            if self._line_wanted(code) and line is not None:
                self._add_line(code, line)
        except Exception as e:
            self.fail("LINE", e)
        return sys.monitoring.DISABLE

    def _start_settrace(self):
        """Lines before Python 3.12: a trace function on this thread only,
        also set on the frames already running (the capture site's)."""
        if sys.gettrace() is not None:
            self.line_monitor = "unavailable: the program has its own trace function"
            return
        tracer = self

        def local(frame, event, arg):
            if event == "line" and tracer._lines is not None:
                try:
                    tracer._add_line(frame.f_code, frame.f_lineno)
                except Exception as e:
                    tracer.fail("line", e)
            return local

        def glob(frame, event, arg):
            if tracer._lines is None:
                return None
            try:
                code = frame.f_code
                if code not in tracer._line_codes:
                    if code.co_name == "<module>" or not tracer.recorded(code) or tracer._in_import(frame) or tracer.in_compiled():
                        return None
                    tracer._line_codes.add(code)
                return local
            except Exception:
                return None

        self._trace_fn = glob
        sys.settrace(glob)
        f = sys._getframe(1)
        while f is not None:
            try:
                if self._line_wanted(f.f_code):
                    f.f_trace = local
            except Exception:
                pass
            f = f.f_back
        self.line_monitor = "settrace"

    def _start_monitoring(self, lines=False):
        mon = sys.monitoring
        if getattr(self, "_tool", None) is None:
            tool = None
            for i in (5, 4, 3, 2, 1, 0):
                if mon.get_tool(i) is None:
                    tool = i
                    break
            if tool is None:
                raise RuntimeError("no free sys.monitoring tool id")
            mon.use_tool_id(tool, "capguard-trace")
            mon.register_callback(tool, mon.events.PY_START, self._py_start)
            mon.register_callback(tool, mon.events.LINE, self._line_event)
            self._tool = tool
        mon.restart_events()
        mon.set_events(self._tool, mon.events.PY_START)
        if lines:
            # LINE events only on the code objects whose lines are wanted
            # (set_local_events): global LINE events would instrument every
            # line torch runs, and the imports a first capture triggers.
            for code in list(self._line_codes):
                self._want_lines(code)

    def _py_start(self, code, offset):
        sink = self._sink
        if sink is None or threading.get_ident() != self._mon_thread:
            return None
        try:
            if not self.recorded(code):
                return sys.monitoring.DISABLE
            f = sys._getframe(1)
            if f.f_code is not code:
                f = None
            if sink(code, f):
                return sys.monitoring.DISABLE  # seen in this capture or window: no more events from it
        except Exception as e:
            self.fail("PY_START", e)
        return None

    def _profile(self, frame, event, arg):
        if event != "call":
            return
        sink = self._sink
        if sink is None:
            return
        try:
            code = frame.f_code
            if self.recorded(code):
                sink(code, frame)
        except Exception as e:
            self.fail("profile", e)

    # ------------------------------------------------------------ capture

    def _graph_of(self, g):
        gid = getattr(g, "_capguard_gid", None)
        if gid is None:
            gid = self._gids.get(id(g)) if hasattr(self, "_gids") else None
        return self.graphs[gid] if gid is not None and gid < len(self.graphs) else None

    def before_capture(self, gobj, backend, caller, cls=None):
        with self.lock:
            if self.capturing is not None:  # a capture that never ended
                self._finish_capture(self.capturing, RuntimeError("capture_begin again before capture_end"))
            self._close_window(None)
            site_frame = self.user_frame(caller)
            api = "capture_begin"
            if self._api:
                api, f = self._api[-1]
                site_frame = self.user_frame(f) or site_frame
            else:
                f = caller
                while f is not None:
                    c = f.f_code
                    if c.co_name == "__enter__" and c.co_filename.endswith(os.path.join("cuda", "graphs.py")):
                        api = "torch.cuda.graph"
                    elif c.co_name == "__enter__" and "npu" in c.co_filename and "graph" in c.co_filename:
                        api = "torch.npu.graph"
                    if not self.is_lib(c.co_filename):
                        break
                    f = f.f_back
            gid = len(self.graphs)
            g = {
                "id": gid, "backend": backend, "api": api,
                "site": self.frame_dict(site_frame) if site_frame is not None else None,
                "native_site": site_frame is None,
                "thread": threading.current_thread().name,
                "status": "capturing", "replays": 0, "ops": 0, "launches": 0,
                "_functions": {}, "_inputs": {}, "_produced": set(), "_prep": {}, "_between": {},
                "_launches": {}, "_host_reads": [], "replays_checked": 0, "_outs": {}, "_lines": {}, "_prep_lines": {},
                "_site_frame": site_frame, "_t0": _now_ms(), "_gobj": None, "_cls": cls,
            }
            # The host reads since the previous capture ended (its replay-prep
            # window): the values this capture's launches may have been given.
            g["_host_reads"] = [r for r in self._pre_reads][-_MAX_READS:]
            self._pre_reads = []
            try:
                gobj._capguard_gid = gid
            except Exception:
                if not hasattr(self, "_gids"):
                    self._gids = {}
                self._gids[id(gobj)] = gid
            try:
                g["_gobj"] = weakref.ref(gobj, lambda _, gid=gid: self._graph_dropped(gid))
            except TypeError:
                pass
            self.graphs.append(g)

    def _graph_dropped(self, gid):
        """The program dropped a graph (a failed capture it discarded, a
        runner torn down): its replays will never come, so the replay hook
        and the replay-prep window must not wait for them."""
        try:
            with self.lock:
                g = self.graphs[gid] if gid < len(self.graphs) else None
                if g is None or g["status"] not in ("captured", "capturing"):
                    return
                if g["status"] == "captured":
                    g["status"] = "dropped" if g["replays"] == 0 else g["status"]
                    g["dropped"] = True
                if g["status"] == "dropped" or g["replays"] < self.prep_replays:
                    g["_done"] = True
                self._update_replay_hooks()
                if self.window is not None and not self._prep_wanted():
                    self._close_window(None)
        except Exception as e:
            self.fail("graph dropped", e)

    def capture_started(self, gobj):
        """The stream captures from now on: record functions, ops and host reads."""
        with self.lock:
            g = self._graph_of(gobj)
            if g is None or g["status"] != "capturing":
                return
            self.capturing = g
            self.capture_thread = threading.get_ident()
            self._mode = self._enter_mode(self._mode_cls) if self.capture_ops else None
            self._patch_tolist(True)
            self._start_monitor(self._capture_sink, g["_lines"])

    def capture_ending(self, gobj):
        """Stop recording before the graph API's own capture_end runs."""
        with self.lock:
            g = self._graph_of(gobj)
            if g is None or g is not self.capturing:
                return
            self._stop_capture_monitors()

    def _stop_capture_monitors(self):
        self._stop_monitor()
        self._exit_mode(self._mode)
        self._mode = None
        self._patch_tolist(False)

    def _in_import(self, frame):
        """Code run by the import system: a finder or loader, or a module's
        body and everything it calls (a lazy import under capture, such as
        torch importing sympy or triton on first use: on the GPU run these
        made 62 of graph 0's 72 functions)."""
        f = frame.f_back if frame is not None else None
        n = 0
        while f is not None and n < 1000:
            if f.f_code.co_filename.startswith("<frozen importlib"):
                return True
            f = f.f_back
            n += 1
        return False

    def _capture_sink(self, code, frame):
        g = self.capturing
        if g is None:
            return False
        fns = g["_functions"]
        if code in fns:
            return True
        if self._in_import(frame) or self._compiling_now():
            return False  # an import, or Dynamo/Inductor compiling under capture (sympy, torchgen): not the program's
        compiled = self.in_compiled()
        if compiled and code.co_name.startswith(_DYNAMO_MADE):
            return False
        if self._lines is not None and not compiled:
            self._want_lines(code)
        path, qual, first = self.code_info(code, frame)
        rec = {"path": path, "qual": qual, "first_line": first}
        if compiled:
            rec["compiled"] = True  # inside a torch.compile'd call: its lines are not observed
        if frame is not None:
            rec["stack"] = self.stack_from(frame, g["_site_frame"])
        fns[code] = rec
        return self.monitor == "sys.monitoring"

    def after_capture(self, gobj, err):
        with self.lock:
            g = self._graph_of(gobj)
            if g is None or g["status"] != "capturing":
                return
            self._finish_capture(g, err, gobj)
            self.write()

    def _finish_capture(self, g, err, gobj=None):
        self._stop_capture_monitors()
        self.capturing = None
        g["capture_ms"] = round(_now_ms() - g.pop("_t0", _now_ms()), 3)
        g["_site_frame"] = None
        if err is not None:
            g["status"] = "capture-error"
            g["error"] = "%s: %s" % (type(err).__name__, str(err).strip().splitlines()[0][:500] if str(err).strip() else "")
            if not any(f.get("graph") == g["id"] and f["rule"] in ("CG101", "CG103", "CG104") for f in self.findings):
                self.add_finding({"rule": "CG101",
                                  "kind": "capture-error", "graph": g["id"],
                                  "message": "capture failed: %s" % g["error"]}, site=g.get("site"))
        else:
            g["status"] = "captured"
        t1 = _now_ms()
        try:
            self._classify_inputs(g, gobj)
        except Exception as e:
            self.fail("classify inputs", e)
        try:
            self._find_stored(g)
        except Exception as e:
            self.fail("stored state", e)
        g["analysis_ms"] = round(_now_ms() - t1, 3)
        for code in list(g["_functions"].keys()):
            g["_functions"][code]["graph"] = g["id"]
        # keep code keys for the monitor; output converts to a list
        self._pre_reads = []
        if g["status"] == "captured":
            try:
                self._link_reads(g)
            except Exception as e:
                self.fail("link host reads", e)
        self._update_replay_hooks()
        self.windows_since_capture = 0
        self._open_window()

    def _compiling_now(self):
        """Dynamo, AOTAutograd or Inductor compiling (a recompile under capture):
        the ops they run on fake or constant tensors are not the program's."""
        guards = sys.modules.get("torch._guards")
        tc = getattr(guards, "TracingContext", None) if guards is not None else None
        try:
            return tc is not None and tc.try_get() is not None
        except Exception:
            return False

    def on_capture_op(self, func, args, kwargs):
        g = self.capturing
        if g is None or threading.get_ident() != self.capture_thread or self._compiling_now():
            return
        g["ops"] += 1
        name = self._op_name(func)
        tensors = list(self._tensors(args, kwargs))
        base = name.split(".")[0]
        if base in _HOST_READ_OPS and tensors:
            self.host_read(g, name, tensors, sys._getframe(2))
        elif base in _DYNAMIC_SHAPE_OPS and any(self.is_dev(t) for t in tensors):
            lo = args[2] if len(args) > 2 else kwargs.get("min", 0)
            hi = args[3] if len(args) > 3 else kwargs.get("max", 0)
            if base == "histc" and lo != hi:
                pass  # a given range: no host read
            elif base == "repeat_interleave" and (kwargs.get("output_size") is not None or
                                                  (len(args) > 1 and isinstance(args[1], int))):
                pass  # an output size given, or an int count: a fixed shape
            else:
                self.host_finding("CG104", "dynamic-shape", "`%s` has a data-dependent output shape (it reads device data on the host)" % base, name, None)
        elif base == "index" and any(self.is_dev(t) and str(t.dtype) in ("torch.bool", "torch.uint8") for t in tensors[1:]):
            self.host_finding("CG104", "dynamic-shape", "indexing with a boolean mask has a data-dependent output shape (it reads device data on the host)", name, None)
        elif base in ("copy_", "_to_copy", "to", "_copy_from") and tensors:
            src = tensors[1] if base in ("copy_", "_copy_from") and len(tensors) > 1 else tensors[0]
            if base in ("copy_", "_copy_from"):
                dst_on = self.is_dev(tensors[0])
            else:
                d = kwargs.get("device")
                if d is None:
                    dst_on = self.is_dev(src)
                else:
                    dtype_ = getattr(d, "type", None) or str(d).split(":")[0]
                    dst_on = dtype_ in self.device_types if self.device_types is not None else dtype_ not in ("cpu", "meta")
            src_on = self.is_dev(src)
            if not src_on and dst_on and src.device.type != "meta":
                pinned = False
                try:
                    pinned = src.is_pinned()
                except Exception:
                    pass
                self.host_finding("CG103", "h2d-host", "host-to-device copy from %s host memory while the stream captures: the graph re-reads that host memory at every replay" % ("pinned" if pinned else "pageable"), name, None)
            elif src_on and not dst_on:
                self.host_finding("CG101", "host-sync", "device-to-host copy while the stream captures (a host sync)", name, None)
        self._record_inputs(g, name, tensors, func)

    # ------------------------------------------------------------ host reads

    def host_read(self, g, op, tensors, frame, pend=True):
        """A value read on the host from tensor data while g captures: CG102
        from a CPU tensor (the graph bakes the value in), CG101 from a device
        tensor (a host sync). The value is added when the read returns
        (read_done)."""
        t = tensors[0]
        dev = t.device.type
        what = _read_what(op)
        if not self.is_dev(t):
            fd = self.host_finding("CG102", "host-value", "%s reads a %s tensor's data on the host while the stream captures: the graph bakes in the value it had at capture" % (what, dev), op, frame)
        else:
            fd = self.host_finding("CG101", "host-sync", "%s of a %s tensor while the stream captures (a host sync)" % (what, dev), op, frame)
        rd = self._read_record(op, dev, "capture", frame)
        rd["_finding"] = fd
        pending = (g, fd, rd)
        if pend:  # an op: its output, in on_capture_out, is the value
            self._pending_read = pending
        return pending

    def _read_record(self, op, dev, when, frame):
        f = self.user_frame(frame)
        self._seq += 1
        rd = {"op": op, "device": dev, "when": when, "path": None, "line": 0, "qual": None, "values": [], "_seq": self._seq}
        if f is not None:
            d = self.frame_dict(f)
            rd["path"], rd["line"], rd["qual"] = d["path"], d["line"], d["qual"]
        return rd

    def read_done(self, pending, out):
        g, fd, rd = pending
        if pending is self._pending_read:
            self._pending_read = None
        vals = self._numbers(out)
        rd["values"] = vals
        if fd is not None and not fd.get("values"):
            fd["values"] = vals
        if g is not None:
            if len(g["_host_reads"]) < _MAX_READS:
                g["_host_reads"].append(rd)
        elif len(self._pre_reads) < _MAX_READS:
            self._pre_reads.append(rd)

    def _numbers(self, v, limit=16):
        """The first numbers of a host read's result (a scalar, a nested list, an array)."""
        out = []
        try:
            if self.torch is not None and isinstance(v, self.torch.Tensor):
                return out
            if hasattr(v, "ravel") and hasattr(v, "tolist"):  # numpy
                v = v.ravel()[:limit].tolist()
            stack = [v]
            while stack and len(out) < limit:
                x = stack.pop(0)
                if isinstance(x, bool):
                    out.append(int(x))
                elif isinstance(x, int):
                    out.append(x)
                elif isinstance(x, float):
                    if x == x and x not in (float("inf"), float("-inf")):
                        out.append(x)
                elif isinstance(x, (list, tuple)):
                    stack[0:0] = list(x)
        except Exception as e:
            self.fail("host read value", e)
        return out

    def on_launch(self, jit, args, kwargs):
        g = self.capturing
        if g is None:
            return
        g["launches"] += 1
        kernel = getattr(jit, "__name__", None) or getattr(getattr(jit, "fn", None), "__name__", "kernel")
        self._record_inputs(g, "triton:" + str(kernel), list(self._tensors(args, kwargs)))
        try:
            self._record_launch(g, jit, kernel, args, kwargs)
        except Exception as e:
            self.fail("launch args", e)

    def _record_launch(self, g, jit, kernel, args, kwargs):
        """The scalar arguments of a launch under capture, once per launch line."""
        f = self.user_frame(sys._getframe(3))
        site = self.frame_dict(f) if f is not None else None
        key = (kernel, site["path"] if site else None, site["line"] if site else 0)
        rec = g["_launches"].get(key)
        if rec is not None:
            rec["count"] += 1
            return
        if len(g["_launches"]) >= _MAX_LAUNCHES:
            return
        params = getattr(jit, "params", None) or []
        names = list(getattr(jit, "arg_names", None) or [getattr(p, "name", "") for p in params])
        const = getattr(jit, "constexprs", None)
        if const is None:
            const = [getattr(p, "num", i) for i, p in enumerate(params) if getattr(p, "is_constexpr", False)]
        const = set(const)
        scalars = []
        for i, a in enumerate(args):
            n = names[i] if i < len(names) else "arg%d" % i
            if i not in const and n not in const and type(a) in (int, float):
                scalars.append((n, a))
        for n, a in kwargs.items():
            if n in names and names.index(n) not in const and type(a) in (int, float):
                scalars.append((n, a))
        self._seq += 1
        g["_launches"][key] = {"kernel": str(kernel), "site": site, "count": 1, "_seq": self._seq,
                               "args": [{"name": n, "value": v} for n, v in scalars if v == v and v not in (float("inf"), float("-inf"))]}

    def _link_reads(self, g):
        """At capture end: the launches under capture whose scalar arguments
        equal a value read from tensor data in the same capture pass (while
        capturing, or since the previous capture ended). A read under capture
        already is a finding; it gains the kernel and argument. A read before
        the capture becomes a CG102 finding of kind "host-value-arg": the
        tracer sees the equality, not the data flow, so values 0 and 1 (and
        booleans) are never linked."""
        reads = [r for r in g["_host_reads"] if r.get("values")]
        if not reads:
            return
        for (kernel, _, _), l in sorted(g["_launches"].items(), key=lambda kv: kv[1]["_seq"]):
            for a in l["args"]:
                v = a["value"]
                if isinstance(v, bool) or v in (0, 1):
                    continue
                for r in reads:
                    if r["_seq"] > l["_seq"] or v not in r["values"] or type(v) is not type(r["values"][r["values"].index(v)]):
                        continue
                    where = "%s:%s" % (os.path.basename(l["site"]["path"]), l["site"]["line"]) if l.get("site") else "a native caller"
                    if r["when"] == "capture":
                        fd = r.get("_finding")
                        if fd is not None and not fd.get("kernel"):
                            fd["kernel"], fd["argument"], fd["launch"] = kernel, a["name"], l.get("site")
                            fd["message"] += "; %s, %r, is argument `%s` of kernel `%s` launched at %s" % (
                                "the value read" if len(r["values"]) == 1 else "one of the values read", v, a["name"], kernel, where)
                        continue
                    if r["path"] is None:
                        continue
                    self.add_finding({
                        "rule": "CG102", "kind": "host-value-arg", "graph": g["id"], "op": r["op"],
                        "message": "%s read %r from %s tensor data before the capture of graph %d, and kernel `%s` launched under that capture at %s takes %r as argument `%s`: if it is this value, every replay reuses %r"
                                   % (_read_what(r["op"]), v, r["device"],
                                      g["id"], kernel, where, v, a["name"], v),
                        "values": [v], "kernel": kernel, "argument": a["name"], "launch": l.get("site"), "stack": [],
                    }, site={"path": r["path"], "line": r["line"], "qual": r["qual"], "first_line": None})

    def _record_inputs(self, g, op, tensors, func=None):
        inputs = g["_inputs"]
        fr = None
        # A view op (slice, select, view, ...) reads no data: the range a
        # graph reads comes from the ops and launches that do.
        view = bool(getattr(func, "is_view", False)) or op.split(".")[0] in _VIEW_OPS
        for t in tensors:
            try:
                if not self.is_dev(t):
                    continue
                st = self._storage(t)
                ptr = st.data_ptr()
                if ptr == 0:
                    continue
                if ptr in inputs:
                    rec = inputs[ptr]
                    rec["reads"] += 1
                    if not view:
                        try:
                            lo, hi = self._byte_range(t)
                            if rec["_read_hi"] is None:
                                rec["_read_lo"], rec["_read_hi"] = lo, hi
                            else:
                                rec["_read_lo"], rec["_read_hi"] = min(rec["_read_lo"], lo), max(rec["_read_hi"], hi)
                        except Exception:
                            pass
                    continue
                if ptr in g["_produced"]:
                    continue
                if fr is None:
                    f = self.user_frame(sys._getframe(2))
                    fr = self.frame_dict(f) if f is not None else None
                    stack = self.stack_from(f, None) if f is not None else []
                rec = {"addr": "0x%x" % ptr, "nbytes": int(self._nbytes(st)), "dtype": str(t.dtype).replace("torch.", ""),
                       "shape": list(t.shape), "device": str(t.device), "first_op": op, "reads": 1, "reader": fr,
                       "reader_stack": stack, "_ptr": ptr, "_esize": t.element_size()}
                rec["_read_lo"] = rec["_read_hi"] = None
                if not view:
                    try:
                        rec["_read_lo"], rec["_read_hi"] = self._byte_range(t)
                    except Exception:
                        pass
                owner = t._base if t._base is not None else t
                rec["parameter"] = type(owner).__name__ == "Parameter" or type(t).__name__ == "Parameter"
                try:
                    from torch.multiprocessing.reductions import StorageWeakRef

                    rec["_weak"] = StorageWeakRef(st)
                except Exception:
                    rec["_weak"] = None
                try:
                    rec["_tref"] = weakref.ref(owner)
                except TypeError:
                    rec["_tref"] = None
                inputs[ptr] = rec
            except Exception as e:
                self.fail("record input", e)

    def on_capture_out(self, out, func=None):
        g = self.capturing
        if g is None or self._compiling_now():
            return
        pending = self._pending_read
        if pending is not None and pending[0] is g and func is not None and pending[2]["op"] == self._op_name(func):
            self.read_done(pending, out)
            return
        site = None
        for t in self._tensors((out,), {}):
            try:
                if self.is_dev(t):
                    p = self._storage(t).data_ptr()
                    if p and p not in g["_inputs"]:
                        g["_produced"].add(p)
                        # What the capture made, by storage: a weak reference and
                        # the line (never the frame: that would keep its locals alive).
                        if site is None:
                            f = self.user_frame(sys._getframe(2))
                            site = self.frame_dict(f) if f is not None else {}
                        if site and len(g["_outs"]) < 100000:
                            g["_outs"][p] = (weakref.ref(t), site)
            except Exception:
                pass

    def _find_stored(self, g):
        """At capture end: the tensors the capture made that program state
        still holds (an attribute, or a slot of a dict or list an attribute
        holds). The program reading one after a replay of another graph
        reads memory of g's pool that only g's replay writes."""
        outs = g.pop("_outs", {})
        alive = {}
        for p, (wr, site) in outs.items():
            t = wr()
            if t is not None:
                alive[id(t)] = (t, p, site)
        if not alive:
            return
        import types

        names = {}  # id(tensor) -> [holder names]

        def owner_names(container):
            out = []
            for o in gc.get_referrers(container):
                if isinstance(o, types.FrameType) or o is alive:
                    continue
                if isinstance(o, dict):
                    for k, v in list(o.items()):
                        if v is container and isinstance(k, str):
                            for oo in gc.get_referrers(o):
                                if getattr(oo, "__dict__", None) is o:
                                    out.append("%s.%s" % (type(oo).__name__, k))
                elif hasattr(o, "__dict__") and not isinstance(o, (list, tuple)):
                    try:
                        for k, v in vars(o).items():
                            if v is container:
                                out.append("%s.%s" % (type(o).__name__, k))
                    except TypeError:
                        pass
            return out

        refs = gc.get_referrers(*[t for t, _, _ in alive.values()])
        for r in refs:
            if isinstance(r, types.FrameType) or r is alive:
                continue
            try:
                if isinstance(r, dict):
                    for k, v in list(r.items()):
                        if id(v) not in alive or alive[id(v)][0] is not v:
                            continue
                        own = [o for o in gc.get_referrers(r) if getattr(o, "__dict__", None) is r and not isinstance(o, types.FrameType)]
                        if own and isinstance(k, str):
                            names.setdefault(id(v), []).append("%s.%s" % (type(own[0]).__name__, k))
                        else:
                            for n in owner_names(r):
                                names.setdefault(id(v), []).append("%s[%r]" % (n, k))
                elif isinstance(r, list):
                    for i, v in enumerate(r):
                        if id(v) in alive and alive[id(v)][0] is v:
                            for n in owner_names(r):
                                names.setdefault(id(v), []).append("%s[%d]" % (n, i))
                elif hasattr(r, "__dict__") and not isinstance(r, (tuple, types.ModuleType)):
                    for k, v in vars(r).items():
                        if id(v) in alive and alive[id(v)][0] is v:
                            names.setdefault(id(v), []).append("%s.%s" % (type(r).__name__, k))
            except Exception as e:
                self.fail("stored holder", e)
        for tid, hs in names.items():
            t, p, site = alive[tid]
            hs = sorted(set(hs))[:4]
            for h in hs:
                self._bound_by.setdefault(h, [])
                if g["id"] not in self._bound_by[h]:
                    self._bound_by[h].append(g["id"])
            self._stored[p] = {"graph": g, "site": site, "holders": hs, "ref": weakref.ref(t)}

    def _check_stored_read(self, args, kwargs):
        """An op after a replay reads a tensor a capture bound to program
        state: a finding at the binding line when the graph replayed last is
        not the one whose capture made it."""
        last = self._last_replayed
        if last is None:
            return
        for t in self._tensors(args, kwargs):
            try:
                if not self.is_dev(t):
                    continue
                rec = self._stored.get(self._storage(t).data_ptr())
            except Exception:
                continue
            if rec is None or rec["graph"] is last or rec["ref"]() is None:
                continue
            g = rec["graph"]
            rf = self.user_frame(sys._getframe(3))
            reader = self.frame_dict(rf) if rf is not None else None
            holder = rec["holders"][0]
            graphs = sorted(set(gid for h in rec["holders"] for gid in self._bound_by.get(h, [])))
            where = "%s:%s" % (os.path.basename(reader["path"]), reader["line"]) if reader else "a native caller"
            msg = ("captured code binds `%s` to a tensor of the graph's memory pool (bound while graphs %s captured; it now holds graph %d's), "
                   "and the program reads it at %s after a replay of graph %d: only graph %d's replay writes that tensor, so the read gets what graph %d's last replay (or its capture) left"
                   % (holder, ", ".join(str(x) for x in graphs), g["id"], where, last["id"], g["id"], g["id"]))
            self.add_finding({"rule": "CG201", "kind": "stored-under-capture", "graph": g["id"], "holder": holder,
                              "message": msg, "reader": reader, "bound_by": graphs, "replay": last["replays"],
                              "stack": []}, site=rec["site"])

    def on_capture_op_error(self, func, args, kwargs, e):
        self._pending_read = None
        g = self.capturing
        if g is None:
            return
        msg = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        name = self._op_name(func)
        if not any(f.get("graph") == g["id"] and f.get("op") == name for f in self.findings):
            rule = "CG101"
            base = name.split(".")[0]
            if base in _DYNAMIC_SHAPE_OPS:
                rule = "CG104"
            self.host_finding(rule, "capture-error", "`%s` failed while the stream captures: %s" % (name, msg), name, None)

    def host_finding(self, rule, kind, message, op, frame):
        g = self.capturing
        f = self.user_frame(frame if frame is not None else sys._getframe(2))
        site = self.frame_dict(f) if f is not None else None
        stack = self.stack_from(f, g["_site_frame"] if g else None) if f is not None else []
        return self.add_finding({"rule": rule, "kind": kind, "graph": g["id"] if g else None, "op": op, "message": message,
                                 "stack": stack}, site=site)

    def add_finding(self, fd, site=None):
        if site is not None:
            fd.setdefault("path", site.get("path"))
            fd.setdefault("line", site.get("line"))
            fd.setdefault("qual", site.get("qual"))
            fd.setdefault("first_line", site.get("first_line"))
        for k in _FINDING_LISTS:
            if fd.get(k) is None:
                fd[k] = []
        key = (fd.get("rule"), fd.get("kind"), fd.get("path"), fd.get("line"), fd.get("graph"), fd.get("input"))
        with self.lock:
            if key in self._finding_keys:
                self._finding_keys[key]["count"] += 1
                return self._finding_keys[key]
            fd["count"] = 1
            fd["id"] = len(self.findings)
            self._finding_keys[key] = fd
            self.findings.append(fd)
            self._dirty = True
        if not getattr(self, "_batch", False):
            self.write()
        return fd

    def _patch_tolist(self, on):
        """Wrap Tensor.tolist and Tensor.numpy (they read tensor data without
        an op a dispatch mode sees) while a stream captures or a replay-prep
        window is open; put the originals back otherwise."""
        torch = self.torch
        if torch is None:
            return
        T = torch.Tensor
        if not hasattr(self, "_host_methods"):
            self._host_methods = {}
        if on:
            for name in ("tolist", "numpy"):
                if name in self._host_methods or not hasattr(T, name):
                    continue
                orig = getattr(T, name)
                try:
                    setattr(T, name, self._host_method(name, orig))
                    self._host_methods[name] = (orig, name in T.__dict__)
                except Exception as e:
                    self.fail("patch " + name, e)
        else:
            for name, (orig, own) in list(self._host_methods.items()):
                try:
                    if own:
                        setattr(T, name, orig)
                    else:
                        delattr(T, name)
                except Exception as e:
                    self.fail("unpatch " + name, e)
                del self._host_methods[name]

    def _host_method(self, name, orig):
        tracer = self
        op = "Tensor." + name

        def method(t, *a, **k):
            pending = None
            try:
                me = threading.get_ident()
                g = tracer.capturing
                if g is not None and me == tracer.capture_thread:
                    pending = tracer.host_read(g, op, [t], sys._getframe(1), pend=False)
                elif tracer.window is not None and me == tracer._mon_thread:
                    pending = (None, None, tracer._read_record(op, t.device.type, "before", sys._getframe(1)))
            except Exception as e:
                tracer.fail(name, e)
            r = orig(t, *a, **k)
            if pending is not None:
                try:
                    tracer.read_done(pending, r)
                except Exception as e:
                    tracer.fail(name, e)
            return r

        method.__wrapped__ = orig
        method.__doc__ = getattr(orig, "__doc__", None)
        method.__name__ = name
        return method

    # ------------------------------------------------------------ tensors and storages

    def is_dev(self, t):
        d = t.device.type
        if self.device_types is not None:
            return d in self.device_types
        return d not in ("cpu", "meta")

    def _op_name(self, func):
        try:
            return str(func).replace("aten.", "", 1)
        except Exception:
            return "op"

    def _tensors(self, args, kwargs):
        torch = self.torch
        T = torch.Tensor
        stack = [args, tuple(kwargs.values()) if kwargs else ()]
        depth = 0
        while stack and depth < 64:
            depth += 1
            seq = stack.pop()
            for a in seq:
                if isinstance(a, T):
                    yield a
                elif isinstance(a, (list, tuple)):
                    stack.append(a)
                elif isinstance(a, dict):
                    stack.append(tuple(a.values()))

    def _storage(self, t):
        f = getattr(t, "untyped_storage", None)
        return f() if f is not None else t.storage()

    def _nbytes(self, st):
        n = getattr(st, "nbytes", None)
        if n is not None:
            return n()
        return st.size() * st.element_size()

    # ------------------------------------------------------------ classification

    def _memory_snapshot(self):
        torch = self.torch
        snap = getattr(getattr(torch.cuda, "memory", None), "_snapshot", None)
        if snap is None:
            return None
        try:
            if not torch.cuda.is_initialized():
                return None
        except Exception:
            return None
        try:
            s = snap()
        except Exception as e:
            self.fail("memory snapshot", e)
            return None
        if isinstance(s, list):
            s = {"segments": s}
        return s

    def _frames(self, frames):
        """Torch allocator frames (innermost first) -> recorded frames, root first."""
        out = []
        for fr in frames or []:
            fn = fr.get("filename", "")
            if not fn or self.is_lib(fn) or fn.endswith(".cpp") or fn.endswith(".h") or fn.startswith("??") \
                    or fr.get("name") in ("__torch_function__", "__torch_dispatch__"):
                continue  # (a mode handler of the program's: the line is its caller's)
            out.append({"path": os.path.abspath(fn), "name": fr.get("name", ""), "line": fr.get("line", 0)})
        out.reverse()
        return out[-_MAX_STACK:]

    def _classify_inputs(self, g, gobj):
        inputs = g["_inputs"]
        pool = None
        if gobj is not None:
            try:
                pool = tuple(gobj.pool())
                g["pool"] = list(pool)
            except Exception:
                pool = None
        snap = self._memory_snapshot() if inputs else None
        segs = (snap or {}).get("segments") or []
        index = []
        for s in segs:
            try:
                index.append((s["address"], s["address"] + s["total_size"], s))
            except Exception:
                pass
        index.sort(key=lambda x: x[0])
        how = "segment_pool_id" if pool is not None and segs and "segment_pool_id" in segs[0] else "produced-in-capture"
        g["pool_test"] = how
        ext = 0
        for ptr, rec in inputs.items():
            seg = None
            for lo, hi, s in index:
                if lo <= ptr < hi:
                    seg = s
                    break
                if lo > ptr:
                    break
            if how == "segment_pool_id":
                private = seg is not None and tuple(seg.get("segment_pool_id") or ()) == pool
            else:
                private = False  # storages produced in the capture were never recorded as inputs
            rec["pool"] = "private" if private else "external"
            if seg is not None:
                rec["segment_pool"] = list(seg.get("segment_pool_id") or [])
                addr = seg["address"]
                for b in seg.get("blocks", []):
                    baddr = b.get("address", addr)
                    if baddr <= ptr < baddr + b["size"]:
                        fr = self._frames(b.get("frames"))
                        if fr:
                            rec["alloc"] = fr
                        break
                    addr = baddr + b["size"]
            if private:
                rec.pop("_weak", None)
                rec.pop("_tref", None)
                rec["fate"] = "private"
            else:
                ext += 1
                rec["fate"] = "alive"
        g["external_inputs"] = ext
        g["private_inputs"] = len(inputs) - ext
        self._find_holders([r for r in inputs.values() if r.get("pool") == "external"])

    def _find_holders(self, recs):
        """The attributes (obj.attr) and module globals that hold each external input's tensor."""
        want = {}
        for r in recs:
            t = r.get("_tref")() if r.get("_tref") is not None else None
            if t is not None:
                want[id(t)] = (t, r)
        if not want:
            return
        import types

        objs = [t for t, _ in want.values()]
        dicts = {}
        direct = []
        for ref in gc.get_referrers(*objs):
            if isinstance(ref, dict):
                for k, v in list(ref.items()):
                    if id(v) in want and want[id(v)][0] is v and isinstance(k, str):
                        dicts.setdefault(id(ref), (ref, []))[1].append((k, want[id(v)][1]))
            elif not isinstance(ref, (list, tuple, set, frozenset, types.FrameType)) and hasattr(ref, "__dict__"):
                direct.append(ref)  # an object whose attributes live inline (no dict object yet, Python >= 3.11)
        for o in direct:
            try:
                od = o.__dict__
                if isinstance(od, dict) and id(od) not in dicts:
                    for k, v in list(od.items()):
                        if id(v) in want and want[id(v)][0] is v and isinstance(k, str):
                            dicts.setdefault(id(od), (od, []))[1].append((k, want[id(v)][1]))
            except Exception:
                pass
        if not dicts:
            return
        owners = gc.get_referrers(*[d for d, _ in dicts.values()]) + direct
        for o in owners:
            try:
                if isinstance(o, types.FrameType):
                    continue
                od = o.__dict__ if hasattr(o, "__dict__") and not isinstance(o, dict) else None
                if od is None:
                    continue
                targets = []
                if id(od) in dicts:
                    targets.append(od)
                for sub in ("_parameters", "_buffers"):
                    sd = od.get(sub) if isinstance(od, dict) else None
                    if isinstance(sd, dict) and id(sd) in dicts:
                        targets.append(sd)
                for d in targets:
                    for k, r in dicts[id(d)][1]:
                        name = "%s.%s" % (type(o).__name__ if not isinstance(o, types.ModuleType) else o.__name__, k)
                        try:
                            oref = weakref.ref(o)
                        except TypeError:
                            continue
                        r.setdefault("holders", [])
                        if name not in r["holders"] and len(r["holders"]) < 4:
                            r["holders"].append(name)
                            r.setdefault("_holders", []).append((oref, k))
            except Exception as e:
                self.fail("holder", e)

    # ------------------------------------------------------------ replay and replay-prep

    def _prep_wanted(self):
        if not self.graphs:
            return False
        pending = [g for g in self.graphs if g["status"] == "captured" and g["replays"] < self.prep_replays and not g.get("_done")]
        return bool(pending) and self.windows_since_capture < self.prep_replays * max(1, len(self.graphs))

    def _open_window(self):
        if not self._prep_wanted():
            if self.history_mode == "prep":
                self.stop_history()
            return
        if self.window is not None:
            return
        self._dynamo_ignores_window()
        self.window = {"functions": {}, "writes": [], "lines": {}, "t0": _now_ms()}
        self._wmode = self._enter_mode(self._wmode_cls)
        self._patch_tolist(True)
        self._start_monitor(self._window_sink, self.window["lines"])

    def _dynamo_ignores_window(self):
        """torch.compile guards on the function-mode stack: a mode of the
        tracer's on it would make Dynamo recompile the program's compiled
        functions (or trace into the tracer). Dynamo leaves the modes in its
        IGNORED_MODES out of both; the window's mode joins them (once Dynamo
        is imported: importing it here would cost the program seconds)."""
        tf = sys.modules.get("torch._dynamo.variables.torch_function")
        ig = getattr(tf, "IGNORED_MODES", None) if tf is not None else None
        if isinstance(ig, set) and self._wmode_cls is not None and self._wmode_cls not in ig:
            try:
                ig.add(self._wmode_cls)
            except Exception as e:
                self.fail("dynamo ignored modes", e)

    def _window_sink(self, code, frame):
        w = self.window
        if w is None:
            return False
        fns = w["functions"]
        if code in fns:
            return True
        if self._in_import(frame):
            return False
        compiled = self.in_compiled()
        if compiled and code.co_name.startswith(_DYNAMO_MADE):
            return False
        if self._lines is not None and not compiled:
            self._want_lines(code)
        path, qual, first = self.code_info(code, frame)
        fns[code] = {"path": path, "qual": qual, "first_line": first}
        if compiled:
            fns[code]["compiled"] = True
        return self.monitor == "sys.monitoring"

    def on_window_fn(self, func, args, kwargs):
        """A torch function called between a capture's end and a replay (or
        the next capture), on the thread that opened the window: in-place
        writes into a graph's storage make replay-prep (and their byte ranges
        the stale-tail check); a read of a tensor a capture stored in program
        state is checked against the graph replayed last; host reads of tensor
        data are kept for the next capture's launches (_link_reads). Returns
        the pending host read, if it is one."""
        w = self.window
        if w is None or threading.get_ident() != self._mon_thread:
            return None
        name = getattr(func, "__name__", None) or str(func)
        torch = self.torch
        T = torch.Tensor
        if name in _WINDOW_READS:
            t = args[0] if args and isinstance(args[0], T) else None
            if t is not None:
                return (None, None, self._read_record(_WINDOW_READS[name], t.device.type, "before", sys._getframe(2)))
            return None
        if self._stored:
            self._check_stored_read(args, kwargs)
        written = []
        if name == "__setitem__" and len(args) >= 2 and isinstance(args[0], T):
            written.append(self._setitem_view(args[0], args[1]))
        elif name.endswith("_") and not name.endswith("__") and args and isinstance(args[0], T):
            written.append(args[0])
        elif name.startswith("__i") and name.endswith("__") and args and isinstance(args[0], T):
            written.append(args[0])  # __iadd__, __imul__, ...
        out = kwargs.get("out") if kwargs else None
        if isinstance(out, T):
            written.append(out)
        elif isinstance(out, (list, tuple)):
            written += [o for o in out if isinstance(o, T)]
        if not written:
            return None
        op = name.rstrip("_") + "_" if name.endswith("_") and not name.endswith("__") else name
        uf = None
        for t in written:
            if not self.is_dev(t):
                continue
            try:
                ptr = self._storage(t).data_ptr()
                lo, hi = self._byte_range(t)
            except Exception:
                continue
            if len(w["writes"]) < 100000:
                if uf is None:
                    uf = self.user_frame(sys._getframe(2))
                    if uf is None:
                        return None
                    stack = self.stack_from(uf)
                w["writes"].append((ptr, op, uf, uf.f_lineno, stack, lo, hi))
        return None

    def _setitem_view(self, t, idx):
        """The part of t that t[idx] = v writes: a view for basic indexing
        (ints, slices, None, Ellipsis), else the whole tensor."""
        basic = (int, slice, type(None), type(Ellipsis))
        parts = idx if isinstance(idx, tuple) else (idx,)
        if all(isinstance(i, basic) and not isinstance(i, bool) for i in parts):
            try:
                return t[idx]
            except Exception:
                pass
        return t

    def _byte_range(self, t):
        """The bytes of its storage a tensor view spans: [lo, hi)."""
        es = t.element_size()
        lo = t.storage_offset() * es
        if t.numel() == 0:
            return lo, lo
        ext = 1
        for n, st in zip(t.shape, t.stride()):
            if n > 0:
                ext += (n - 1) * abs(st)
        return lo, lo + ext * es

    def _close_window(self, g, checked=True):
        """End the replay-prep window that led to a replay of g (None: to a
        capture or an unhook). checked: one of g's first N replays, whose
        replay-prep functions are recorded."""
        w = self.window
        if w is None:
            return
        self.window = None
        self._stop_monitor()
        wm, self._wmode = self._wmode, None
        self._exit_mode(wm)
        self._patch_tolist(False)
        self.windows_since_capture += 1
        try:
            self._stale_tails(g, w["writes"])
        except Exception as e:
            self.fail("stale tails", e)
        if g is None or not checked:
            return
        for path, ls in w["lines"].items():
            g["_prep_lines"].setdefault(path, set()).update(ls)
        between = g["_between"]
        for code, rec in w["functions"].items():
            if code not in between:
                between[code] = dict(rec)
        reads = g["_inputs"]
        for ptr, op, uf, lineno, stack, lo, hi in w["writes"]:
            r = reads.get(ptr)
            if r is None and ptr not in g["_produced"]:
                continue
            code = uf.f_code
            prep = g["_prep"].get(code)
            if prep is None:
                path, qual, first = self.code_info(code, uf)
                prep = {"path": path, "qual": qual, "first_line": first, "graph": g["id"], "reason": "writes",
                        "stack": stack, "writes": []}
                g["_prep"][code] = prep
            if len(prep["writes"]) < 16:
                wr = {"op": op, "line": lineno, "addr": "0x%x" % ptr}
                if r is not None:
                    wr["input"] = r["addr"]
                if wr not in prep["writes"]:
                    prep["writes"].append(wr)

    def _stale_tails(self, g, writes):
        """Runtime CG203. For each storage a graph reads that replay prep wrote
        since the previous replay: the bytes the graph reads (captured at the
        padded size) that this window did not write but an earlier window
        did hold what that earlier, larger write left (a stale tail). The
        finding is at the line of this window's write."""
        by_ptr = {}
        for ptr, op, uf, lineno, stack, lo, hi in writes:
            if hi > lo:
                by_ptr.setdefault(ptr, []).append((lo, hi, op, uf, lineno, stack))
        if g is not None:
            for ptr, ws in by_ptr.items():
                rec = g["_inputs"].get(ptr)
                if rec is None or rec.get("_read_hi") is None:
                    continue
                rlo, rhi = rec["_read_lo"], rec["_read_hi"]
                now = _merge_ranges([(a, b) for a, b, _, _, _, _ in ws])
                gap = _subtract_ranges([(rlo, rhi)], now)
                earlier = self._ever_written.get(ptr, [])
                stale = _intersect_ranges(gap, [(a, b) for a, b, _ in earlier])
                if not stale:
                    continue
                es = rec.get("_esize") or 1
                wlo, whi, op, uf, lineno, stack = max(ws, key=lambda x: x[1])
                s0, s1 = stale[0][0], stale[-1][1]
                prev = max((e for e in earlier if e[1] > s0), key=lambda e: e[1])
                site = self.frame_dict(uf)
                site["line"] = lineno
                msg = ("replay prep wrote elements [%d, %d) of %s %s %s since the previous replay, but graph %d reads elements [%d, %d) of it (captured at the padded size): "
                       "elements [%d, %d) keep what an earlier, larger write left (it wrote up to element %d at line %s): the replay reads a stale tail"
                       % (wlo // es, whi // es, rec["dtype"], tuple(rec["shape"]), rec["addr"], g["id"], rlo // es, rhi // es,
                          s0 // es, s1 // es, prev[1] // es, prev[2]))
                self.add_finding({"rule": "CG203", "kind": "stale-tail", "graph": g["id"], "input": rec["addr"], "op": op,
                                  "message": msg, "stack": stack, "replay": g["replays"],
                                  "sizes": {"written": [wlo // es, whi // es], "read": [rlo // es, rhi // es],
                                            "stale": [s0 // es, s1 // es], "earlier": prev[1] // es}}, site=site)
        for ptr, ws in by_ptr.items():
            ev = self._ever_written.setdefault(ptr, [])
            for lo, hi, op, uf, lineno, stack in ws:
                ev.append((lo, hi, lineno))
            if len(ev) > 64:
                ev.sort(key=lambda e: e[1])
                del ev[:-64]

    def before_replay(self, gobj):
        """One of g's first prep_replays replays: close the replay-prep window
        that led to it and check its external inputs."""
        g = self._graph_of(gobj)
        if g is None:
            return
        with self.lock:
            self._close_window(g)
            self._check_inputs(g)
            g["replays_checked"] = g.get("replays_checked", 0) + 1

    def other_replay(self, g, after=False):
        """A replay of a graph whose checks are done, while others' are not."""
        with self.lock:
            if after:
                self._last_replayed = g
                self._open_window()
            else:
                self._close_window(g, checked=False)

    def after_replay(self, gobj):
        g = self._graph_of(gobj)
        if g is None:
            return
        with self.lock:
            g["replays"] += 1
            self._last_replayed = g
            if g["replays"] >= self.prep_replays:
                self._update_replay_hooks()  # the last graph done: replay is the original again
            self._open_window()

    def _check_inputs(self, g):
        """Before one of g's first N replays: its external inputs freed or
        rebound. One memory snapshot and one map write per replay, however
        many inputs it finds (the first GPU run took both per input)."""
        self._snap = None
        self._batch = True
        try:
            self._check_inputs_now(g)
        finally:
            self._batch = False
            self._snap = None
            if self._dirty:
                self.write()

    def _check_inputs_now(self, g):
        for rec in g["_inputs"].values():
            if rec.get("pool") != "external" or rec.get("fate") not in ("alive",):
                continue
            w = rec.get("_weak")
            freed = w is not None and w.expired()
            rebound = None
            for oref, k in rec.get("_holders", ()):
                o = oref()
                if o is None:
                    continue
                try:
                    cur = getattr(o, k)
                except Exception:
                    cur = None
                if cur is None or not isinstance(cur, self.torch.Tensor):
                    rebound = (o, k, None)
                    break
                try:
                    if self._storage(cur).data_ptr() != rec["_ptr"]:
                        rebound = (o, k, cur)
                        break
                except Exception:
                    pass
            if freed or rebound is not None:
                self._input_finding(g, rec, freed, rebound)

    def _input_finding(self, g, rec, freed, rebound):
        snap = None
        if self.history == "on":
            if getattr(self, "_snap", None) is None:
                self._snap = self._memory_snapshot()
            snap = self._snap
        dropped, occupant, new_alloc = [], None, []
        if snap is not None:
            traces = snap.get("device_traces") or []
            ptr = rec["_ptr"]
            for dev in traces:
                last_free = None
                for i, e in enumerate(dev):
                    if e.get("addr") == ptr and e.get("action") in ("free_requested", "free"):
                        last_free = i
                if last_free is not None:
                    dropped = self._frames(dev[last_free].get("frames"))
                    for e in dev[last_free + 1:]:
                        if e.get("action") == "alloc" and e.get("addr", 0) <= ptr < e.get("addr", 0) + e.get("size", 0):
                            occupant = self._frames(e.get("frames"))
            if rebound is not None and rebound[2] is not None:
                cptr = self._storage(rebound[2]).data_ptr()
                for s in snap.get("segments") or []:
                    addr = s["address"]
                    for b in s.get("blocks", []):
                        baddr = b.get("address", addr)
                        if baddr <= cptr < baddr + b["size"]:
                            new_alloc = self._frames(b.get("frames"))
                        addr = baddr + b["size"]
        rec["fate"] = "rebound" if rebound is not None else "freed"
        rec["fate_replay"] = g["replays"]
        if dropped:
            rec["dropped"] = dropped
        holder = None
        if rebound is not None:
            o, k, cur = rebound
            holder = "%s.%s" % (type(o).__name__, k)
            rec["rebound_to"] = {"holder": holder, "alloc": new_alloc}
            if cur is not None:
                try:
                    rec["rebound_to"]["addr"] = "0x%x" % self._storage(cur).data_ptr()
                except Exception:
                    pass
        # The finding's line: where the new tensor was made (a rebind), else
        # where the input was dropped, else where the graph reads it.
        site = None
        for fr in (new_alloc, dropped):
            if fr:
                site = {"path": fr[-1]["path"], "line": fr[-1]["line"], "qual": fr[-1].get("name")}
                break
        if site is None and rec.get("reader"):
            site = rec["reader"]
        what = "%s %s %s at %s" % (rec["dtype"], tuple(rec["shape"]), "tensor", rec["addr"])
        if rebound is not None:
            msg = "the graph reads %s, captured through `%s`; before replay %d `%s` is bound to another tensor%s: the replay still reads the old storage" % (
                what, holder, g["replays"], holder, " and the old storage was freed" if freed else "")
            rule, kind = "CG201", "rebound"
        else:
            msg = "the graph reads %s, an external input, and its storage was freed before replay %d: the replay reads memory the graph does not own" % (what, g["replays"])
            rule, kind = "CG301", "freed"
        fd = {"rule": rule, "kind": kind, "graph": g["id"], "input": rec["addr"], "message": msg, "replay": g["replays"],
              "alloc": rec.get("alloc", []), "dropped": dropped, "reader": rec.get("reader"), "reader_stack": rec.get("reader_stack", [])}
        if holder:
            fd["holder"] = holder
            fd["rebound_alloc"] = new_alloc
        if occupant:
            fd["occupant_alloc"] = occupant
        self.add_finding(fd, site=site)


# ---------------------------------------------------------------- installation

_TRACER = [None]


class _TorchFinder(object):
    """A meta-path finder that calls the tracer once torch (or triton, torch_npu,
    torch._dynamo.eval_frame) has executed."""

    watch = ("torch", "triton", "torch_npu", "torch._dynamo.eval_frame")

    def __init__(self, tracer):
        self.tracer = tracer
        self.busy = set()

    def find_spec(self, name, path=None, target=None):
        if name not in self.watch or name in self.busy:
            return None
        import importlib.util

        self.busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        except Exception:
            return None
        finally:
            self.busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        tracer = self.tracer

        class Loader(object):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                try:
                    if name == "torch":
                        tracer.on_torch(module)
                    elif name == "triton":
                        tracer.on_triton(module)
                    elif name == "torch_npu":
                        tracer.on_npu()
                    elif name == "torch._dynamo.eval_frame":
                        tracer.on_dynamo(module)
                except Exception as e:
                    tracer.fail("on import " + name, e)

            def __getattr__(self, a):
                return getattr(loader, a)

        spec.loader = Loader()
        return spec

    # Python < 3.4 protocol, unused
    def find_module(self, name, path=None):
        return None


def install(env=None):
    """Start tracing in this process (idempotent). Returns the tracer, or None
    when CAPGUARD_TRACE_OUT is not set."""
    if _TRACER[0] is not None:
        return _TRACER[0]
    env = os.environ if env is None else env
    if not env.get("CAPGUARD_TRACE_OUT"):
        return None
    t = Tracer(env)
    _TRACER[0] = t
    try:
        sys.meta_path.insert(0, _TorchFinder(t))
        if "torch" in sys.modules:
            t.on_torch(sys.modules["torch"])
        if "triton" in sys.modules:
            t.on_triton(sys.modules["triton"])
    except Exception as e:
        t.fail("install", e)
    atexit.register(t.write)
    return t


def tracer():
    return _TRACER[0]
