package flow

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

func projectOf(tb testing.TB, files map[string]string) *index.Project {
	tb.Helper()
	return projectAt(tb, "/widen", files)
}

// projectAt indexes files (path to source) as a project rooted at root.
func projectAt(tb testing.TB, root string, files map[string]string) *index.Project {
	tb.Helper()
	var ifiles []*index.File
	for p, src := range files {
		tree, err := syntax.Parse([]byte(src))
		if err != nil {
			tb.Fatal(err)
		}
		abs := filepath.Join(root, p)
		ifiles = append(ifiles, index.NewFile(p, abs, index.ModuleName(abs, root), []byte(src), tree))
	}
	return index.NewProject(ifiles)
}

func callees(g *Graph, caller string) []string {
	var out []string
	for f, es := range g.Out {
		if f.FullName() == caller {
			for _, e := range es {
				out = append(out, e.Callee.FullName())
			}
		}
	}
	return out
}

// A parameter that many call sites pass containers to widens to the
// summary container; reads through it still see every element, and an
// append through it reaches the container's other holders.
func TestWideningKeepsEveryEdge(t *testing.T) {
	// contCap*2 lists: more than a node holds before it widens, and fewer
	// elements than guessCap in the summary (past that, the summary is a
	// mix: TestMixedSummaryMakesNoGuessedEdge).
	n := contCap * 2
	g := Analyze(projectOf(t, map[string]string{"m.py": widenSource(n)}), Options{})
	got := strings.Join(callees(g, "m.sink"), " ")
	for i := 0; i < n; i++ {
		if !strings.Contains(got, fmt.Sprintf("m.f%d", i)) {
			t.Errorf("sink does not call m.f%d (callees %s)", i, got)
		}
	}
	// call<i>'s own list gets `late` through the widened parameter.
	for _, i := range []int{0, n / 2, n - 1} {
		c := strings.Join(callees(g, fmt.Sprintf("m.call%d", i)), " ")
		if !strings.Contains(c, "m.late") || !strings.Contains(c, fmt.Sprintf("m.f%d", i)) {
			t.Errorf("call%d calls %s, want m.f%d and m.late", i, c, i)
		}
	}
}

// widenSource is a module whose sink takes n one-function lists.
func widenSource(n int) string {
	var b strings.Builder
	b.WriteString("def sink(xs):\n    for f in xs:\n        f()\n    xs.append(late)\n\n\ndef late():\n    pass\n\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "def f%d():\n    pass\n\n\ndef call%d():\n    xs = [f%d]\n    sink(xs)\n    for g in xs:\n        g()\n\n\n", i, i, i)
	}
	return b.String()
}

// Past guessCap elements the summary container is a mix (mixed.go): what
// it passes on by name is some of many, so the call through it makes no
// edge by name and says why, where it made edges to the first guessCap
// elements to arrive (an accident of the solve's order). The calls of the
// functions that reach the sink at full strength (the first contCap lists)
// stay.
func TestMixedSummaryMakesNoGuessedEdge(t *testing.T) {
	g := Analyze(projectOf(t, map[string]string{"m.py": widenSource(contCap * 3)}), Options{})
	var byName, full []string
	var site *syntax.Node
	for f, es := range g.Out {
		if f.FullName() != "m.sink" {
			continue
		}
		for _, e := range es {
			site = e.Site
			if e.Kind == ByName {
				byName = append(byName, e.Callee.FullName())
			} else {
				full = append(full, e.Callee.FullName())
			}
		}
	}
	if len(byName) > 0 {
		t.Errorf("sink calls %d functions by name through the mixed summary: %v", len(byName), byName)
	}
	if len(full) < contCap {
		t.Errorf("sink calls %d functions at full strength, want at least %d: %v", len(full), contCap, full)
	}
	if site == nil || !strings.Contains(g.Dropped[site], "mix of values") {
		t.Errorf("the call through the summary has no reason for its dropped guesses: %q", g.Dropped[site])
	}
}
