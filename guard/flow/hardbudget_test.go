package flow

import (
	"fmt"
	"strings"
	"testing"
)

// spreadProject: k classes whose instances are all in one list, and n
// functions that each copy the list's elements through a few locals. Every
// local holds k values, fewer than saturatedCap, so the facts grow with the
// number of nodes: past the budget only a node that holds saturatedCap
// values stops, which none of these does.
func spreadProject(k, n int) map[string]string {
	var b strings.Builder
	for i := 0; i < k; i++ {
		fmt.Fprintf(&b, "class C%d:\n    pass\n\n\n", i)
	}
	b.WriteString("OBJS = [")
	for i := 0; i < k; i++ {
		fmt.Fprintf(&b, "C%d(), ", i)
	}
	b.WriteString("]\n\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "def f%d():\n    for a in OBJS:\n        b = a\n        c = b\n        d = c\n        return d\n\n\n", i)
	}
	return map[string]string{"pkg/spread.py": b.String()}
}

// TestHardBudget: past the ceiling no node takes a new value, so the facts
// stay bounded whatever the number of nodes; a project of twice the size
// does not grow them.
func TestHardBudget(t *testing.T) {
	const budget, ceiling = 2000, 4000
	free := Analyze(projectOf(t, spreadProject(20, 200)), Options{})
	if free.Facts <= 2*ceiling {
		t.Fatalf("the project makes %d facts without a budget: no more than %d, so it proves nothing", free.Facts, 2*ceiling)
	}
	if factCeiling <= factBudget {
		t.Fatalf("the ceiling %d is not above the budget %d", factCeiling, factBudget)
	}
	for _, n := range []int{200, 400} {
		g := Analyze(projectOf(t, spreadProject(20, n)), Options{FactBudget: budget, FactCeiling: ceiling})
		if g.Facts > ceiling {
			t.Errorf("%d functions: %d facts, more than the ceiling %d", n, g.Facts, ceiling)
		}
		if g.Saturated == 0 {
			t.Errorf("%d functions: no node counted as saturated", n)
		}
	}
}
