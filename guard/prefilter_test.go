package guard

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLexImports(t *testing.T) {
	src := []byte(`import torch, numpy as np
import a.b.c as d
from . import sibling
from ..pkg.mod import (
    f,
    g as h,
)
from x import \
    y
    # from indented import inside  (a comment: its words are still taken)
def f():
    from .inner import z  # trailing comment
`)
	got := lexImports(src)
	want := []importRef{
		{module: "torch"}, {module: "numpy"}, {module: "a.b.c"},
		{module: "", level: 1, names: []string{"sibling"}},
		{module: "pkg.mod", level: 2, names: []string{"f", "g"}},
		{module: "x", names: []string{"y"}},
		{module: "inner", level: 1, names: []string{"z"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lexImports:\n got %+v\nwant %+v", got, want)
	}
}

func FuzzLexImports(f *testing.F) {
	f.Add([]byte("from . import (a,\n b)\nimport x.y as z\n"))
	f.Add([]byte("from\\\n x import y"))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, r := range lexImports(src) {
			if r.level < 0 || r.module == "" && r.level == 0 && len(r.names) == 0 {
				t.Fatalf("bad ref %+v", r)
			}
		}
	})
}

// The prefilter parses the import-connected group of a capture and leaves
// out an unrelated group: the helper the captured step imports is checked
// (its .item() found), the unconnected module with a syntax error is not
// analysed when a folder is walked (its syntax error is reported), and naming the files gives the same
// findings (a named file is parsed, so its syntax error is reported).
func TestPrefilterGroups(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"eng/__init__.py": "",
		"eng/step.py":     "import torch\nfrom eng.util import read\n\n\ndef run(g, x):\n    with torch.cuda.graph(g):\n        read(x)\n",
		"eng/util.py":     "def read(x):\n    return x.sum().item()\n",
		"tools/report.py": "def broken(:\n    pass\n",
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 4 || res.Parsed != 3 {
		t.Errorf("files %d parsed %d, want 4 and 3 (tools/report.py is unconnected)", res.Files, res.Parsed)
	}
	// It is not analysed, but its syntax error is still reported.
	if len(res.Errors) != 1 || !res.Errors[0].Syntax || !strings.Contains(res.Errors[0].Message, "line 1, column 12") {
		t.Errorf("errors %v: want the unconnected file's syntax error", res.Errors)
	}
	found := false
	for _, d := range res.Diagnostics {
		found = found || d.Rule.ID == "CG101" && filepath.Base(d.Path) == "util.py"
	}
	if !found {
		t.Error("the imported helper was not checked")
	}
	var named []string
	for name := range files {
		named = append(named, filepath.Join(dir, name))
	}
	res2, err := Run(Options{Paths: named})
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Diagnostics) != len(res.Diagnostics) || res2.Parsed != 4 || len(res2.Errors) != 1 {
		t.Errorf("named files: parsed %d findings %d errors %v; walked: %d %d", res2.Parsed, len(res2.Diagnostics), res2.Errors, res.Parsed, len(res.Diagnostics))
	}
	// capguard graph parses everything.
	g, err := BuildGraph(Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Errors) != 1 {
		t.Errorf("graph: %d errors, want the syntax error of tools/report.py", len(g.Errors))
	}
}
