package capmap

import (
	"os"
	"path/filepath"
	"strings"
)

// ModuleName is the dotted module path of a .py file relative to dir
// (`/` -> `.`, `.py` dropped, a trailing `.__init__` dropped), as
// `capguard graph` names modules. ok is false when the file is not under
// dir or is not a .py file.
func ModuleName(dir, path string) (string, bool) {
	rel, ok := relPath(dir, path)
	if !ok || !strings.HasSuffix(rel, ".py") {
		return "", false
	}
	return moduleOfRel(rel), true
}

func moduleOfRel(rel string) string {
	mod := strings.ReplaceAll(strings.TrimSuffix(rel, ".py"), "/", ".")
	if mod == "__init__" {
		return ""
	}
	return strings.TrimSuffix(mod, ".__init__")
}

// relPath is path relative to dir with `/` separators, when path is inside dir.
func relPath(dir, path string) (string, bool) {
	if dir == "" || path == "" || isPseudo(path) {
		return "", false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// NormQual turns a co_qualname into capguard's qualified name: `<locals>`
// segments dropped ("Runner.capture.<locals>.inner" -> "Runner.capture.inner"),
// and module-level code ("<module>") the empty string.
func NormQual(qual string) string {
	if qual == "<module>" {
		return ""
	}
	parts := strings.Split(qual, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "<locals>" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

// NamedQual is NormQual with anonymous code (`<lambda>`, `<genexpr>`,
// `<listcomp>`, ...) at the end cut off: the named function it belongs to.
// anon is the anonymous part ("<lambda>"), empty for a named function.
func NamedQual(qual string) (named, anon string) {
	q := NormQual(qual)
	parts := strings.Split(q, ".")
	i := len(parts)
	for i > 0 && strings.HasPrefix(parts[i-1], "<") {
		i--
	}
	return strings.Join(parts[:i], "."), strings.Join(parts[i:], ".")
}

// Name is a function's name in `capguard graph` naming: the module path of
// path relative to dir plus NormQual(qual); module-level code is the
// module's own name.
func Name(dir, path, qual string) (string, bool) {
	mod, ok := ModuleName(dir, path)
	if !ok {
		return "", false
	}
	return joinName(mod, NormQual(qual)), true
}

func joinName(mod, qual string) string {
	switch {
	case mod == "":
		return qual
	case qual == "":
		return mod
	}
	return mod + "." + qual
}

// PackageModule is a file's module name by its chain of package folders
// (folders holding __init__.py), the naming guard's config patterns
// ("module:Qual.name", entry-points and replay-prep) match against today.
func PackageModule(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	dir := filepath.Dir(abs)
	base := strings.TrimSuffix(filepath.Base(abs), ".py")
	var pkg []string
	for {
		if _, err := os.Stat(filepath.Join(dir, "__init__.py")); err != nil {
			break
		}
		pkg = append([]string{filepath.Base(dir)}, pkg...)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if base == "__init__" {
		if len(pkg) == 0 {
			return filepath.Base(filepath.Dir(abs))
		}
		return strings.Join(pkg, ".")
	}
	return strings.Join(append(pkg, base), ".")
}
