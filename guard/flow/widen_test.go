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
	var b strings.Builder
	b.WriteString("def sink(xs):\n    for f in xs:\n        f()\n    xs.append(late)\n\n\ndef late():\n    pass\n\n\n")
	n := contCap * 3
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "def f%d():\n    pass\n\n\ndef call%d():\n    xs = [f%d]\n    sink(xs)\n    for g in xs:\n        g()\n\n\n", i, i, i)
	}
	g := Analyze(projectOf(t, map[string]string{"m.py": b.String()}), Options{})
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
