package guard

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// runSrc checks one file given as source, with cfg (nil: an empty config).
func runSrc(t *testing.T, src string, cfg *Config) *Result {
	t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	res, err := Run(Options{Paths: []string{"m.py"}, Overlay: map[string][]byte{"m.py": []byte(src)}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		t.Fatalf("file error: %s", e.Message)
	}
	return res
}

// findings lists "line:CODE[:applicability]" of res, sorted.
func findings(res *Result, withFix bool) []string {
	var out []string
	for _, d := range res.Diagnostics {
		s := fmt.Sprintf("%d:%s", d.Start.Line, d.Rule.ID)
		if withFix {
			if d.Fix != nil {
				s += ":" + string(d.Fix.Applicability)
			} else {
				s += ":-"
			}
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func TestRebindPostCapture(t *testing.T) {
	src := `import torch
from torch import nn


class Lin(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(4))

    def forward(self, x):
        return x @ self.weight + self.bias

    def reload(self, w, b, s):
        self.register_parameter("weight", nn.Parameter(w))
        self.bias = nn.Parameter(b)
        self.weight.data = s
        self.bias.data = torch.zeros_like(self.bias)
        self.register_parameter("unused", nn.Parameter(w))


def capture(g, w, x):
    lin = Lin(w)
    with torch.cuda.graph(g):
        y = lin(x)
    return y
`
	res := runSrc(t, src, &Config{PostCapture: []string{"m:Lin.reload"}})
	got := strings.Join(findings(res, true), " ")
	// .data = s: no fix (s's shape, dtype and layout unknown); .data =
	// zeros_like(self.bias): the copy is proved to change only the values.
	if want := "15:CG201:- 16:CG201:- 17:CG201:- 18:CG201:safe"; got != want {
		t.Errorf("findings %s, want %s", got, want)
	}
}

func TestRebindFreshObject(t *testing.T) {
	src := `import torch


class State:
    pass


def step(st):
    return st.idx + st.lens


def serve(batches, n):
    g = torch.cuda.CUDAGraph()
    st = State()
    with torch.cuda.graph(g):
        out = step(st)
    for b in batches:
        fresh = State()
        fresh.idx = b.idx.to(torch.int32)
        fresh.idx = b.idx.to(torch.int32)
        st.lens = b.lens.to(torch.int32)
        g.replay()
    return out
`
	res := runSrc(t, src, nil)
	var got []string
	for _, f := range findings(res, false) {
		if strings.HasSuffix(f, "CG201") {
			got = append(got, f)
		}
	}
	// line 19 is the first binding on an object made here; 20 rebinds it; 21 rebinds captured state.
	if strings.Join(got, " ") != "20:CG201 21:CG201" {
		t.Errorf("CG201 at %v, want lines 20 and 21", got)
	}
}

// The copy_ fix of CG201 is safe only when capguard proves the captured
// tensor has the new value's shape and dtype.
func TestRebindCopyFixSafety(t *testing.T) {
	src := `import torch


class Meta:
    def __init__(self, n, dev):
        self.lens64 = torch.zeros(n, dtype=torch.int64, device=dev)
        self.lens = torch.zeros(n, dtype=torch.int32, device=dev)
        self.pages = torch.zeros((n, 16), dtype=torch.int32, device=dev)


def step(meta):
    return meta.lens + meta.pages.sum(-1)


def serve(meta, batches):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step(meta)
    for b in batches:
        meta.lens = meta.lens64.to(torch.int32)
        meta.pages = b.pages.to(torch.int32)
        g.replay()
    return out
`
	res := runSrc(t, src, nil)
	got := strings.Join(findings(res, true), " ")
	if want := "20:CG201:safe 21:CG201:unsafe"; got != want {
		t.Errorf("findings %s, want %s", got, want)
	}
	for _, d := range res.Diagnostics {
		if d.Start.Line == 20 && d.Fix != nil {
			if fixed := applyEdits(src, d.Fix.Edits); !strings.Contains(fixed, "meta.lens.copy_(meta.lens64)") {
				t.Errorf("safe fix gives\n%s", fixed)
			}
		}
	}
}

// A fix reached through the launcher context or a name-resolved edge is
// never safe.
func TestFixSafetyDowngrade(t *testing.T) {
	safe := &Fix{Message: "m", Applicability: Safe}
	for _, c := range []struct {
		ctx  Context
		res  EdgeKind
		want Applicability
	}{
		{Captured, Resolved, Safe},
		{Claimed, Resolved, Safe},
		{Launcher, Resolved, Unsafe},
		{Captured, ByName, Unsafe},
		{Captured, Hierarchy, Safe},
	} {
		p := &Pass{Ctx: c.ctx, Resolution: c.res}
		if got := p.fixSafety(safe, ""); got.Applicability != c.want {
			t.Errorf("%s/%s: %s, want %s", c.ctx, c.res, got.Applicability, c.want)
		}
	}
	if safe.Applicability != Safe {
		t.Error("fixSafety changed its argument")
	}
}
