package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/flow"
)

// TestBudgetWarning: the warning that the call graph is incomplete names
// the values the budget went on and where their flows met, counts the tests and benchmarks among the
// files (the advice to exclude them only when there are some), and points
// to the model's known limit.
func TestBudgetWarning(t *testing.T) {
	g := &flow.Graph{Facts: 9000, Saturated: 12, Flooded: []flow.Flood{
		{What: "instances of pkg.run.Runner", Nodes: 500, Of: 800},
		{What: "function pkg.ops.scale", Nodes: 300, Of: 800},
	}, Merges: []flow.Merge{
		{What: "the parameter `module` of pkg.base.Base.add_module", In: 850, Values: 241},
		{What: "the attribute `op` of instances of pkg.run.Runner", In: 239, Values: 38},
	}, Hubs: flow.Hubs{Widened: 40, SummaryNodes: 350, Computed: 3}}
	withTests := []*File{{Path: "pkg/run.py"}, {Path: "pkg/ops.py"}, {Path: "tests/test_ops.py"}}
	msg := budgetWarning(g, withTests)
	for _, want := range []string{
		"passed its budget of facts (9000), and 12 expressions",
		"instances of pkg.run.Runner (in 500 of 800), function pkg.ops.scale (in 300 of 800)",
		"they met most at the parameter `module` of pkg.base.Base.add_module (850 flows in, 241 values) and " +
			"the attribute `op` of instances of pkg.run.Runner (239 flows in, 38 values)",
		"1 of the 3 files checked are tests, benchmarks or examples",
		"40 containers folded into the one summary container, which is in 350 expressions",
		"3 objects with attributes set by a computed name (setattr)",
		`"Not bounded yet" in docs/callgraph.md`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("warning %q lacks %q", msg, want)
		}
	}
	g.Hubs = flow.Hubs{}
	msg = budgetWarning(g, withTests[:2])
	if strings.Contains(msg, "files checked are tests") || strings.Contains(msg, "summary container") || !strings.Contains(msg, "Not bounded yet") {
		t.Errorf("without tests or hubs: %q", msg)
	}
}

// pastBudgetProject: a runner whose layer is known only by its declared
// type (nothing constructs the runner), whose captured call reads a tensor
// back to the host; and, apart from it, one list holding instances of 70
// classes, which passes a small fact budget.
func pastBudgetProject() map[string]string {
	var hub strings.Builder
	hub.WriteString("import torch\n\n\nclass Base:\n    pass\n\n\n")
	var names []string
	for i := 0; i < 70; i++ {
		fmt.Fprintf(&hub, "class C%d(Base):\n    pass\n\n\n", i)
		names = append(names, fmt.Sprintf("C%d()", i))
	}
	hub.WriteString("ALL = [" + strings.Join(names, ", ") + "]\n\n\ndef use():\n    for c in ALL:\n        print(c)\n")
	return map[string]string{
		"eng/__init__.py": "",
		"eng/hub.py":      hub.String(),
		"eng/runner.py": `import torch

from eng.hub import use


class Layer:
    def step(self, x):
        return x.sum().item()


class Runner:
    def __init__(self, layer: Layer):
        self.layer = layer

    def capture(self, x):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.layer.step(x)
`,
	}
}

// TestPastBudgetDeclaredTypeIsAssumption: a chain through a call that a
// declared type resolves is a proof within the fact budget (an error), but
// an assumption once the solve passed the budget (a warning that says so):
// the declared type then may fill an expression only the budget left empty.
func TestPastBudgetDeclaredTypeIsAssumption(t *testing.T) {
	dir := t.TempDir()
	for p, src := range pastBudgetProject() {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	find := func(budget int) (*Diagnostic, *Result) {
		t.Helper()
		testFactBudget = budget
		defer func() { testFactBudget = 0 }()
		res, err := Run(Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &Config{}})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Diagnostics {
			if d.Rule.ID == "CG101" && strings.HasSuffix(d.Path, "runner.py") {
				return d, res
			}
		}
		t.Fatalf("budget %d: no CG101 in runner.py: %v", budget, res.Diagnostics)
		return nil, nil
	}
	d, res := find(0)
	if d.Severity != SeverityError || d.Resolution != Annotated || len(d.Assumes) != 0 {
		t.Errorf("within the budget: %s %s %v, want an annotated error without assumptions", d.Severity, d.Resolution, d.Assumes)
	}
	if budgetHit(res) {
		t.Fatal("the project passes the default budget: the test no longer separates the cases")
	}
	d, res = find(10)
	if !budgetHit(res) {
		t.Fatal("the hub no longer passes a budget of 10 facts")
	}
	if d.Severity != SeverityWarning || len(d.Assumes) != 1 || !strings.Contains(d.Assumes[0], "runs eng.runner.Layer.step, as a declared type says: the points-to analysis passed its fact budget") {
		t.Errorf("past the budget: %s %v, want a warning that names the declared type and the budget", d.Severity, d.Assumes)
	}
}

func budgetHit(res *Result) bool {
	for _, w := range res.Warnings {
		if BudgetWarning(w) {
			return true
		}
	}
	return false
}
