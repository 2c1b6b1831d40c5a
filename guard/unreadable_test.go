package guard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// Unreadable files and folders get an error naming them, and the rest is
// checked. Permission bits do not stop root, and CI runs as root: there
// the test re-runs itself as the unprivileged user nobody, so the
// permission check is real either way.
func TestUnreadable(t *testing.T) {
	base, err := os.MkdirTemp("", "capguard-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			os.Chmod(p, 0o755)
			return nil
		})
		os.RemoveAll(base)
	})
	dir := filepath.Join(base, "proj")
	good := "import torch\n\ndef f(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()\n"
	for name, mode := range map[string]os.FileMode{"ok.py": 0o644, "secret.py": 0o000, "locked/inner.py": 0o644} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(good), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{base, dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "locked"), 0o000); err != nil {
		t.Fatal(err)
	}

	var res unreadableResult
	if os.Geteuid() != 0 {
		res = runUnreadable(t, dir)
	} else {
		out := testenv.AsNobody(t, base, "TestUnreadableHelper", "CAPGUARD_UNREADABLE_DIR="+dir)
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("helper output %q: %v", out, err)
		}
	}
	for name, want := range map[string]string{"secret.py": "permission denied", "locked": "permission denied"} {
		if !strings.Contains(res.Errors[name], want) {
			t.Errorf("%s: error %q, want %q (all: %v)", name, res.Errors[name], want, res.Errors)
		}
	}
	if res.Findings["ok.py"] == 0 {
		t.Errorf("ok.py not checked: findings %v", res.Findings)
	}
}

type unreadableResult struct {
	Errors   map[string]string // base name -> message
	Findings map[string]int
}

func runUnreadable(t *testing.T, dir string) unreadableResult {
	r, err := Run(Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	out := unreadableResult{Errors: map[string]string{}, Findings: map[string]int{}}
	for _, e := range r.Errors {
		out.Errors[filepath.Base(e.Path)] = e.Message
	}
	for _, d := range r.Diagnostics {
		out.Findings[filepath.Base(d.Path)]++
	}
	return out
}

// TestUnreadableHelper is TestUnreadable's unprivileged half.
func TestUnreadableHelper(t *testing.T) {
	dir, ok := testenv.IsHelper(t, "CAPGUARD_UNREADABLE_DIR")
	if !ok {
		t.Skip("run by TestUnreadable")
	}
	b, _ := json.Marshal(runUnreadable(t, dir))
	testenv.Result(string(b))
}
