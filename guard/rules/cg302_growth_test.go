package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// TestClaimFindingsLinear: CG302 over a file of n functions that claim
// capture safety, each with a nested def and a finding in each, examines a
// number of functions linear in n (it looked up the innermost def of each
// finding by a scan of the file's functions), and gives each claim its own
// finding, not the nested def's.
func TestClaimFindingsLinear(t *testing.T) {
	run := func(n int) (int64, int) {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "def f%d(x):\n    \"\"\"Capture-safe.\"\"\"\n    def inner():\n        return x.item()\n    return x.item()\n\n\n", i)
		}
		src := []byte(b.String())
		tree, err := syntax.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		f := index.NewFile("m.py", "/m.py", "m", src, tree)
		a := &analysis.Analysis{Proj: &analysis.Project{Files: []*analysis.File{f}}, Claims: map[*analysis.Function]*analysis.Node{}}
		var diags []*Diagnostic
		for _, fn := range f.Funcs {
			if fn.Outer != nil && fn.Outer.Kind == index.Def {
				continue // inner: no claim; its finding is its own
			}
			a.Claims[fn] = fn.Docstring
			for _, g := range f.Funcs {
				if g == fn || g.Outer == fn {
					// One finding in each def's own body: the last statement.
					st := g.BodyStmts()
					x := st[len(st)-1]
					id := "CG101"
					if g != fn {
						id = "CG103"
					}
					diags = append(diags, &Diagnostic{Rule: &Rule{ID: id}, Path: "m.py",
						Start: analysis.PosOf(f, int(x.Start)), End: analysis.PosOf(f, int(x.End))})
				}
			}
		}
		before := claimSteps.Load()
		out := claimFindings(a, diags)
		for _, d := range out {
			if !strings.Contains(d.Message, "[CG101]") {
				t.Fatalf("%s: the nested def's finding counted for the claim", d.Message)
			}
		}
		return claimSteps.Load() - before, len(out)
	}
	s1, n1 := run(1000)
	s2, n2 := run(2000)
	if n1 != 1000 || n2 != 2000 {
		t.Errorf("%d and %d CG302 findings, want one a claim (1000, 2000)", n1, n2)
	}
	if s1 == 0 || float64(s2)/float64(s1) > 2.2 {
		t.Errorf("examined %d functions for 1000 claims, %d for 2000", s1, s2)
	}
}
