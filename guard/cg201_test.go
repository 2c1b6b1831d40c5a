package guard

import (
	"fmt"
	"os"
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
		if got := p.FixSafety(safe, proof{}); got.Applicability != c.want {
			t.Errorf("%s/%s: %s, want %s", c.ctx, c.res, got.Applicability, c.want)
		}
	}
	if safe.Applicability != Safe {
		t.Error("fixSafety changed its argument")
	}
}

// Issue 17, cause 8: in a reload hook, rebinding a registered parameter or
// buffer is a warning that names the framework's copy-back; a plain tensor
// attribute rebuilt there is an error (testdata/flow/postcapture/reload.py).
func TestRebindReloadSeverity(t *testing.T) {
	res, err := Run(Options{Paths: []string{"../testdata/flow/postcapture"}})
	if err != nil {
		t.Fatal(err)
	}
	// The lines, found by their text (the fixture grows).
	src, err := os.ReadFile("../testdata/flow/postcapture/reload.py")
	if err != nil {
		t.Fatal(err)
	}
	lineOf := func(text string) int { return lineWith(t, string(src), text) }
	want := map[int]Severity{
		lineOf("self.weight.data.t().contiguous()"): SeverityWarning,
		lineOf("self.input_scale.max().reshape(1)"): SeverityWarning,
		lineOf("self.act_scale = self.input_scale"): SeverityError,
	}
	got := map[int]Severity{}
	for _, d := range res.Diagnostics {
		if strings.HasSuffix(d.Path, "reload.py") && d.Rule.ID == "CG201" {
			got[d.Start.Line] = d.Severity
			if d.Severity == SeverityWarning && !strings.Contains(d.Message, "copy-back") {
				t.Errorf("line %d: a warning that does not name its assumption: %s", d.Start.Line, d.Message)
			}
		}
	}
	for line, sev := range want {
		if got[line] != sev {
			t.Errorf("line %d: severity %q, want %q", line, got[line], sev)
		}
	}
}

// Captured code binding a fresh tensor to state read after `.replay()`:
// with one capture (no loop) the forward's binding is a warning that names
// its assumption, and the capture region's own output binding is nothing;
// in a loop of captures both are errors (cg201_fresh_output_pos.py on the
// GPU).
func TestFreshStateSeverity(t *testing.T) {
	const body = `import torch


class Block(torch.nn.Module):
    def forward(self, x):
        self.hidden = torch.cat([x, x], dim=-1)
        return self.hidden.sum(-1)


class Runner:
    def __init__(self, x):
        self.model = Block()
        self.x = x
        self.graphs = {}

    def capture(self, sizes):
%s
    def run(self, bs):
        self.graphs[bs].replay()
        return self.model.hidden, self.out
`
	once := "        g = torch.cuda.CUDAGraph()\n        with torch.cuda.graph(g):\n            self.out = self.model(self.x)\n        self.graphs[1] = g\n"
	loop := "        for bs in sizes:\n            g = torch.cuda.CUDAGraph()\n            with torch.cuda.graph(g):\n                self.out = self.model(self.x[:bs])\n            self.graphs[bs] = g\n"
	for _, c := range []struct {
		name, capture string
		want          map[int]Severity
	}{
		{"once", once, map[int]Severity{6: SeverityWarning}},
		{"loop", loop, map[int]Severity{6: SeverityError, 20: SeverityError}},
	} {
		res := runSrc(t, fmt.Sprintf(body, c.capture), nil)
		got := map[int]Severity{}
		for _, d := range res.Diagnostics {
			if d.Rule.ID == "CG201" {
				got[d.Start.Line] = d.Severity
				if d.Severity == SeverityWarning && !strings.Contains(d.Message, "assumed:") {
					t.Errorf("%s: a warning that names no assumption: %s", c.name, d.Message)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: CG201 findings %v, want %v", c.name, got, c.want)
		}
	}
}
