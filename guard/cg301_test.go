package guard

import (
	"fmt"
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
	lineOf := func(sub string) int {
		for i, l := range lines {
			if strings.Contains(l, sub) {
				return i + 1
			}
		}
		t.Fatalf("no line %q", sub)
		return 0
	}
	want := map[int]Severity{
		lineOf("st.prev = x.to"):                 SeverityWarning,
		lineOf("st.meta = Meta("):                SeverityError,
		lineOf(`st.cache["lens"] = lens.long()`): SeverityError,
		lineOf("tmp = lens.int()"):               SeverityError,
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
	lineOf := func(sub string) int { return strings.Count(src[:strings.Index(src, sub)], "\n") + 1 }
	if w := fmt.Sprintf("%d:CG301 %d:CG301", lineOf("raw = "), lineOf("side = ")); strings.Join(got, " ") != w {
		t.Errorf("CG301 at %v, want %s (caching_allocator_alloc, use_mem_pool)", got, w)
	}
}
