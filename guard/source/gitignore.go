package source

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"
)

// gitFiles is what git lists under a walked folder: the tracked files and
// the untracked ones its ignore rules do not exclude
// (`git ls-files -co --exclude-standard`). git reads every .gitignore
// from the repository's root down, .git/info/exclude and the global
// excludes file, with its own precedence (the last match wins, a negation
// re-includes), so the walk asks it rather than re-implementing it.
type gitFiles struct {
	files map[string]bool // absolute paths
	dirs  map[string]bool // absolute folders holding a listed file
}

func (g *gitFiles) ignored(p string, isDir bool) bool {
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	if isDir {
		return !g.dirs[abs]
	}
	return !g.files[abs]
}

// gitListing asks git for the files under root when root lies in a git
// work tree; nil when it does not, git is not installed or fails (the walk
// then reads the .gitignore files itself). visit (when set) is called with
// the ignore files outside the walk that the listing depends on.
func gitListing(root string, visit func(string)) *gitFiles {
	if os.Getenv("CAPGUARD_NO_GIT") != "" {
		return nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	top := ""
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	cmd := exec.Command("git", "-C", abs, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var out bytes.Buffer
	cmd.Stdout = &out
	if cmd.Run() != nil {
		return nil
	}
	g := &gitFiles{files: map[string]bool{}, dirs: map[string]bool{}}
	for _, rel := range strings.Split(out.String(), "\x00") {
		if rel == "" {
			continue
		}
		p := filepath.Join(abs, filepath.FromSlash(rel))
		g.files[p] = true
		for d := filepath.Dir(p); d != abs && !g.dirs[d] && len(d) > len(abs); d = filepath.Dir(d) {
			g.dirs[d] = true
		}
	}
	if visit != nil && abs != top {
		// What the listing depends on besides the walked folders (a
		// cache's key): the ignore files above the walk, git's exclude
		// file and the global one, where they exist.
		seen := func(p string) {
			if _, err := os.Stat(p); err == nil {
				visit(p)
			}
		}
		for d := filepath.Dir(abs); len(d) >= len(top); d = filepath.Dir(d) {
			seen(filepath.Join(d, ".gitignore"))
			if d == top || d == filepath.Dir(d) {
				break
			}
		}
	}
	if visit != nil {
		if _, err := os.Stat(filepath.Join(top, ".git", "info", "exclude")); err == nil {
			visit(filepath.Join(top, ".git", "info", "exclude"))
		}
		if home, err := os.UserHomeDir(); err == nil {
			if _, err := os.Stat(filepath.Join(home, ".config", "git", "ignore")); err == nil {
				visit(filepath.Join(home, ".config", "git", "ignore"))
			}
		}
	}
	return g
}

// parentIgnores compiles the .gitignore files of the folders above root,
// from its repository's root (a folder holding .git) down, for a walk
// without git; none outside a repository.
func parentIgnores(root string, visit func(string)) []ig {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	var out []ig
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if gi, err := ignore.CompileIgnoreFile(filepath.Join(d, ".gitignore")); err == nil {
			out = append([]ig{{d, gi}}, out...)
			if visit != nil {
				visit(filepath.Join(d, ".gitignore"))
			}
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return out
		}
		if d == filepath.Dir(d) {
			return nil // not in a repository: no .gitignore above applies
		}
	}
}

// ig is a compiled .gitignore and the folder it lies in.
type ig struct {
	dir string
	m   *ignore.GitIgnore
}
