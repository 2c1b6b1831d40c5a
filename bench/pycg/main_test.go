package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeSnippet makes snippets/<name>/ with the files given (path -> text).
func writeSnippet(t *testing.T, root, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(name))
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeTool answers each snippet (by its folder's base name) with a fixed
// capguard graph document.
func fakeTool(docs map[string]string) Tool {
	return func(dir string) (*ToolOutput, error) {
		return ParseCapguard([]byte(docs[filepath.Base(dir)]))
	}
}

// TestScoreSnippets checks the scorer on two hand-made snippets: hits,
// misses and extras between snippet functions; builtin and external edges
// not scored; a capguard name outside the snippet (a package prefix)
// unscoreable; lambdas renumbered PyCG's way by line, and same-line lambdas
// unscoreable; a root __init__.py module unscoreable.
func TestScoreSnippets(t *testing.T) {
	root := t.TempDir()
	writeSnippet(t, root, "cat/one", map[string]string{
		"main.py":          "",
		"pkg/__init__.py":  "",
		"pkg/mod.py":       "",
		"callgraph.json":   `{"main": ["main.f", "pkg.mod.g", "<builtin>.len", "main.<lambda1>", "main.<lambda2>"], "main.f": ["ext.h", "main.f"], "pkg.mod.g": [], "main.<lambda1>": [], "main.<lambda2>": ["main.f"]}`,
		"unrelated.txt":    "",
		"pkg/sub/other.py": "",
	})
	writeSnippet(t, root, "cat/two", map[string]string{
		"__init__.py":    "",
		"main.py":        "",
		"callgraph.json": `{"main": ["main.<lambda1>", "main.<lambda2>"], "main.<lambda1>": [], "main.<lambda2>": []}`,
	})
	docs := map[string]string{
		// Lambdas named "<lambda@LINE>" on distinct lines: renumbered.
		"one": `{"version": 1, "functions": [
			{"name": "main", "path": "main.py", "line": 1, "calls": ["main.f", "main.<lambda@7>", "main.<lambda@3>", "main.unknown"]},
			{"name": "main.f", "path": "main.py", "line": 2, "calls": ["main.f", "pkg.mod.g"]},
			{"name": "main.<lambda@3>", "path": "main.py", "line": 3, "calls": []},
			{"name": "main.<lambda@7>", "path": "main.py", "line": 7, "calls": ["main.f"]},
			{"name": "one.main.f", "path": "main.py", "line": 2, "calls": ["main.f"]}]}`,
		// Two lambdas on one line: cannot be numbered.
		"two": `{"version": 1, "functions": [
			{"name": "main", "path": "main.py", "line": 1, "calls": ["main.<lambda>:1:5", "main.<lambda>:1:20"]},
			{"name": "main.<lambda>:1:5", "path": "main.py", "line": 1, "calls": []},
			{"name": "main.<lambda>:1:20", "path": "main.py", "line": 1, "calls": []},
			{"name": "__init__", "path": "__init__.py", "line": 1, "calls": ["main"]}],
			"errors": [{"path": "main.py", "message": "syntax error"}]}`,
	}
	rep, err := Score(root, fakeTool(docs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Snippets) != 2 || rep.Failed != 0 {
		t.Fatalf("snippets %d, failed %d", len(rep.Snippets), rep.Failed)
	}
	one, two := rep.Snippets[0], rep.Snippets[1]
	if want := []string{"main", "pkg", "pkg.mod", "pkg.sub.other"}; !reflect.DeepEqual(one.Modules, want) {
		t.Errorf("modules %v, want %v", one.Modules, want)
	}
	str := func(es []Edge) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.String())
		}
		return out
	}
	check := func(what string, got []Edge, want ...string) {
		t.Helper()
		if !reflect.DeepEqual(str(got), want) {
			t.Errorf("%s: got %q, want %q", what, str(got), want)
		}
	}
	check("one hits", one.Hits, "main -> main.<lambda1>", "main -> main.<lambda2>", "main -> main.f", "main.<lambda2> -> main.f", "main.f -> main.f")
	check("one missed", one.Missed, "main -> pkg.mod.g")
	check("one extra", one.Extra, "main -> main.unknown", "main.f -> pkg.mod.g")
	if len(one.NotScored) != 2 || one.NotScored[Edge{"main", "<builtin>.len"}] == "" || one.NotScored[Edge{"main.f", "ext.h"}] == "" {
		t.Errorf("one not scored: %v", one.NotScored)
	}
	if len(one.Unscoreable) != 1 || !strings.Contains(one.Unscoreable[Edge{"one.main.f", "main.f"}], "naming difference") {
		t.Errorf("one unscoreable: %v", one.Unscoreable)
	}
	check("two hits", two.Hits)
	check("two missed", two.Missed, "main -> main.<lambda1>", "main -> main.<lambda2>")
	if len(two.Unscoreable) != 3 || !strings.Contains(two.Unscoreable[Edge{"main", "main.<lambda>:1:5"}], "share a line") ||
		!strings.Contains(two.Unscoreable[Edge{"__init__", "main"}], "root's __init__.py") {
		t.Errorf("two unscoreable: %v", two.Unscoreable)
	}
	if len(two.Notes) != 1 {
		t.Errorf("two notes: %v", two.Notes)
	}
	c := rep.Total
	if c.Truth != 8 || c.Ours != 7 || c.Hits != 5 || c.NotScored != 2 || c.Unscoreable != 4 {
		t.Errorf("totals %+v", c)
	}
	if p, r := c.Precision(), c.Recall(); p != 5.0/7 || r != 5.0/8 {
		t.Errorf("precision %v recall %v", p, r)
	}
	var b bytes.Buffer
	rep.Print(&b, true)
	for _, want := range []string{"- missed      main -> pkg.mod.g", "+ extra       main -> main.unknown", "? unscoreable", ". not scored  main -> <builtin>.len", "all "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// TestParseCapguardRejects: a document that is not version 1 JSON is a tool
// failure, not an empty graph.
func TestParseCapguardRejects(t *testing.T) {
	for _, doc := range []string{"", "capguard graph: not built yet", `{"version": 2, "functions": []}`} {
		if _, err := ParseCapguard([]byte(doc)); err == nil {
			t.Errorf("%q: accepted", doc)
		}
	}
}

// TestSplitName keeps PyCG's bracketed names whole.
func TestSplitName(t *testing.T) {
	for in, want := range map[string][]string{
		"main.A.func":           {"main", "A", "func"},
		"<**PyStr**>.join":      {"<**PyStr**>", "join"},
		"main.func.<lambda1>":   {"main", "func", "<lambda1>"},
		"main.<lambda>:1:5.<x>": {"main", "<lambda>:1:5", "<x>"},
	} {
		if got := splitName(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPyCGMicroBenchmark scores capguard's call graph on the PyCG
// micro-benchmark when CAPGUARD_PYCG names a PyCG checkout (or its
// snippets folder); it skips otherwise. The bar: precision at least 0.99
// and recall at least 0.95 over the edges between snippet functions
// (PyCG itself: 97.9% and 94.2%, `go run ./bench/pycg -pycg`). Edges the
// scorer cannot compare (unscoreable names) count against precision here,
// so that naming differences cannot raise it.
func TestPyCGMicroBenchmark(t *testing.T) {
	root := os.Getenv("CAPGUARD_PYCG")
	if root == "" {
		t.Skip("CAPGUARD_PYCG is not set (a PyCG checkout)")
	}
	snippets, err := SnippetsDir(root)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "capguard")
	build := exec.Command("go", "build", "-o", bin, "github.com/cudagraph-capguard/capguard/cli/capguard")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rep, err := Score(snippets, CapguardTool(bin, 2*time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.Print(&b, true)
	t.Log("\n" + b.String())
	c := rep.Total
	if rep.Failed > 0 {
		t.Errorf("capguard graph failed on %d of %d snippets", rep.Failed, c.Snippets)
	}
	strict := 1.0
	if c.Ours+c.Unscoreable > 0 {
		strict = float64(c.Hits) / float64(c.Ours+c.Unscoreable)
	}
	if strict < 0.99 {
		t.Errorf("precision %.1f%% (%d hits / %d edges + %d unscoreable), want at least 99%%", 100*strict, c.Hits, c.Ours, c.Unscoreable)
	}
	if c.Recall() < 0.95 {
		t.Errorf("recall %.1f%% (%d hits / %d truth edges), want at least 95%%", 100*c.Recall(), c.Hits, c.Truth)
	}
}
