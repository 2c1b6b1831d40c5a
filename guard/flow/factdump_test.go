package flow

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dumpOf solves the project of files and returns its fact dump's lines.
func dumpOf(t *testing.T, files map[string]string) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "facts.txt")
	Analyze(projectOf(t, files), Options{FactDump: path})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// linesOf are the dump's lines that name module mod's code (a key of its
// functions, sites or classes) anywhere.
func linesOf(lines []string, mod string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, "\t"+mod+".") || strings.Contains(l, ":"+mod+".") || strings.Contains(l, "@"+mod+".") {
			out = append(out, l)
		}
	}
	return out
}

const dumpA = `
class Runner:
    def step(self, x):
        return x

def make():
    return Runner()

def go():
    r = make()
    return r.step(1)
`

const dumpB = `
class Table:
    def __init__(self):
        self.rows = []

    def add(self, row):
        self.rows.append(row)

def fill(rows):
    t = Table()
    for r in rows:
        t.add(r)
    return t
`

// The dump names code, not memory: the same project solved twice gives
// the same lines, every key resolves (no "?" for a site or function the
// keys missed), and an edit inside one module's function leaves every
// line of a module it does not reach as it was, while the edited
// module's lines change where the edit changed the solve (a call edge
// and the facts behind it).
func TestFactDumpNamesCode(t *testing.T) {
	files := map[string]string{"a.py": dumpA, "b.py": dumpB}
	one, two := dumpOf(t, files), dumpOf(t, files)
	if !slices.IsSorted(one) || len(slices.Compact(slices.Clone(one))) != len(one) {
		t.Errorf("the dump's lines are not sorted and unique:\n%s", strings.Join(one, "\n"))
	}
	if !slices.Equal(one, two) {
		t.Fatalf("two solves of one project dump differently:\n%s\n--\n%s", strings.Join(one, "\n"), strings.Join(two, "\n"))
	}
	for _, l := range one {
		if strings.Contains(l, "?") {
			t.Errorf("a key the dump could not name: %q", l)
		}
	}
	var calls int
	for _, l := range one {
		if strings.HasPrefix(l, "C\t") && strings.Contains(l, "a.Runner.step") {
			calls++
		}
	}
	if calls != 1 {
		t.Fatalf("want one call edge to a.Runner.step, got %d in\n%s", calls, strings.Join(one, "\n"))
	}
	if len(linesOf(one, "b")) == 0 {
		t.Fatalf("no line of b.py's code in\n%s", strings.Join(one, "\n"))
	}

	// go() no longer calls step: a statement before it moves the ordinals
	// of go's own nodes, and the call edge goes.
	edited := strings.Replace(dumpA, "    return r.step(1)", "    y = 2\n    return y", 1)
	after := dumpOf(t, map[string]string{"a.py": edited, "b.py": dumpB})
	if !slices.Equal(linesOf(after, "b"), linesOf(one, "b")) {
		t.Errorf("an edit of a.py changed b.py's lines:\nbefore\n%s\nafter\n%s", strings.Join(linesOf(one, "b"), "\n"), strings.Join(linesOf(after, "b"), "\n"))
	}
	for _, l := range after {
		if strings.HasPrefix(l, "C\t") && strings.Contains(l, "a.Runner.step") {
			t.Errorf("the call edge the edit removed is still dumped: %q", l)
		}
	}
	// Only a.go's lines changed: make, Runner and step's own lines stay.
	for _, l := range linesOf(one, "a") {
		if strings.Contains(l, "a.go") || strings.Contains(l, "a.Runner.step") && strings.HasPrefix(l, "C\t") {
			continue
		}
		if !slices.Contains(after, l) && !strings.Contains(l, "a.Runner.step") {
			t.Errorf("a line outside the edited function changed: %q", l)
		}
	}
}
