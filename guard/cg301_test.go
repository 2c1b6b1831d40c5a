package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cg301Head = `import torch
import triton
import triton.language as tl


@triton.jit
def _k(a_ptr, b_ptr, out_ptr):
    i = tl.program_id(0)
    tl.store(out_ptr + i, tl.load(a_ptr + i) + tl.load(b_ptr + i))


class Meta:
    def __init__(self, lens):
        self.lens = lens


class State:
    pass


`

// CG301 reports temporaries whose memory the graph does not own, and not
// those made and consumed inside one captured call.
func TestTemporariesOwnership(t *testing.T) {
	src := cg301Head + `def step(st, x, out):
    x32 = x.to(torch.int32)
    _k[(4,)](x32, x.contiguous(), out)
    prev = st.prev
    _k[(4,)](x, prev, out)
    st.prev = x.to(torch.int32)
    if st.lens.dtype != torch.int32:
        st.lens = st.lens.to(torch.int32)
    if st.pos.max() > 0:
        st.pos = st.pos.long()
    return out


def prepare(st, lens):
    st.meta = Meta(lens.to(torch.int32))
    st.cache["lens"] = lens.long()
    tmp = lens.int()
    st.pending.append(tmp)
    used = lens.int()
    _k[(4,)](used, used, st.out)


def serve(st, x, out, batches):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = step(st, x, out)
        z = st.meta.lens + 1
    for b in batches:
        prepare(st, b.lens)
        g.replay()
    return y, z
`
	lines := strings.Split(src, "\n")
	lineOf := func(sub string) int { return lineWith(t, src, sub) }
	// Kept in replay-prep: an error where captured code reads the
	// attribute it is kept on (st.meta), a warning that names the
	// assumption where none does (st.cache, st.pending).
	want := map[int]Severity{
		lineOf("st.prev = x.to"):                 SeverityWarning,
		lineOf("st.meta = Meta("):                SeverityError,
		lineOf(`st.cache["lens"] = lens.long()`): SeverityWarning,
		lineOf("tmp = lens.int()"):               SeverityWarning,
	}
	for _, cfg := range []*Config{{}, {StrictTemporaries: true}} {
		res := runSrc(t, src, cfg)
		got := map[int]Severity{}
		for _, d := range res.Diagnostics {
			if d.Rule.ID == "CG301" {
				got[d.Start.Line] = d.Severity
			}
		}
		w := map[int]Severity{}
		for k, v := range want {
			w[k] = v
		}
		if cfg.StrictTemporaries {
			// every per-call temporary fed to a kernel in captured code
			w[lineOf("x32 = x.to")] = SeverityWarning
			w[lineOf("_k[(4,)](x32, x.contiguous(), out)")] = SeverityWarning
		}
		for l, s := range w {
			if got[l] != s {
				t.Errorf("strict=%v: line %d (%s): got %q, want %q", cfg.StrictTemporaries, l, strings.TrimSpace(lines[l-1]), got[l], s)
			}
		}
		for l := range got {
			if _, ok := w[l]; !ok {
				t.Errorf("strict=%v: unexpected CG301 at line %d (%s)", cfg.StrictTemporaries, l, strings.TrimSpace(lines[l-1]))
			}
		}
	}
}

func TestTemporariesRawAllocator(t *testing.T) {
	src := cg301Head + `def step(x, out, pool):
    raw = torch.cuda.caching_allocator_alloc(4096)
    torch.ops.my.kernel(raw, out)
    with torch.cuda.use_mem_pool(pool):
        side = torch.empty_like(x)
    _k[(4,)](x, side, out)
    mine = torch.empty_like(x)
    _k[(4,)](x, mine, out)


def capture(g, x, out, pool):
    with torch.cuda.graph(g):
        step(x, out, pool)
`
	res := runSrc(t, src, nil)
	var got []string
	for _, f := range findings(res, false) {
		if strings.HasSuffix(f, "CG301") {
			got = append(got, f)
		}
	}
	lineOf := func(sub string) int { return lineWith(t, src, sub) }
	if w := fmt.Sprintf("%d:CG301 %d:CG301", lineOf("raw = "), lineOf("side = ")); strings.Join(got, " ") != w {
		t.Errorf("CG301 at %v, want %s (caching_allocator_alloc, use_mem_pool)", got, w)
	}
}

// Buffer sites carry the full module path: files of one stem in two
// folders never share a buffer, packaged or not.
func TestSiteKeysFullModulePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	body := `import torch
import triton


@triton.jit
def _k(a_ptr, out_ptr):
    pass


def read(x, out):
    """Capture-safe reader."""
    _k[(1,)](x.to(torch.int32), out)
`
	for _, f := range []string{"a/util.py", "b/util.py", "pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/util.py"} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		text := body
		if strings.HasSuffix(f, "__init__.py") {
			text = ""
		}
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(Options{Paths: []string{"."}, Config: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
	sites := map[string]string{}
	for _, d := range res.Diagnostics {
		if d.Rule.ID == "CG301" && d.Fix != nil {
			text := d.Fix.Edits[0].NewText
			site := text[strings.Index(text, `"`)+1:]
			sites[d.Path] = site[:strings.Index(site, `"`)]
		}
	}
	want := map[string]string{
		"a/util.py":       "a.util.read._k.0",
		"b/util.py":       "b.util.read._k.0",
		"pkg/sub/util.py": "pkg.sub.util.read._k.0",
	}
	for p, w := range want {
		if sites[p] != w {
			t.Errorf("%s: site %q, want %q (all: %v)", p, sites[p], w, sites)
		}
	}
}

// CG301 and the points-to analysis share one table of container stores:
// a replay-prep temporary kept with `.appendleft()` or a set's `.add()` is
// reported as `.append()` is; a tensor's `.add()` (arithmetic) keeps
// nothing.
func TestTemporariesContainerStores(t *testing.T) {
	src := cg301Head + `import collections


def prepare(st, lens, out):
    a = lens.int()
    st.pending.append(a)
    b = lens.int()
    st.recent.appendleft(b)
    c = lens.int()
    st.seen.add(c)
    d = lens.int()
    st.out.add(d)
    _k[(4,)](st.out, st.out, out)


def serve(lens, out, batches):
    st = State()
    st.pending = []
    st.recent = collections.deque()
    st.seen = set()
    st.out = torch.zeros(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        _k[(4,)](st.out, st.out, out)
    for b in batches:
        prepare(st, b.lens, out)
        g.replay()
`
	res := runSrc(t, src, nil)
	got := map[string]bool{}
	lines := strings.Split(src, "\n")
	for _, d := range res.Diagnostics {
		if d.Rule.ID == "CG301" {
			got[strings.TrimSpace(lines[d.Start.Line-1])] = true
		}
	}
	for _, want := range []string{"a = lens.int()", "b = lens.int()", "c = lens.int()"} {
		if !got[want] {
			t.Errorf("no CG301 at %q (got %v)", want, got)
		}
	}
	if got["d = lens.int()"] {
		t.Errorf("CG301 at a tensor's .add() (arithmetic, keeps nothing)")
	}
}

// A temporary kept in replay-prep is an error only where captured code
// reads the attribute it ends up on (the graph then read the one bound at
// capture, which the next prep frees: cg301_prep_kept_pos); kept where no
// captured code reads, it is a warning that says so. Returned to a caller
// that only copies it into the graph's static input, it is nothing
// (TestReturnedTemporaryFollowsCallers).
func TestPrepKeptProof(t *testing.T) {
	prep := `def prepare(st, lens):
    st.cache["lens"] = lens.long()
    tmp = lens.int()
    st.pending.append(tmp)
    st.meta = Meta(lens.to(torch.int32))


def make_input(lens):
    return lens.to(torch.int32)


`
	for _, c := range []struct {
		reads string
		want  map[string]Severity
	}{
		{"st.meta.lens + 1", map[string]Severity{`st.cache["lens"] = `: SeverityWarning, "tmp = lens.int()": SeverityWarning, "st.meta = Meta(": SeverityError, "return lens.to": ""}},
		{`st.cache["lens"] + st.pending[0]`, map[string]Severity{`st.cache["lens"] = `: SeverityError, "tmp = lens.int()": SeverityError, "st.meta = Meta(": SeverityWarning, "return lens.to": ""}},
	} {
		src := cg301Head + prep + `def serve(st, batches, static):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        z = ` + c.reads + ` + static
    for b in batches:
        prepare(st, b.lens)
        static.copy_(make_input(b.lens))
        g.replay()
    return z
`
		lines := strings.Split(src, "\n")
		got := map[int]Severity{}
		msgs := map[int]string{}
		for _, d := range runSrc(t, src, nil).Diagnostics {
			if d.Rule.ID == "CG301" {
				got[d.Start.Line] = d.Severity
				msgs[d.Start.Line] = d.Message
			}
		}
		for sub, sev := range c.want {
			l := 0
			for i, x := range lines {
				if strings.Contains(x, sub) {
					l = i + 1
				}
			}
			if got[l] != sev {
				t.Errorf("captured code reads %s: line %d (%s): got %q, want %q", c.reads, l, sub, got[l], sev)
			}
			if sev == SeverityWarning && !strings.Contains(msgs[l], "this assumes a graph reads it") {
				t.Errorf("captured code reads %s: line %d: warning %q does not name its assumption", c.reads, l, msgs[l])
			}
		}
	}
}

// lineWith is the number of the first line of src that contains sub; the
// test fails where none does.
func lineWith(t *testing.T, src, sub string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, sub) {
			return i + 1
		}
	}
	t.Fatalf("no line holds %q", sub)
	return 0
}

// A temporary a replay-prep helper returns is followed into the replay-prep
// code that calls it (testdata/flow/replayprep/returned_temps.py): nothing
// where each caller copies it or returns it to one that does; where a
// caller keeps it where captured code reads it, an error when the helper
// made the tensor it converts, and a warning that names the dtype it
// assumes when the conversion may return the caller's own tensor.
func TestReturnedTemporaryFollowsCallers(t *testing.T) {
	res, err := Run(Options{Paths: []string{"../testdata/flow/replayprep/returned_temps.py"}})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		sev Severity
		msg string
	}
	by := map[string]got{}
	for _, d := range res.Diagnostics {
		if d.Rule.ID == "CG301" {
			by[d.Function] = got{d.Severity, d.Message}
		}
	}
	for _, fn := range []string{"lens_i32", "pos_i64", "through", "scales_of"} {
		if g, ok := by[fn]; ok {
			t.Errorf("%s: its callers copy what it returns, yet: %s", fn, g.msg)
		}
	}
	if g := by["window"]; g.sev != SeverityError || !strings.Contains(g.msg, "returned to `returned_temps.Runner.prep`, which stores it in") {
		t.Errorf("window: want an error naming the caller that keeps it, got %v %q", g.sev, g.msg)
	}
	for _, fn := range []string{"table_i32", "kept_scale"} {
		if g := by[fn]; g.sev != SeverityWarning || !strings.Contains(g.msg, "is not already torch.") {
			t.Errorf("%s: want a warning that names the dtype it assumes, got %v %q", fn, g.sev, g.msg)
		}
	}
}
