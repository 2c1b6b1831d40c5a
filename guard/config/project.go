package config

import (
	"os"
	"path/filepath"
	"strings"
)

// ProjectRoot returns, absolute, the folder of the project that path (a
// file, which need not exist: standard input's --stdin-filename) belongs
// to: the folder of cfg's file when that folder holds path; else the
// closest folder above path holding .git or .hg (a VCS root); else the
// folder of path's top package (the highest folder of its __init__.py
// chain); else "" (a lone script, its own project).
//
// Which code runs under capture is a property of the whole project (a
// capture started in one module reaches functions of another), so a run
// over files analyses their projects and reports on the files.
func ProjectRoot(path string, cfg *Config) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	dir := abs
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		dir = filepath.Dir(abs)
	}
	if cfg != nil && cfg.Path != "" {
		if c, err := filepath.Abs(cfg.Dir()); err == nil && withinDir(dir, c) {
			return c
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, vcs := range []string{".git", ".hg"} {
			if _, err := os.Stat(filepath.Join(d, vcs)); err == nil {
				return d
			}
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	top := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "__init__.py")); err != nil {
			break
		}
		top = d
		if d == filepath.Dir(d) {
			break
		}
	}
	return top
}

// withinDir reports whether the absolute path p is dir or lies under it.
func withinDir(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
