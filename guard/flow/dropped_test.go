package flow

import (
	"strings"
	"testing"
)

// TestDroppedReasons: a method call left without a project target says
// why, in the terms the user can check.
func TestDroppedReasons(t *testing.T) {
	files := map[string]string{
		"eng/model.py": `import torch
from transformers.activations import ACT2FN


class MLP(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.act = ACT2FN[act]

    def forward(self, x):
        return self.act(x)


class Embed(torch.nn.Embedding):
    def forward(self, ids):
        return super().forward(ids) * 2


class Plain:
    def run(self, x):
        return self.missing(x)


def main(x):
    MLP("gelu").forward(x)
    Embed(4, 4).forward(x)
    Plain().run(x)
`,
	}
	p := projectOf(t, files)
	g := Analyze(p, Options{})
	src := p.Files[0].Src
	got := map[string]string{}
	for n, why := range g.Dropped {
		got[n.Text(src)] = why
	}
	for call, want := range map[string]string{
		"self.act(x)":          "`act` is set on `MLP` instances, but only to values from outside the project",
		"super().forward(ids)": "neither `Embed` nor its project bases define `forward`: it comes from an outside base (torch.nn.Embedding)",
		"self.missing(x)":      "the receiver's classes have no attribute `missing`",
	} {
		if !strings.Contains(got[call], want) {
			t.Errorf("dropped %s: got %q, want it to say %q (all: %v)", call, got[call], want, got)
		}
	}
}

// TestDroppedReasonOrder: the class a dropped call's reason names does not
// depend on the order the files were built in (which receiver reached the
// call first): the same text whichever file comes first.
func TestDroppedReasonOrder(t *testing.T) {
	files := map[string]string{
		"eng/helpers.py": `def run(m, x):
    return m.extra_step(x)
`,
		"eng/alpha.py": `import torch
from eng.helpers import run


class Alpha(torch.nn.Module):
    pass


def go(x):
    return run(Alpha(), x)
`,
		"eng/beta.py": `import torch
from eng.helpers import run


class Beta(torch.nn.Module):
    pass


def go(x):
    return run(Beta(), x)
`,
	}
	reason := func(reverse bool) string {
		p := projectOf(t, files)
		g := Analyze(p, Options{ReverseBuild: reverse})
		for n, why := range g.Dropped {
			for _, f := range p.Files {
				if f.Path == "eng/helpers.py" && n.Text(f.Src) == "m.extra_step(x)" {
					return why
				}
			}
		}
		return ""
	}
	fwd, rev := reason(false), reason(true)
	if fwd == "" || !strings.Contains(fwd, "`Alpha`") {
		t.Errorf("m.extra_step(x): got %q, want the reason to name `Alpha` (the first class by name)", fwd)
	}
	if fwd != rev {
		t.Errorf("the reason depends on the build order:\n forward %q\n reverse %q", fwd, rev)
	}
}
