package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// The fixtures test works as golang.org/x/tools/go/analysis/analysistest:
// each folder under testdata/ is one project, and every line that must
// produce findings says so inline, `# want: CG301 CG302`. A finding with no
// want, or a want with no finding, fails the test.

// A code with a trailing "?" (`# want: CG101?`) is a conditionally
// captured finding: a warning that names its condition. A trailing "~"
// (`# want: CG101~`) is an unproved one (the severity policy,
// guard/analysis/severity.go): a warning that names what it assumed (library mode, a
// chain edge resolved by name or through the hierarchy, a value). A bare
// code is a proved finding: it keeps its rule's severity.
//
// A code may also say what its fix must be and what its message must say:
// `# want: CG201[unsafe] "binds a new tensor"` wants a CG201 whose fix is
// unsafe and whose message holds the quoted text. The applicability is
// safe, unsafe, display-only or none (no fix); either part may be left out.
var wantRE = regexp.MustCompile(`#\s*want:\s*((?:` + wantCode + `[\s,]*)+)`)

const wantCode = `CG[0-9]{3}[?~]?(?:\[[a-z-]+\])?(?:\s*"[^"]*")?`

var wantCodeRE = regexp.MustCompile(`(CG[0-9]{3}[?~]?)(?:\[([a-z-]+)\])?(?:\s*"([^"]*)")?`)

// want is what one `# want:` code asks of the finding at its line.
type want struct {
	applicability string // "" (anything), "none", or a fix's Applicability
	message       string // a substring of the message, or ""
}

// check returns what d lacks of w, or "".
func (w want) check(d *Diagnostic) string {
	var miss []string
	switch {
	case w.applicability == "":
	case w.applicability == "none" && d.Fix != nil:
		miss = append(miss, fmt.Sprintf("a %s fix, want none", d.Fix.Applicability))
	case w.applicability != "none" && d.Fix == nil:
		miss = append(miss, "no fix, want a "+w.applicability+" one")
	case w.applicability != "none" && string(d.Fix.Applicability) != w.applicability:
		miss = append(miss, fmt.Sprintf("a %s fix, want %s", d.Fix.Applicability, w.applicability))
	}
	if w.message != "" && !strings.Contains(d.Message, w.message) {
		miss = append(miss, fmt.Sprintf("message %q does not say %q", d.Message, w.message))
	}
	return strings.Join(miss, "; ")
}

func wantsIn(t *testing.T, dir string) map[string]want {
	t.Helper()
	wants := map[string]want{}
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
				for _, c := range wantCodeRE.FindAllStringSubmatch(m[1], -1) {
					switch c[2] {
					case "", "none", string(Safe), string(Unsafe), string(DisplayOnly):
					default:
						t.Errorf("%s:%d: want %s[%s]: no such applicability", p, i+1, c[1], c[2])
					}
					wants[fmt.Sprintf("%s:%d: %s", p, i+1, c[1])] = want{applicability: c[2], message: c[3]}
				}
			}
		}
		return nil
	})
	return wants
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
			wants := wantsIn(t, dir)
			got := map[string]*Diagnostic{}
			for _, d := range res.Diagnostics {
				code := d.Rule.ID
				if d.Condition != "" {
					code += "?"
					if d.Severity != SeverityWarning {
						t.Errorf("%s:%d: %s is conditional (%s) but a %s", d.Path, d.Start.Line, code, d.Condition, d.Severity)
					}
				} else if len(d.Assumes) > 0 {
					code += "~"
					if d.Severity != SeverityWarning {
						t.Errorf("%s:%d: %s assumes %v but is a %s", d.Path, d.Start.Line, code, d.Assumes, d.Severity)
					}
				} else if d.Rule.Severity == SeverityError && d.Severity != SeverityError {
					t.Errorf("%s:%d: %s is proved (no condition, no assumption) but a %s", d.Path, d.Start.Line, code, d.Severity)
				}
				got[fmt.Sprintf("%s:%d: %s", d.Path, d.Start.Line, code)] = d
			}
			var problems []string
			for k, d := range got {
				w, ok := wants[k]
				if !ok {
					problems = append(problems, fmt.Sprintf("unexpected finding %s %s [%s] chain %v", k, d.Message, d.Context, d.Chain))
				} else if miss := w.check(d); miss != "" {
					problems = append(problems, fmt.Sprintf("finding %s: %s", k, miss))
				}
			}
			for k := range wants {
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

// findingsText is a run's findings, one a line, with their messages,
// chains, contexts, severities and fixes: what two runs that must agree
// are compared by.
func findingsText(res *Result) string {
	var b strings.Builder
	for _, d := range res.Diagnostics {
		fmt.Fprintf(&b, "%s:%d:%d %s %s %v %s %v\n", d.Path, d.Start.Line, d.Start.Column, d.Rule.ID, d.Message, d.Chain, d.Context, d.Severity)
		if d.Fix != nil {
			fmt.Fprintf(&b, "  fix %v %+v\n", d.Fix.Applicability, d.Fix.Edits)
		}
	}
	return b.String()
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
			text := findingsText(res)
			if i == 0 {
				first = text
			} else if text != first {
				t.Fatalf("%s: run %d differs from run 1:\n%s\nvs\n%s", dir, i+1, text, first)
			}
		}
	}
}
