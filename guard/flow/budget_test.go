package flow

import (
	"fmt"
	"strings"
	"testing"
)

// hubProject: a benchmark base class whose one abstract instance holds
// every op and every input function the n benchmarks give it, so that each
// op is called with every input: facts grow as n squared.
func hubProject(n int) map[string]string {
	var b strings.Builder
	b.WriteString(`import torch


class Bench:
    def __init__(self, op, make_input):
        self.op = op
        self.make_input = make_input

    def run(self):
        x = self.make_input()
        return self.op(x)

`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `
def op%d(x):
    for _ in range(3):
        x = x.dtype
        x = x.device
    return x


def input%d():
    return torch.backends.cuda


def test%d():
    return Bench(op%d, input%d).run()
`, i, i, i, i, i)
	}
	return map[string]string{"bench/hub.py": b.String()}
}

// TestFactBudget: past the budget, nodes that hold many values stop taking
// new ones, the solve ends, and the graph says how many did.
func TestFactBudget(t *testing.T) {
	p := projectOf(t, hubProject(80))
	full := Analyze(p, Options{})
	if full.Saturated != 0 {
		t.Fatalf("default budget: %d saturated nodes, want 0 (facts %d)", full.Saturated, full.Facts)
	}
	small := Analyze(projectOf(t, hubProject(80)), Options{FactBudget: full.Facts / 4})
	if small.Saturated == 0 {
		t.Fatalf("budget %d: no saturated node (facts %d)", full.Facts/4, small.Facts)
	}
	if small.Facts >= full.Facts {
		t.Errorf("budget %d: %d facts, no fewer than the %d without a budget", full.Facts/4, small.Facts, full.Facts)
	}
	// The warning names what the budget went on: the project values in the
	// most nodes (here the benchmarks' ops and inputs, which the hub's one
	// instance hands to each other), never tensors or outside names.
	if full.Flooded != nil {
		t.Errorf("flooded values %v without a budget passed", full.Flooded)
	}
	if len(small.Flooded) == 0 || len(small.Flooded) > 3 {
		t.Fatalf("flooded values %v, want 1 to 3", small.Flooded)
	}
	t.Logf("flooded: %v", small.Flooded)
	// And where the flows met: the hub's attributes, which every
	// benchmark's constructor call sets to its own op and input.
	if full.Merges != nil {
		t.Errorf("merge points %v without a budget passed", full.Merges)
	}
	if len(small.Merges) == 0 || !strings.HasPrefix(small.Merges[0].What, "the attribute `") ||
		!strings.HasSuffix(small.Merges[0].What, "` of instances of bench.hub.Bench") || small.Merges[0].In < 40 {
		t.Errorf("merge points %v, want an attribute of the hub's instances first, with 40 or more flows in", small.Merges)
	}
	for i, f := range small.Flooded {
		if !strings.HasPrefix(f.What, "function bench.hub.") && !strings.HasPrefix(f.What, "instances of bench.hub.") &&
			!strings.HasPrefix(f.What, "method bench.hub.") {
			t.Errorf("flooded value %d is %q, want a function, method or instances of the project", i, f.What)
		}
		if f.Nodes <= 0 || f.Nodes > f.Of || (i > 0 && f.Nodes > small.Flooded[i-1].Nodes) {
			t.Errorf("flooded value %d: %d of %d nodes, not in order", i, f.Nodes, f.Of)
		}
	}
}

// TestExtNamesBounded: attribute reads in a loop over external values make
// no name that repeats an attribute (x.dtype.dtype), and one read makes at
// most maxExtPerSite names.
func TestExtNamesBounded(t *testing.T) {
	g := Analyze(projectOf(t, hubProject(40)), Options{})
	n := 0
	for _, v := range g.s.values {
		if v.Kind != VExt {
			continue
		}
		parts := strings.Split(v.Ext, ".")
		seen := map[string]bool{}
		for _, part := range parts[1:] {
			if seen[part] {
				t.Errorf("external name %s repeats %q", v.Ext, part)
			}
			seen[part] = true
		}
		if strings.HasPrefix(v.Ext, "torch.backends.cuda.") {
			n++
		}
	}
	if n == 0 || n > 2*maxExtPerSite {
		t.Errorf("%d names derived from torch.backends.cuda, want 1..%d", n, 2*maxExtPerSite)
	}
}

// TestDtypeAttrsClosed: a dtype's attributes are a known set
// (torchapi.DtypeAttrs): reading one derives its name, reading anything
// else (a dtype that mixing put where a config was expected) derives none.
func TestDtypeAttrsClosed(t *testing.T) {
	g := Analyze(projectOf(t, map[string]string{"pkg/m.py": `import torch


def size_of(dtype):
    return dtype.itemsize


def layers(cfg):
    return cfg.submodules.hidden_size


def main():
    size_of(torch.bfloat16)
    layers(torch.float32)
`}), Options{})
	got := map[string]bool{}
	for _, v := range g.s.values {
		if v.Kind == VExt {
			got[v.Ext] = true
		}
	}
	if !got["torch.bfloat16.itemsize"] {
		t.Errorf("torch.bfloat16.itemsize not derived; names %v", got)
	}
	for name := range got {
		if strings.HasPrefix(name, "torch.float32.") {
			t.Errorf("%s derived: a dtype has no such attribute", name)
		}
	}
}

// TestHubs: a solve that passes its budget measures the two mixing places
// its warning names: the containers widened into the one summary (a helper
// that 30 call sites pass a list each) and the nodes holding it, and the
// objects whose attributes a computed name sets (setattr).
func TestHubs(t *testing.T) {
	files := hubProject(80)
	var b strings.Builder
	b.WriteString(`class Config:
    def set(self, name, value):
        setattr(self, name, value)


def first(xs):
    return xs[0]


def main(name):
    c = Config()
`)
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "    c.set(name, first([Config, %d]))\n", i)
	}
	files["bench/mix.py"] = b.String()
	full := Analyze(projectOf(t, files), Options{})
	if full.Saturated != 0 || full.Hubs != (Hubs{}) {
		t.Fatalf("default budget: %d saturated, hubs %+v; want none measured", full.Saturated, full.Hubs)
	}
	small := Analyze(projectOf(t, files), Options{FactBudget: full.Facts / 4})
	h := small.Hubs
	t.Logf("hubs: %+v", h)
	if small.Saturated == 0 || h.Widened < 30-contCap || h.SummaryNodes == 0 || h.Computed != 1 {
		t.Errorf("budget %d: %d saturated, hubs %+v; want the lists past %d widened, the summary held, one object's computed attributes",
			full.Facts/4, small.Saturated, h, contCap)
	}
}
