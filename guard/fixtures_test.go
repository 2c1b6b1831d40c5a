package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// The fixtures test works as golang.org/x/tools/go/analysis/analysistest:
// each folder under testdata/ is one project, and every line that must
// produce findings says so inline, `# want: CG301 CG302`. A finding with no
// want, or a want with no finding, fails the test.

// A code with a trailing "?" (`# want: CG101?`) is a conditionally
// captured finding: a warning that names its condition. A trailing "~"
// (`# want: CG101~`) is an unproved one (the severity policy,
// severity.go): a warning that names what it assumed (library mode, a
// chain edge resolved by name or through the hierarchy, a value). A bare
// code is a proved finding: it keeps its rule's severity.
var wantRE = regexp.MustCompile(`#\s*want:\s*((?:CG[0-9]{3}[?~]?[\s,]*)+)`)

func wantsIn(t *testing.T, dir string) map[string]bool {
	t.Helper()
	want := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".py") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := wantRE.FindStringSubmatch(line); m != nil {
				for _, code := range regexp.MustCompile(`CG[0-9]{3}[?~]?`).FindAllString(m[1], -1) {
					want[fmt.Sprintf("%s:%d: %s", p, i+1, code)] = true
				}
			}
		}
		return nil
	})
	return want
}

func TestFixtures(t *testing.T) {
	for _, dir := range testenv.FixtureProjects(t, "../testdata") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			res, err := Run(Options{Paths: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors {
				t.Errorf("file error: %s: %s", e.Path, e.Message)
			}
			want := wantsIn(t, dir)
			got := map[string]*analysis.Diagnostic{}
			for _, d := range res.Diagnostics {
				code := d.Rule.ID
				if d.Condition != "" {
					code += "?"
					if d.Severity != analysis.SeverityWarning {
						t.Errorf("%s:%d: %s is conditional (%s) but a %s", d.Path, d.Start.Line, code, d.Condition, d.Severity)
					}
				} else if len(d.Assumes) > 0 {
					code += "~"
					if d.Severity != analysis.SeverityWarning {
						t.Errorf("%s:%d: %s assumes %v but is a %s", d.Path, d.Start.Line, code, d.Assumes, d.Severity)
					}
				} else if d.Rule.Severity == analysis.SeverityError && d.Severity != analysis.SeverityError {
					t.Errorf("%s:%d: %s is proved (no condition, no assumption) but a %s", d.Path, d.Start.Line, code, d.Severity)
				}
				got[fmt.Sprintf("%s:%d: %s", d.Path, d.Start.Line, code)] = d
			}
			var problems []string
			for k, d := range got {
				if !want[k] {
					problems = append(problems, fmt.Sprintf("unexpected finding %s %s [%s] chain %v", k, d.Message, d.Context, d.Chain))
				}
			}
			for k := range want {
				if got[k] == nil {
					problems = append(problems, "missing finding "+k)
				}
			}
			sort.Strings(problems)
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// TestDeterministic checks every fixture project many times: findings,
// messages, chains and fixes must not depend on Go's map order or on which
// worker parsed which file first. (A class attribute assigned in two
// methods once resolved by map order, and a fixture failed one run in six.)
func TestDeterministic(t *testing.T) {
	for _, dir := range testenv.FixtureProjects(t, "../testdata") {
		var first string
		for i := 0; i < 25; i++ {
			res, err := Run(Options{Paths: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, d := range res.Diagnostics {
				fmt.Fprintf(&b, "%s:%d:%d %s %s %v %s %v\n", d.Path, d.Start.Line, d.Start.Column, d.Rule.ID, d.Message, d.Chain, d.Context, d.Severity)
				if d.Fix != nil {
					fmt.Fprintf(&b, "  fix %v %+v\n", d.Fix.Applicability, d.Fix.Edits)
				}
			}
			if i == 0 {
				first = b.String()
			} else if b.String() != first {
				t.Fatalf("%s: run %d differs from run 1:\n%s\nvs\n%s", dir, i+1, b.String(), first)
			}
		}
	}
}
