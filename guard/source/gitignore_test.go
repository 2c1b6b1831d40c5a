package source

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The walk reads .gitignore as git does: the repository root's file
// applies to a walk of a subfolder, a nested file, .git/info/exclude, the
// last match wins (a negation re-includes); without git the .gitignore
// files above the walked folder still apply.
func TestGitignoreAsGitReadsIt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	files := map[string]string{
		".gitignore":              "src/pkg/gen/\n*_pb2.py\n",
		"src/pkg/.gitignore":      "local_*.py\n!local_keep.py\n",
		".git/info/exclude":       "scratch.py\n",
		"src/pkg/a.py":            "",
		"src/pkg/gen/b.py":        "",
		"src/pkg/msg_pb2.py":      "",
		"src/pkg/local_x.py":      "",
		"src/pkg/local_keep.py":   "",
		"src/pkg/scratch.py":      "",
		"src/pkg/sub/__init__.py": "",
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := "src/pkg/a.py src/pkg/local_keep.py src/pkg/sub/__init__.py"
	list := func() string {
		got, errs := Discover([]string{filepath.Join(dir, "src")}, &Config{})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var rel []string
		for _, p := range got {
			r, _ := filepath.Rel(dir, p)
			rel = append(rel, filepath.ToSlash(r))
		}
		sort.Strings(rel)
		return strings.Join(rel, " ")
	}
	if got := list(); got != want {
		t.Errorf("with git: %s\nwant %s", got, want)
	}
	// Without git: the .gitignore files (the root's included) still
	// apply; .git/info/exclude is git's own and is not read.
	t.Setenv("CAPGUARD_NO_GIT", "1")
	if got := list(); got != "src/pkg/a.py src/pkg/local_keep.py src/pkg/scratch.py src/pkg/sub/__init__.py" {
		t.Errorf("without git: %s", got)
	}
}
