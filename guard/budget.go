package guard

import (
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/flow"
)

// budgetMark begins every budget warning (BudgetWarning).
const budgetMark = "the call graph is incomplete: the points-to analysis passed its budget of facts"

// BudgetWarning reports whether the warning w says that the solve passed
// its fact budget.
func BudgetWarning(w string) bool { return strings.Contains(w, budgetMark) }

// budgetWarning says that the call graph is incomplete because the
// points-to solve passed its fact budget, which values it spent the budget
// on (the project values in the most expressions), and the two causes
// seen: tests and benchmarks whose shared helpers mix values (it counts
// them; the config's exclude leaves them out), and one abstract object a
// class (the model's known limit).
func budgetWarning(g *flow.Graph, files []*File) string {
	var b strings.Builder
	fmt.Fprintf(&b, budgetMark+" (%d), and %d "+
		"expressions that hold many values stopped taking new ones, so calls through them may be missing", g.Facts, g.Saturated)
	var flooded, merges []string
	for _, f := range g.Flooded {
		flooded = append(flooded, fmt.Sprintf("%s (in %d of %d)", f.What, f.Nodes, f.Of))
	}
	for _, m := range g.Merges {
		merges = append(merges, fmt.Sprintf("%s (%d flows in, %d values)", m.What, m.In, m.Values))
	}
	if len(flooded) > 0 {
		b.WriteString("; the values in the most expressions are " + strings.Join(flooded, ", "))
	}
	if len(merges) > 0 {
		b.WriteString("; they met most at " + strings.Join(merges, " and "))
	}
	tests := 0
	for _, f := range files {
		if contexts.TestFile(f) {
			tests++
		}
	}
	if tests > 0 {
		fmt.Fprintf(&b, "; %d of the %d files checked are tests, benchmarks or examples, whose shared helpers often "+
			"mix values: check the package without them (the config's exclude)", tests, len(files))
	}
	if h := g.Hubs; h.Widened > 0 || h.Computed > 0 {
		fmt.Fprintf(&b, "; the model's summaries mix values here: %d containers folded into the one summary container, "+
			"which is in %d expressions (a node that holds %d containers takes it instead), and %d objects with attributes "+
			"set by a computed name (setattr), which every attribute read of them gets", h.Widened, h.SummaryNodes, flow.ContCap, h.Computed)
	}
	b.WriteString("; one abstract object stands for every instance of a class, so instances that hold different " +
		"values (several registries of one class) mix them: \"Not bounded yet\" in docs/callgraph.md")
	return b.String()
}
