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
