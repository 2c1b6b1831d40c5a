package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --exclude replaces the config's exclude, --extend-exclude and
// extend-exclude add to it, extend-select adds to a selection; an unknown
// config key gets a suggestion.
func TestExcludeAndExtendSelect(t *testing.T) {
	t.Chdir(t.TempDir())
	step := "import torch\n\n\ndef f(x):\n    return x.item()\n\n\ng = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    y = torch.nonzero(f(torch.ones(2)))\n"
	for _, p := range []string{"a/one.py", "b/two.py", "c/three.py"} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(step), 0o644)
	}
	files := func(args ...string) string {
		out, _, _, msg := runApp(t, append([]string{"check", "--no-cache", "--output-format", "concise"}, args...)...)
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if i := strings.Index(l, ".py:"); i > 0 {
				got = append(got, l[:i+3]+" "+strings.Fields(l)[1])
			}
		}
		return strings.Join(got, ",") + msg
	}
	os.WriteFile("capguard.toml", []byte("exclude = [\"a\"]\nextend-exclude = [\"b\"]\nselect = [\"CG104\"]\nextend-select = [\"CG101\"]\n"), 0o644)
	if got := files("."); got != "c/three.py CG101,c/three.py CG104" {
		t.Errorf("config: %s", got)
	}
	if got := files("--exclude", "c", "."); got != "a/one.py CG101,a/one.py CG104,b/two.py CG101,b/two.py CG104" {
		t.Errorf("--exclude c: %s", got)
	}
	if got := files("--extend-exclude", "c/three.py", "--select", "CG104", "."); got != "" {
		t.Errorf("--extend-exclude: %s", got)
	}
	if got := files("--select", "CG104", "--extend-select", "CG1", "--exclude", "a,b", "."); got != "c/three.py CG101,c/three.py CG104,c/three.py CG102" {
		t.Errorf("--extend-select: %s", got)
	}
	os.WriteFile("capguard.toml", []byte("extend_exclude = [\"a\"]\n"), 0o644)
	if _, _, code, msg := runApp(t, "check", "."); code != 2 || !strings.Contains(msg, "unknown setting extend_exclude (did you mean extend-exclude?)") {
		t.Errorf("exit %d: %s", code, msg)
	}
}
