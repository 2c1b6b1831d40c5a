"""A minimal LSP client over stdio for the bench scripts (lsp_latency.py, server_diff.py).

    from lspclient import Client
    c = Client([capguard, "server"], cwd=tree)
    c.send({"method": "initialized", "params": {}})
    m = c.msgs.get(timeout=10)   # every message the server sends, in order

Messages use LSP's Content-Length framing; a reader thread puts each decoded message on c.msgs.
"""
import json
import queue
import subprocess
import threading


class Client:
    def __init__(self, cmd, cwd=None, env=None):
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.msgs = queue.Queue()
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            n = None
            while True:
                h = out.readline()
                if not h:
                    return
                h = h.strip()
                if not h:
                    break
                if h.lower().startswith(b"content-length:"):
                    n = int(h.split(b":")[1])
            self.msgs.put(json.loads(out.read(n)))

    def send(self, m):
        m["jsonrpc"] = "2.0"
        b = json.dumps(m).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
        self.proc.stdin.flush()

    def call(self, method, params, timeout=600):
        """Sends a request and returns its result; other messages meanwhile are dropped."""
        self._id += 1
        self.send({"id": self._id, "method": method, "params": params})
        while True:
            m = self.msgs.get(timeout=timeout)
            if m.get("id") == self._id and "method" not in m:
                return m.get("result")
