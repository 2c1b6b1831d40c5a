package pyverify

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Target is what `capguard verify` runs: a module-level function, or a method
// of a class the harness constructs (Spec.Construct says how).
type Target struct {
	Path     string // the .py file, as the user named it
	Class    string // empty for a function
	Function string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseTarget parses "path/to/file.py:function" or "path/to/file.py:Class.method".
// It checks the form, not the file; see Target.Check.
func ParseTarget(s string) (Target, error) {
	i := strings.LastIndex(s, ":")
	if i <= 0 || i == len(s)-1 {
		return Target{}, fmt.Errorf("target %q: want path/to/file.py:function or path/to/file.py:Class.method", s)
	}
	path, qual := s[:i], s[i+1:]
	if !strings.HasSuffix(path, ".py") {
		return Target{}, fmt.Errorf("target %q: %s is not a .py file", s, path)
	}
	parts := strings.Split(qual, ".")
	for _, p := range parts {
		if !identRE.MatchString(p) {
			return Target{}, fmt.Errorf("target %q: %q is not a Python name", s, qual)
		}
	}
	switch len(parts) {
	case 1:
		return Target{Path: path, Function: parts[0]}, nil
	case 2:
		return Target{Path: path, Class: parts[0], Function: parts[1]}, nil
	}
	return Target{}, fmt.Errorf("target %q: want function or Class.method, not %q", s, qual)
}

// Qualname is "function" or "Class.method".
func (t Target) Qualname() string {
	if t.Class != "" {
		return t.Class + "." + t.Function
	}
	return t.Function
}

func (t Target) String() string { return t.Path + ":" + t.Qualname() }

// Check reads the file and looks for the definitions the target names, so that
// a typo is reported before any interpreter starts. It is a textual check
// (def/class at the start of a line), not a parse.
func (t Target) Check() error {
	src, err := os.ReadFile(t.Path)
	if err != nil {
		return fmt.Errorf("target %s: %w", t, err)
	}
	if t.Class != "" {
		loc := regexp.MustCompile(`(?m)^class\s+` + t.Class + `\b.*$`).FindIndex(src)
		if loc == nil {
			return fmt.Errorf("target %s: no `class %s` at the top level of %s", t, t.Class, t.Path)
		}
		// the class body: up to the next line that starts in column 0
		body := src[loc[1]:]
		if end := regexp.MustCompile(`(?m)^[^\s#]`).FindIndex(body); end != nil {
			body = body[:end[0]]
		}
		if !regexp.MustCompile(`(?m)^\s+(async\s+)?def\s+` + t.Function + `\s*\(`).Match(body) {
			return fmt.Errorf("target %s: class %s in %s has no method `def %s`", t, t.Class, t.Path, t.Function)
		}
		return nil
	}
	if !regexp.MustCompile(`(?m)^(async\s+)?def\s+` + t.Function + `\s*\(|^` + t.Function + `\s*=`).Match(src) {
		return fmt.Errorf("target %s: no top-level `def %s` in %s", t, t.Function, t.Path)
	}
	return nil
}

// moduleOf returns the dotted module name of a .py file inside a package
// (folders with __init__.py), and the folder to put on sys.path for it. For a
// file outside any package the name is empty (the harness loads it under its
// file name) and the folder is the file's own.
func moduleOf(path string) (dotted, root string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	dir := filepath.Dir(abs)
	name := strings.TrimSuffix(filepath.Base(abs), ".py")
	parts := []string{name}
	for {
		if _, err := os.Stat(filepath.Join(dir, "__init__.py")); err != nil {
			break
		}
		parts = append([]string{filepath.Base(dir)}, parts...)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if len(parts) == 1 {
		return "", dir, nil
	}
	if name == "__init__" {
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, "."), dir, nil
}
