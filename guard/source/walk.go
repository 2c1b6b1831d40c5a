package source

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

// Discover lists the Python files a run over paths checks, as Run finds
// them, and the paths that could not be walked (missing, unreadable). A
// cache of results keys them by these files' contents.
func Discover(paths []string, cfg *Config) ([]string, []FileError) {
	files, _, errs := DiscoverWalk(paths, cfg)
	return files, errs
}

// DiscoverWalk is Discover, and also lists what the walk read besides the
// files: every folder it listed and every .gitignore it read. The file list
// can only change when one of those does (a folder's modification time
// moves when an entry is added, removed or renamed in it).
func DiscoverWalk(paths []string, cfg *Config) (files, walked []string, errs []FileError) {
	if cfg == nil {
		cfg = &Config{}
	}
	files = discoverVisit(paths, cfg, nil, &errs, func(p string) { walked = append(walked, p) })
	return files, walked, errs
}

// PackageDirs reports, for the folders holding files, each folder from
// which Run's module names are made (the folder and its parents while they
// hold an __init__.py) and whether it holds one: the facts outside the
// files' contents that their module names depend on.
func PackageDirs(files []string) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
			if _, seen := out[dir]; seen {
				break
			}
			_, err := os.Stat(filepath.Join(dir, "__init__.py"))
			out[dir] = err == nil
			if err != nil || dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return out
}

// discover expands the user's paths into Python files: a named file is
// taken as it is, a folder is walked for *.py honouring .gitignore files
// inside it and the config's exclude globs. Symbolic links to folders are
// not followed (no loops); hidden folders, __pycache__ and virtual
// environments are skipped.
func DiscoverOverlay(paths []string, cfg *Config, overlay map[string][]byte, errs *[]FileError) []string {
	return discoverVisit(paths, cfg, overlay, errs, nil)
}

// discoverVisit is discover, calling visit (when set) with each folder it
// lists and each .gitignore it reads.
func discoverVisit(paths []string, cfg *Config, overlay map[string][]byte, errs *[]FileError, visit func(string)) []string {
	var out, keys []string
	seen := map[string]bool{}
	addFile := func(p string) {
		key := p
		if abs, err := filepath.Abs(p); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
			keys = append(keys, key)
		}
	}
	for _, root := range paths {
		if _, ok := overlay[root]; ok {
			addFile(root)
			continue
		}
		st, err := os.Stat(root)
		if err != nil {
			*errs = append(*errs, FileError{Path: root, Message: DescribeOSError(err)})
			continue
		}
		if !st.IsDir() {
			addFile(root)
			continue
		}
		var ignores []ig
		git := gitListing(root, visit)
		if git == nil {
			// No git to ask: the .gitignore files of the folders above the
			// walked one, up to the repository's root, apply too.
			ignores = parentIgnores(root, visit)
		}
		ignored := func(p string, isDir bool) bool {
			if git != nil {
				return git.ignored(p, isDir)
			}
			for _, g := range ignores {
				q := p
				if filepath.IsAbs(g.dir) && !filepath.IsAbs(q) {
					q, _ = filepath.Abs(q) // a .gitignore above the walk
				}
				rel, err := filepath.Rel(g.dir, q)
				if err != nil || strings.HasPrefix(rel, "..") {
					continue
				}
				rel = filepath.ToSlash(rel)
				if isDir {
					rel += "/"
				}
				if g.m.MatchesPath(rel) {
					return true
				}
			}
			return false
		}
		var found []string
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				*errs = append(*errs, FileError{Path: p, Message: DescribeOSError(err)})
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				name := d.Name()
				if p != root && (strings.HasPrefix(name, ".") || name == "__pycache__" || name == "node_modules" ||
					ignored(p, true) || cfg.Excluded(p) || isVenv(p)) {
					if visit != nil && isVenv(p) {
						visit(p) // a venv no longer when its pyvenv.cfg goes: that changes this folder
					}
					return filepath.SkipDir
				}
				if gi, err := ignore.CompileIgnoreFile(filepath.Join(p, ".gitignore")); err == nil {
					if git == nil {
						ignores = append(ignores, ig{p, gi})
					}
					if visit != nil {
						visit(filepath.Join(p, ".gitignore"))
					}
				}
				if visit != nil {
					visit(p)
				}
				return nil
			}
			if !strings.HasSuffix(p, ".py") || ignored(p, false) || cfg.Excluded(p) {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				if st, err := os.Stat(p); err != nil || st.IsDir() {
					if err != nil {
						*errs = append(*errs, FileError{Path: p, Message: DescribeOSError(err)})
					}
					return nil
				}
			}
			found = append(found, p)
			return nil
		})
		if err != nil {
			*errs = append(*errs, FileError{Path: root, Message: DescribeOSError(err)})
		}
		sort.Strings(found)
		for _, p := range found {
			addFile(p)
		}
	}
	return byAbsolutePath(out, keys)
}

// byAbsolutePath orders the files by their absolute paths (keys), whatever
// the order and spelling of the paths the run named. The solve meets the
// files in this order, and its caps (a node's 24 containers, its 64
// guesses) keep the first values to arrive (docs/design.md): named first,
// as a file run names its file before its project's folder, a file was
// solved first, and `check F` could report F other than `check .` did (an
// error there, a warning by name here).
func byAbsolutePath(files, keys []string) []string {
	idx := make([]int, len(files))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	out := make([]string, len(files))
	for i, j := range idx {
		out[i] = files[j]
	}
	return out
}

func isVenv(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "pyvenv.cfg"))
	return err == nil
}

func DescribeOSError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied (cannot read it; check its mode)"
	}
	return err.Error()
}

// moduleNamer computes dotted module names from the __init__.py chain,
// caching per folder.
type moduleNamer struct {
	pkg map[string]string // folder -> dotted package name ("" for a non-package folder)
}

func (m *moduleNamer) module(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	dir := filepath.Dir(abs)
	base := strings.TrimSuffix(filepath.Base(abs), ".py")
	pkg := m.pkgOf(dir)
	if base == "__init__" {
		if pkg == "" {
			return filepath.Base(dir)
		}
		return pkg
	}
	return index.Join(pkg, base)
}

func (m *moduleNamer) pkgOf(dir string) string {
	if m.pkg == nil {
		m.pkg = map[string]string{}
	}
	if v, ok := m.pkg[dir]; ok {
		return v
	}
	v := ""
	if _, err := os.Stat(filepath.Join(dir, "__init__.py")); err == nil {
		parent := filepath.Dir(dir)
		if parent != dir {
			v = index.Join(m.pkgOf(parent), filepath.Base(dir))
		} else {
			v = filepath.Base(dir)
		}
	}
	m.pkg[dir] = v
	return v
}
