package guard

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// Walking a folder and naming its files must give the same output (DESIGN.md,
// "Context model (v2)", item 1: the prefilter only skips work that cannot
// change the result). For every fixture project, Run and BuildGraph with
// Paths [dir] and with Paths [every .py file under dir, sorted] must agree on
// every finding (path, position, rule, message, context, function, chain,
// resolution, severity, fix with its edits) and every file error, and on
// the whole graph.

// pyFilesUnder lists the .py files under dir, sorted, as a walk of dir
// names them (filepath.Join(dir, rel)); hidden folders and __pycache__ are
// left out, as capguard's walk leaves them.
func pyFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".py") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatalf("%s: no Python files", dir)
	}
	return out
}

// describeRun renders a run's findings and file errors, one per line, with
// everything the comparison covers.
func describeRun(res *Result) []string {
	var out []string
	for _, d := range res.Diagnostics {
		s := fmt.Sprintf("%s:%d:%d-%d:%d (%d-%d) %s %s | %s | %s | fn=%q chain=%q resolution=%q",
			d.Path, d.Start.Line, d.Start.Column, d.End.Line, d.End.Column, d.Start.Offset, d.End.Offset,
			d.Rule.ID, d.Severity, d.Message, d.Context, d.Function, d.Chain, d.Resolution)
		if d.Fix != nil {
			s += fmt.Sprintf(" fix=%q %s helper=%v edits=%+v", d.Fix.Message, d.Fix.Applicability, d.Fix.NeedsHelper, d.Fix.Edits)
		}
		out = append(out, s)
	}
	for _, e := range res.Errors {
		out = append(out, fmt.Sprintf("error %s: %s (syntax %v)", e.Path, e.Message, e.Syntax))
	}
	return out
}

// diffLines reports the lines only one side has, in order.
func diffLines(walked, named []string) string {
	count := map[string]int{}
	for _, l := range walked {
		count[l]++
	}
	for _, l := range named {
		count[l]--
	}
	var b strings.Builder
	for _, l := range walked {
		if count[l] > 0 {
			fmt.Fprintf(&b, "  only walking the folder: %s\n", l)
		}
	}
	for _, l := range named {
		if count[l] < 0 {
			fmt.Fprintf(&b, "  only naming the files:   %s\n", l)
		}
	}
	if b.Len() == 0 {
		b.WriteString("  (the same lines in another order)\n")
	}
	return b.String()
}

func TestWalkEqualsNamedFiles(t *testing.T) {
	for _, dir := range testenv.FixtureProjects(t, "../testdata") {
		name, _ := filepath.Rel("../testdata", dir)
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			files := pyFilesUnder(t, dir)
			walked, err := Run(Options{Paths: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			named, err := Run(Options{Paths: files})
			if err != nil {
				t.Fatal(err)
			}
			w, n := describeRun(walked), describeRun(named)
			if strings.Join(w, "\n") != strings.Join(n, "\n") {
				t.Errorf("Run over the folder and over its %d files differ:\n%s", len(files), diffLines(w, n))
			}
			if walked.Files != named.Files {
				t.Errorf("files checked: %d walking the folder, %d naming them", walked.Files, named.Files)
			}
		})
	}
}

func TestWalkEqualsNamedFilesGraph(t *testing.T) {
	for _, dir := range testenv.FixtureProjects(t, "../testdata") {
		name, _ := filepath.Rel("../testdata", dir)
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			files := pyFilesUnder(t, dir)
			walked, err := BuildGraph(Options{Paths: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			named, err := BuildGraph(Options{Paths: files})
			if err != nil {
				t.Fatal(err)
			}
			w, n := describeGraph(t, walked), describeGraph(t, named)
			if strings.Join(w, "\n") != strings.Join(n, "\n") {
				t.Errorf("BuildGraph over the folder and over its %d files differ:\n%s", len(files), diffLines(w, n))
			}
		})
	}
}

// describeGraph renders a graph one function (as JSON, every field) or file
// error (with its Syntax flag, which JSON leaves out) a line.
func describeGraph(t *testing.T, g *GraphResult) []string {
	t.Helper()
	out := []string{fmt.Sprintf("version %d", g.Version)}
	for _, f := range g.Functions {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	for _, e := range g.Errors {
		out = append(out, fmt.Sprintf("error %s: %s (syntax %v)", e.Path, e.Message, e.Syntax))
	}
	return out
}
