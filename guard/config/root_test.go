package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModuleRoot: the config's folder when it holds the paths; else the
// folder holding every path's top package, the same for a folder and for
// files named in it.
func TestModuleRoot(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"repo/pkg/__init__.py", "repo/pkg/sub/__init__.py", "repo/pkg/sub/m.py",
		"repo/scripts/run.py", "repo/src/lib/__init__.py", "repo/src/lib/k.py", "other/x.py"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	at := func(f string) string { return filepath.Join(dir, f) }
	for _, c := range []struct {
		paths []string
		cfg   *Config
		want  string
	}{
		{[]string{at("repo/pkg")}, nil, "repo"},
		{[]string{at("repo/pkg/sub/m.py")}, nil, "repo"},
		{[]string{at("repo")}, nil, "repo"},
		{[]string{at("repo/src")}, nil, "repo/src"},
		{[]string{at("repo/src/lib/k.py"), at("repo/pkg/sub/m.py")}, nil, "repo"},
		{[]string{at("repo/scripts/run.py"), at("repo/pkg/sub/m.py")}, nil, "repo"},
		{[]string{at("repo/src/lib")}, &Config{Path: at("repo/pyproject.toml")}, "repo"},
		{[]string{at("repo/pkg")}, &Config{Path: at("other/capguard.toml")}, "repo"},
	} {
		if got := ModuleRoot(c.paths, c.cfg); got != at(c.want) {
			t.Errorf("ModuleRoot(%v, %v) = %s, want %s", c.paths, c.cfg, got, at(c.want))
		}
	}
	// From another working directory, by relative paths: the same.
	t.Chdir(at("repo/pkg"))
	if got := ModuleRoot([]string{"sub"}, nil); got != at("repo") {
		t.Errorf("from inside the package: %s", got)
	}
}
