"""capguard trace's sitecustomize: written with capguard_tracer.py into a
temporary folder that `capguard trace` puts first on PYTHONPATH.

It starts the tracer (which waits for torch to be imported), then runs the
sitecustomize that would have run without it, if there is one further along
sys.path, so an environment's own start-up hook keeps working.
"""

import os
import sys

_CAPGUARD_DIR = os.path.dirname(os.path.abspath(__file__))


def _capguard_start():
    try:
        if _CAPGUARD_DIR not in sys.path:
            sys.path.insert(0, _CAPGUARD_DIR)
        import capguard_tracer

        capguard_tracer.install()
    except Exception as e:  # never stop the program
        sys.stderr.write("capguard trace: the tracer did not start: %s: %s\n" % (type(e).__name__, e))


def _capguard_chain():
    """Import the next sitecustomize on sys.path (ours is first)."""
    import importlib.util

    me = sys.modules.get("sitecustomize")
    saved = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _CAPGUARD_DIR]
        sys.modules.pop("sitecustomize", None)
        if importlib.util.find_spec("sitecustomize") is None:
            return
        import sitecustomize  # noqa: F401  (runs it)
    except Exception as e:
        sys.stderr.write("capguard trace: the program's own sitecustomize failed: %s: %s\n" % (type(e).__name__, e))
    finally:
        sys.path[:] = saved
        if "sitecustomize" not in sys.modules and me is not None:
            sys.modules["sitecustomize"] = me


_capguard_start()
_capguard_chain()
