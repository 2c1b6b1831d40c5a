"""capguard trace: record what really runs under CUDA-graph capture.

Loaded at interpreter start by the sitecustomize that `capguard trace` puts on
PYTHONPATH (or imported by `capguard trace file.py:func`); it never needs an
edit of the traced program. Once torch is imported it wraps the graph APIs
(CUDAGraph.capture_begin / capture_end / replay, so torch.cuda.graph and
make_graphed_callables too; torch.cuda.synchronize during capture;
torch.npu's NPUGraph where torch_npu is importable) and records, in the
capture map (CAPGUARD_TRACE_OUT, schema "capguard-capture-map" version 1,
described in capguard's README):

- per graph: the capture site, the pool, the capture time, the replays;
- every Python function entered on the capturing thread while it captures
  (sys.monitoring PY_START on Python >= 3.12, sys.setprofile before), with
  its stack from the capture site;
- every storage a captured op or Triton launch reads: address, size, private
  pool or external; for external inputs the allocation stack (when
  CAPGUARD_TRACE_ALLOC_STACKS=1: torch.cuda.memory._record_memory_history)
  and the attributes that held it;
- between capture end and the first replays: the functions that ran and the
  in-place writes into storage a graph reads (replay-prep);
- at every replay: whether each external input is still alive and still
  bound where it was (a freed or rebound input is a runtime finding);
- host syncs, host values read from tensor data, host-to-device copies and
  data-dependent shapes during capture, with their Python line.

Every hook body is guarded: a failure inside the tracer is counted in the
map's "tracer_errors" and never reaches the program. The map is written
atomically at each capture end, at each new finding and at exit.

Environment:
    CAPGUARD_TRACE_OUT            the map's path (required; nothing is traced without it)
    CAPGUARD_TRACE_PID            the pid whose map is OUT; other processes write OUT.PID.json
    CAPGUARD_TRACE_ALLOC_STACKS   1: record allocation stacks (costs time on every allocation)
    CAPGUARD_TRACE_MAX_ENTRIES    the allocation history's ring size (default 20000)
    CAPGUARD_TRACE_PREP_REPLAYS   replays per graph whose replay-prep is recorded (default 3)
    CAPGUARD_TRACE_HISTORY        "prep" (default: stop the allocation history when the
                                  replay-prep recording ends) or "always"
    CAPGUARD_TRACE_ALL_FUNCTIONS  1: record torch's, triton's and the standard library's functions too
    CAPGUARD_TRACE_SKIP           os.pathsep-separated path prefixes not to record
    CAPGUARD_TRACE_MONITOR        "auto" (default), "monitoring" or "setprofile"
"""

import atexit
import gc
import json
import os
import sys
import threading
import time
import weakref

SCHEMA = "capguard-capture-map"
VERSION = 1

_HERE = os.path.dirname(os.path.abspath(__file__))
_TRACER_FILES = (os.path.abspath(__file__),)

# Ops whose tensor result size depends on tensor data: they sync under capture.
_DYNAMIC_SHAPE_OPS = ("nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_dim",
                      "unique_consecutive", "repeat_interleave", "argwhere", "nonzero_static")
_MAX_STACK = 64


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
        self.prep_replays = int(env.get("CAPGUARD_TRACE_PREP_REPLAYS", "3") or 3)
        self.history_mode = env.get("CAPGUARD_TRACE_HISTORY", "prep") or "prep"
        self.all_functions = env.get("CAPGUARD_TRACE_ALL_FUNCTIONS", "0") == "1"
        self.monitor_pref = env.get("CAPGUARD_TRACE_MONITOR", "auto") or "auto"
        dt = env.get("CAPGUARD_TRACE_DEVICE_TYPES", "")
        # The device types whose tensors a graph captures; default: every type but cpu and meta.
        # (The tests set "cpu" to run the tracer on CPU torch with a stand-in graph class.)
        self.device_types = set(x for x in dt.split(",") if x) or None
        self._api = []
        self.skip = [os.path.abspath(p) for p in (env.get("CAPGUARD_TRACE_SKIP", "") or "").split(os.pathsep) if p]
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
        self._triton_hooked = False
        self._dirty = False
        self.cwd = os.getcwd()
        self.argv = list(getattr(sys, "argv", []) or [])

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
        """Tracer, torch, triton, the standard library, pseudo-files and CAPGUARD_TRACE_SKIP."""
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
        """The innermost recorded frame from f outwards."""
        while f is not None:
            if not self.is_lib(f.f_code.co_filename):
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
                "alloc_stacks": self.history is not None,
                "prep_replays": self.prep_replays,
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
        return out

    def _input_out(self, i):
        return dict((k, v) for k, v in i.items() if not k.startswith("_"))

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
                        tracer.on_launch(getattr(self, "__name__", None) or getattr(getattr(self, "fn", None), "__name__", "kernel"), args, kwargs)
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
                tracer.before_capture(self, backend, sys._getframe(1))
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

        def replay(self, *a, **k):
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
        cls.capture_begin, cls.capture_end, cls.replay = capture_begin, capture_end, replay
        cls._capguard_hooked = True
        self.hooked.append("%s.capture_begin/capture_end/replay" % cls.__name__)

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
        from torch.utils._python_dispatch import TorchDispatchMode

        tracer = self

        class CaptureMode(TorchDispatchMode):
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
                    tracer.on_capture_out(out)
                except Exception as e:
                    tracer.fail("captured op output", e)
                return out

        class WindowMode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                try:
                    tracer.on_window_op(func, args, kwargs)
                except Exception as e:
                    tracer.fail("window op", e)
                return func(*args, **kwargs)

        self._mode_cls = CaptureMode
        self._wmode_cls = WindowMode
        self._write_args = {}

    def _enter_mode(self, cls):
        if cls is None:
            return None
        m = cls()
        m.__enter__()
        return m

    def _exit_mode(self, m):
        if m is not None:
            try:
                m.__exit__(None, None, None)
            except Exception as e:
                self.fail("exit dispatch mode", e)

    # ------------------------------------------------------------ function monitoring

    def _start_monitor(self, sink):
        """Record every recorded function entered on this thread into sink(code, frame)."""
        self._sink = sink
        self._mon_thread = threading.get_ident()
        use_mon = hasattr(sys, "monitoring") and self.monitor_pref in ("auto", "monitoring")
        if use_mon:
            try:
                self._start_monitoring()
                self.monitor = "sys.monitoring"
                return
            except Exception as e:
                self.fail("sys.monitoring", e)
        sys.setprofile(self._profile)
        self.monitor = "setprofile"

    def _stop_monitor(self):
        if self.monitor == "sys.monitoring" and getattr(self, "_tool", None) is not None:
            try:
                sys.monitoring.set_events(self._tool, 0)
            except Exception as e:
                self.fail("sys.monitoring off", e)
        elif sys.getprofile() == self._profile:
            sys.setprofile(None)
        self._sink = None

    def _start_monitoring(self):
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
            self._tool = tool
        mon.restart_events()
        mon.set_events(self._tool, mon.events.PY_START)

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

    def before_capture(self, gobj, backend, caller):
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
                "_site_frame": site_frame, "_t0": _now_ms(), "_gobj": None,
            }
            try:
                gobj._capguard_gid = gid
            except Exception:
                if not hasattr(self, "_gids"):
                    self._gids = {}
                self._gids[id(gobj)] = gid
            try:
                g["_gobj"] = weakref.ref(gobj)
            except TypeError:
                pass
            self.graphs.append(g)

    def capture_started(self, gobj):
        """The stream captures from now on: record functions, ops and host reads."""
        with self.lock:
            g = self._graph_of(gobj)
            if g is None or g["status"] != "capturing":
                return
            self.capturing = g
            self.capture_thread = threading.get_ident()
            self._mode = self._enter_mode(self._mode_cls)
            self._patch_tolist(True)
            self._start_monitor(self._capture_sink)

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
        """A finder or loader called by the import system (a lazy import under capture)."""
        f = frame.f_back if frame is not None else None
        n = 0
        while f is not None and n < 6:
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
        if self._in_import(frame):
            return False
        path, qual, first = self.code_info(code, frame)
        rec = {"path": path, "qual": qual, "first_line": first}
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
        g["analysis_ms"] = round(_now_ms() - t1, 3)
        for code in list(g["_functions"].keys()):
            g["_functions"][code]["graph"] = g["id"]
        # keep code keys for the monitor; output converts to a list
        self.windows_since_capture = 0
        self._open_window()

    def on_capture_op(self, func, args, kwargs):
        g = self.capturing
        if g is None or threading.get_ident() != self.capture_thread:
            return
        g["ops"] += 1
        name = self._op_name(func)
        tensors = list(self._tensors(args, kwargs))
        base = name.split(".")[0]
        if base == "_local_scalar_dense" and tensors:
            t = tensors[0]
            if not self.is_dev(t):
                self.host_finding("CG102", "host-value", "a host value is read from a CPU tensor (`.item()` / `int()`) while the stream captures: the graph bakes in its value at capture", name, None)
            else:
                self.host_finding("CG101", "host-sync", "`.item()` of a %s tensor while the stream captures (a host sync)" % t.device.type, name, None)
        elif base in _DYNAMIC_SHAPE_OPS and any(self.is_dev(t) for t in tensors):
            if not (base == "repeat_interleave" and kwargs.get("output_size") is not None):
                self.host_finding("CG104", "dynamic-shape", "`%s` has a data-dependent output shape (it syncs with the host)" % base, name, None)
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
        self._record_inputs(g, name, tensors)

    def on_launch(self, kernel, args, kwargs):
        g = self.capturing
        if g is None:
            return
        g["launches"] += 1
        self._record_inputs(g, "triton:" + str(kernel), list(self._tensors(args, kwargs)))

    def _record_inputs(self, g, op, tensors):
        inputs = g["_inputs"]
        fr = None
        for t in tensors:
            try:
                if not self.is_dev(t):
                    continue
                st = self._storage(t)
                ptr = st.data_ptr()
                if ptr == 0:
                    continue
                if ptr in inputs:
                    inputs[ptr]["reads"] += 1
                    continue
                if ptr in g["_produced"]:
                    continue
                if fr is None:
                    f = self.user_frame(sys._getframe(2))
                    fr = self.frame_dict(f) if f is not None else None
                    stack = self.stack_from(f, None) if f is not None else []
                rec = {"addr": "0x%x" % ptr, "nbytes": int(self._nbytes(st)), "dtype": str(t.dtype).replace("torch.", ""),
                       "shape": list(t.shape), "device": str(t.device), "first_op": op, "reads": 1, "reader": fr,
                       "reader_stack": stack, "_ptr": ptr}
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

    def on_capture_out(self, out):
        g = self.capturing
        if g is None:
            return
        for t in self._tensors((out,), {}):
            try:
                if self.is_dev(t):
                    p = self._storage(t).data_ptr()
                    if p and p not in g["_inputs"]:
                        g["_produced"].add(p)
            except Exception:
                pass

    def on_capture_op_error(self, func, args, kwargs, e):
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
        self.add_finding({"rule": rule, "kind": kind, "graph": g["id"] if g else None, "op": op, "message": message,
                          "stack": stack}, site=site)

    def add_finding(self, fd, site=None):
        if site is not None:
            fd.setdefault("path", site.get("path"))
            fd.setdefault("line", site.get("line"))
            fd.setdefault("qual", site.get("qual"))
            fd.setdefault("first_line", site.get("first_line"))
        key = (fd.get("rule"), fd.get("kind"), fd.get("path"), fd.get("line"), fd.get("graph"), fd.get("input"))
        with self.lock:
            if key in self._finding_keys:
                self._finding_keys[key]["count"] += 1
                return
            fd["count"] = 1
            fd["id"] = len(self.findings)
            self._finding_keys[key] = fd
            self.findings.append(fd)
            self._dirty = True
        self.write()

    def _patch_tolist(self, on):
        torch = self.torch
        if torch is None:
            return
        T = torch.Tensor
        if on:
            if getattr(self, "_tolist", None) is not None or not hasattr(T, "tolist"):
                return
            orig = T.tolist
            tracer = self

            def tolist(t, *a, **k):
                try:
                    if tracer.capturing is not None and threading.get_ident() == tracer.capture_thread:
                        if not tracer.is_dev(t):
                            tracer.host_finding("CG102", "host-value", "`.tolist()` of a CPU tensor while the stream captures: the graph bakes in its values at capture", "Tensor.tolist", sys._getframe(1))
                        else:
                            tracer.host_finding("CG101", "host-sync", "`.tolist()` of a %s tensor while the stream captures (a host sync)" % t.device.type, "Tensor.tolist", sys._getframe(1))
                except Exception as e:
                    tracer.fail("tolist", e)
                return orig(t, *a, **k)

            self._tolist = orig
            try:
                T.tolist = tolist
            except Exception as e:
                self._tolist = None
                self.fail("patch tolist", e)
        elif getattr(self, "_tolist", None) is not None:
            try:
                T.tolist = self._tolist
            except Exception as e:
                self.fail("unpatch tolist", e)
            self._tolist = None

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
            if not fn or self.is_lib(fn) or fn.endswith(".cpp") or fn.endswith(".h") or fn.startswith("??"):
                continue
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
        pending = [g for g in self.graphs if g["status"] == "captured" and g["replays"] < self.prep_replays]
        return bool(pending) and self.windows_since_capture < self.prep_replays * max(1, len(self.graphs))

    def _open_window(self):
        if not self._prep_wanted():
            if self.history_mode == "prep":
                self.stop_history()
            return
        if self.window is not None:
            return
        self.window = {"functions": {}, "writes": [], "t0": _now_ms()}
        self._wmode = self._enter_mode(self._wmode_cls)
        self._start_monitor(self._window_sink)

    def _window_sink(self, code, frame):
        w = self.window
        if w is None:
            return False
        fns = w["functions"]
        if code in fns:
            return True
        if self._in_import(frame):
            return False
        path, qual, first = self.code_info(code, frame)
        fns[code] = {"path": path, "qual": qual, "first_line": first}
        return self.monitor == "sys.monitoring"

    def on_window_op(self, func, args, kwargs):
        w = self.window
        if w is None or threading.get_ident() != self._mon_thread:
            return
        idx = self._write_args.get(func)
        if idx is None:
            idx = []
            try:
                for i, a in enumerate(func._schema.arguments):
                    if a.alias_info is not None and a.alias_info.is_write:
                        idx.append((i, a.name))
            except Exception:
                pass
            self._write_args[func] = idx
        if not idx:
            return
        torch = self.torch
        for i, name in idx:
            t = args[i] if i < len(args) else kwargs.get(name)
            if not isinstance(t, torch.Tensor) or not self.is_dev(t):
                continue
            ptr = self._storage(t).data_ptr()
            if len(w["writes"]) < 100000:
                uf = self.user_frame(sys._getframe(2))
                if uf is not None:
                    w["writes"].append((ptr, self._op_name(func), uf, uf.f_lineno, self.stack_from(uf)))

    def _close_window(self, g):
        w = self.window
        if w is None:
            return
        self.window = None
        self._stop_monitor()
        self._exit_mode(self._wmode)
        self._wmode = None
        self.windows_since_capture += 1
        if g is None:
            return
        between = g["_between"]
        for code, rec in w["functions"].items():
            if code not in between:
                between[code] = dict(rec)
        reads = g["_inputs"]
        for ptr, op, uf, lineno, stack in w["writes"]:
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

    def before_replay(self, gobj):
        g = self._graph_of(gobj)
        if g is None:
            return
        with self.lock:
            if g["replays"] < self.prep_replays:
                self._close_window(g)
            elif self.window is not None:
                self._close_window(None)
            self._check_inputs(g)

    def after_replay(self, gobj):
        g = self._graph_of(gobj)
        if g is None:
            return
        with self.lock:
            g["replays"] += 1
            self._open_window()

    def _check_inputs(self, g):
        first = g["replays"] < self.prep_replays
        for rec in g["_inputs"].values():
            if rec.get("pool") != "external" or rec.get("fate") not in ("alive",):
                continue
            if rec.get("parameter") and not first and g["replays"] % 64:
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
        snap = self._memory_snapshot() if self.history == "on" else None
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
    """A meta-path finder that calls the tracer once torch (or triton, torch_npu) has executed."""

    watch = ("torch", "triton", "torch_npu")

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
        if "torch" in sys.modules:
            t.on_torch(sys.modules["torch"])
        else:
            sys.meta_path.insert(0, _TorchFinder(t))
        if "triton" in sys.modules:
            t.on_triton(sys.modules["triton"])
    except Exception as e:
        t.fail("install", e)
    atexit.register(t.write)
    return t


def tracer():
    return _TRACER[0]
