package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every file of the project is indexed: a helper module with no torch or
// capture token that a captured call leads into is analysed, its syntax
// error reported like any file's, and Source gives the bytes every file was
// analysed from.
func TestWholeProjectIndex(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"pkg/__init__.py": "",
		"pkg/main.py":     "import torch\nfrom pkg.helper import step\n\n\ndef run(g, x):\n    with torch.cuda.graph(g):\n        step(x)\n",
		"pkg/helper.py":   "def step(x):\n    return x.item()\n\n\ndef broken(:\n    pass\n",
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(Options{Paths: []string{filepath.Join(dir, "pkg")}})
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "pkg", "helper.py")
	found := false
	for _, d := range res.Diagnostics {
		found = found || d.Path == helper && d.Rule.ID == "CG101"
	}
	if !found {
		t.Fatalf("no CG101 in helper.py: the captured call did not reach it (%d findings)", len(res.Diagnostics))
	}
	var msgs []string
	for _, e := range res.Errors {
		msgs = append(msgs, e.Path+": "+e.Message)
		if e.Path == helper && (!e.Syntax || !strings.HasPrefix(e.Message, "syntax error at line 5")) {
			t.Errorf("helper.py error %+v", e)
		}
	}
	if len(res.Errors) != 1 {
		t.Errorf("errors %q, want helper.py's syntax error", msgs)
	}
	if got := string(res.Source(helper)); got != files["pkg/helper.py"] {
		t.Errorf("Source(helper.py) = %q", got)
	}
	if res.Source(filepath.Join(dir, "pkg", "__init__.py")) == nil || res.Parsed != 3 {
		t.Errorf("parsed %d files, want all 3", res.Parsed)
	}
}
