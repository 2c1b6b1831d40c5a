package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileRunOrder: a run that names a file before its project's folder
// (as check FILE does) meets the files in the folder run's order, so the
// solve's caps keep the same values and the file's findings are the
// folder run's. Here 31 modules each register a one-function list into
// one registry a capture replays: past 24 containers a node widens, and
// which lists are widened follows the order. Solved first, the last
// module's `.item()` was a warning by name; solved last, as in the folder
// run, an error.
func TestFileRunOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pkg/__init__.py", "")
	write("pkg/registry.py", "import torch\n\nALL = []\n\n\ndef register(fns):\n    ALL.append(fns)\n    return fns\n\n\ndef replay_all(g, x):\n    with torch.cuda.graph(g):\n        for fns in ALL:\n            for f in fns:\n                f(x)\n")
	for i := 1; i <= 30; i++ {
		write(fmt.Sprintf("pkg/m_%02d.py", i), fmt.Sprintf("from pkg.registry import register\n\n\ndef step_%d(x):\n    return x * %d\n\n\nFNS = register([step_%d])\n", i, i, i))
	}
	last := filepath.Join(dir, "pkg", "z_last.py")
	write("pkg/z_last.py", "from pkg.registry import register\n\n\ndef step_last(x):\n    return x.item()\n\n\nFNS = register([step_last])\n")
	findings := func(paths ...string) string {
		t.Helper()
		res, err := Run(Options{Paths: paths, Config: &Config{}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range res.Diagnostics {
			if d.Path == last {
				out = append(out, fmt.Sprintf("%s:%d %s %s", filepath.Base(d.Path), d.Start.Line, d.Severity, d.Resolution))
			}
		}
		return strings.Join(out, "; ")
	}
	folder := findings(filepath.Join(dir, "pkg"))
	if folder == "" {
		t.Fatal("the folder run reports nothing in z_last.py: the test proves nothing")
	}
	for _, paths := range [][]string{
		{last, filepath.Join(dir, "pkg")},
		{filepath.Join(dir, "pkg", "m_01.py"), last, filepath.Join(dir, "pkg")},
	} {
		if got := findings(paths...); got != folder {
			t.Errorf("run of %v: %s, want the folder run's %s", paths, got, folder)
		}
	}
}
