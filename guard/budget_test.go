package guard

import (
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/flow"
)

// TestBudgetWarning: the warning that the call graph is incomplete names
// the values the budget went on, counts the tests and benchmarks among the
// files (the advice to exclude them only when there are some), and points
// to the model's known limit.
func TestBudgetWarning(t *testing.T) {
	g := &flow.Graph{Facts: 9000, Saturated: 12, Flooded: []flow.Flood{
		{What: "instances of pkg.run.Runner", Nodes: 500, Of: 800},
		{What: "function pkg.ops.scale", Nodes: 300, Of: 800},
	}, Hubs: flow.Hubs{Widened: 40, SummaryNodes: 350, Computed: 3}}
	withTests := []*File{{Path: "pkg/run.py"}, {Path: "pkg/ops.py"}, {Path: "tests/test_ops.py"}}
	msg := budgetWarning(g, withTests)
	for _, want := range []string{
		"passed its budget of facts (9000), and 12 expressions",
		"instances of pkg.run.Runner (in 500 of 800), function pkg.ops.scale (in 300 of 800)",
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
