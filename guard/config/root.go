package config

import (
	"os"
	"path/filepath"
)

// ModuleRoot is the folder a run's module names are taken from, whatever
// the working directory: the config's folder, else the folder holding
// every path's top package (the parent of the top package a path is in,
// or the path's own folder when it is not in one), as Python's import
// system names a package's modules. Walking a folder and naming its files
// give the same root. (The version-control root is not used: a project
// checked out inside another repository, or a script folder in a
// monorepo, would take its names from that repository's top.)
//
// Names were relative to the working directory: checked from `/`, an
// engine's modules were called `work.corpus...engine.mod`, and its chains
// and messages said so.
func ModuleRoot(paths []string, cfg *Config) string {
	if cfg != nil && cfg.Path != "" {
		// The config's folder, when it holds the paths (a config named
		// with --config from elsewhere does not make a project).
		if abs, err := filepath.Abs(filepath.Dir(cfg.Path)); err == nil && holdsAll(abs, paths) {
			return abs
		}
	}
	wd, _ := os.Getwd()
	root := ""
	for _, p := range paths {
		r := pathRoot(p)
		if r == "" {
			continue
		}
		if root == "" {
			root = r
			continue
		}
		root = commonDir(root, r)
	}
	if root == "" {
		return wd
	}
	return root
}

// pathRoot is the parent of the top package path is in, or its folder.
func pathRoot(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	d := abs
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		d = filepath.Dir(abs)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "__init__.py")); err != nil || filepath.Dir(d) == d {
			return d
		}
		d = filepath.Dir(d)
	}
}

// commonDir is the deepest folder holding both a and b (absolute, clean).
func commonDir(a, b string) string {
	for {
		if withinDir(b, a) {
			return a
		}
		up := filepath.Dir(a)
		if up == a {
			return a
		}
		a = up
	}
}

// holdsAll reports whether every path lies in dir.
func holdsAll(dir string, paths []string) bool {
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return false
		}
		if commonDir(dir, abs) != dir {
			return false
		}
	}
	return true
}
