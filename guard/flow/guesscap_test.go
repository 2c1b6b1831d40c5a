package flow

import (
	"fmt"
	"strings"
	"testing"
)

// mixProject: n functions, each in a list of its own, all appended to one
// list, and a loop that calls what each holds. The outer list's elements
// pass contCap and widen to the summary container, so the loop's `fn` takes
// the n functions as guesses.
func mixProject(n int) map[string]string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "def op%d(x):\n    return x\n\n\nBOX%d = [op%d]\n\n\n", i, i, i)
	}
	b.WriteString("ALL = []\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "ALL.append(BOX%d)\n", i)
	}
	b.WriteString("\n\ndef run_all(x):\n    for box in ALL:\n        for fn in box:\n            fn(x)\n")
	return map[string]string{"pkg/mix.py": b.String()}
}

// TestGuessCap: a node takes at most guessCap guesses; past them it turns
// new ones away, and the graph counts it (Graph.Mixed).
func TestGuessCap(t *testing.T) {
	few := Analyze(projectOf(t, mixProject(guessCap-10)), Options{})
	if few.Mixed != 0 {
		t.Errorf("%d guesses: %d mixed nodes, want 0", guessCap-10, few.Mixed)
	}
	many := Analyze(projectOf(t, mixProject(guessCap+40)), Options{})
	if many.Mixed == 0 {
		t.Fatalf("%d guesses: no mixed node (facts %d)", guessCap+40, many.Facts)
	}
	// The loop's call has as many guesses as the node kept: never more
	// than guessCap, and at guessCap (maxGuesses) none is an edge.
	for _, es := range many.bySite {
		if len(es) > guessCap {
			t.Errorf("a call site has %d callees, more than guessCap %d", len(es), guessCap)
		}
	}
}

// registryProject: n operator implementations registered through
// torch.library from a literal table of (name, function) rows, in a loop.
func registryProject(n int) map[string]string {
	var b strings.Builder
	b.WriteString("import torch\n\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "def _op%d(x):\n    return x + %d\n\n\n", i, i)
	}
	b.WriteString("OPS = (\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    (\"op%d\", _op%d),\n", i, i)
	}
	b.WriteString(")\n\n\ndef register():\n    lib = torch.library.Library(\"aten\", \"IMPL\")\n    for name, fn in OPS:\n        lib.impl(name, fn, \"CUDA\")\n")
	return map[string]string{"pkg/ops.py": b.String()}
}

// TestRowTable: every function of a literal table of more rows than
// guessCap is registered, and reaches the registration resolved, not as
// a guess the cap may turn away.
func TestRowTable(t *testing.T) {
	const n = guessCap + 40
	g := Analyze(projectOf(t, registryProject(n)), Options{})
	got := 0
	for fn := range g.Registered {
		if strings.HasPrefix(fn.Name, "_op") {
			got++
		}
	}
	if got != n {
		t.Errorf("%d of %d table functions registered (mixed nodes %d)", got, n, g.Mixed)
	}
}
