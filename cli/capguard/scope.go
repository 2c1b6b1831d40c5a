package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
)

// reportScope is what a run over files reports on: the files and folders
// the user named. The run itself analyses their whole projects
// (projectScope), since which code runs under capture depends on every
// module of a project: a sampler's .item() is captured because another
// module's capture calls it.
type reportScope struct {
	files map[string]bool // absolute paths of the named files
	dirs  []string        // absolute paths of the named folders
	named []string        // the named paths, as the user spelled them
}

// projectScope widens opts.Paths: each named file (and standard input's
// --stdin-filename) brings in its project (guard.ProjectRoot: the config's
// folder, else the VCS root, else the top package). It returns the options
// to analyse with, and the scope to report on, nil when nothing was added
// (only folders were named, or the files are lone scripts).
//
// The named paths stay first, so their spelling is the one findings carry
// (the walk keeps the first spelling of a file it meets twice).
func projectScope(opts guard.Options) (guard.Options, *reportScope) {
	sc := &reportScope{files: map[string]bool{}}
	var roots []string
	seenRoot := map[string]bool{}
	for _, p := range opts.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return opts, nil
		}
		sc.named = append(sc.named, p)
		if _, overlaid := opts.Overlay[p]; !overlaid {
			st, err := os.Stat(p)
			if err == nil && st.IsDir() {
				sc.dirs = append(sc.dirs, abs)
				continue
			}
			if err != nil {
				sc.files[abs] = true // missing or unreadable: its error is reported, no project to analyse
				continue
			}
		}
		if p == "-" {
			continue // standard input with no name: no project to find
		}
		sc.files[abs] = true
		if root := guard.ProjectRoot(p, opts.Config); root != "" && !seenRoot[root] {
			seenRoot[root] = true
			roots = append(roots, root)
		}
	}
	var extra []string
	for _, r := range roots {
		covered := false
		for _, d := range sc.dirs {
			if inDir(r, d) {
				covered = true // a named folder already holds this project
			}
		}
		if !covered {
			extra = append(extra, relToWD(r))
		}
	}
	if len(extra) == 0 {
		return opts, nil
	}
	out := opts
	out.Paths = append(append([]string{}, opts.Paths...), extra...)
	return out, sc
}

// relToWD spells an absolute folder relative to the working directory
// when it can (so that the findings of the project's other files, which
// are not reported but may appear in chains, read as the user's paths do).
func relToWD(abs string) string {
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(wd, abs); err == nil {
		return rel
	}
	return abs
}

// inDir reports whether the absolute path p is dir or lies under it.
func inDir(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// has reports whether path is in the scope.
func (s *reportScope) has(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if s.files[abs] {
		return true
	}
	for _, d := range s.dirs {
		if inDir(abs, d) {
			return true
		}
	}
	return false
}

// filter keeps the findings, file errors and warnings about a file of the
// named paths (run-wide warnings stay), and counts
// the files checked as theirs. A nil scope keeps everything.
func (s *reportScope) filter(res *guard.Result, cfg *guard.Config) {
	if s == nil || res == nil {
		return
	}
	kept := res.Diagnostics[:0]
	for _, d := range res.Diagnostics {
		if s.has(d.Path) {
			kept = append(kept, d)
		}
	}
	res.Diagnostics = kept
	errs := res.Errors[:0]
	for _, e := range res.Errors {
		if s.has(e.Path) {
			errs = append(errs, e)
		}
	}
	res.Errors = errs
	warns := res.Warnings[:0]
	for _, w := range res.Warnings {
		// "path.py:12: ..." is about a file outside the scope.
		if i := strings.Index(w, ".py:"); i > 0 && !strings.Contains(w[:i], " ") && !s.has(w[:i+3]) {
			continue
		}
		warns = append(warns, w)
	}
	res.Warnings = warns
	files := 0
	if len(s.dirs) > 0 {
		var dirs []string
		for _, p := range s.named {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				dirs = append(dirs, p)
			}
		}
		found, _ := guard.Discover(dirs, cfg)
		files += len(found)
	}
	for abs := range s.files {
		unread := false
		for _, e := range res.Errors {
			if !e.Syntax && !e.Decode {
				if a, err := filepath.Abs(e.Path); err == nil && a == abs {
					unread = true
				}
			}
		}
		if !unread {
			files++
		}
	}
	res.Files = files
	res.Parsed = min(res.Parsed, files)
}

// projectOnly is the run of the projects projectScope added for named
// files, without the files: what a run over files reports on them is what
// the run over their projects does (TestFileRunHasProjectContext), so it
// can take that run's stored result (`check FILE` after `check .`, or after
// `check` of another file of the project). Only where the walk spells
// every named file as the user did (covers) is the output the same: a
// path spelled otherwise (absolute, or with ./) is the first spelling the
// wide run keeps, and it shows in the findings, the settings' roots and
// the presets' reasons, sorted by it. ok is false when a folder was named,
// or standard input without a name.
func projectOnly(wide guard.Options, scope *reportScope) (out guard.Options, ok bool) {
	if scope == nil || len(scope.dirs) > 0 || len(wide.Paths) <= len(scope.named) {
		return wide, false
	}
	for _, p := range scope.named {
		if p == "-" {
			return wide, false
		}
	}
	out = wide
	out.Paths = append([]string{}, wide.Paths[len(scope.named):]...)
	return out, true
}

// covers reports whether the walk's files hold every named file as the
// user spelled it.
func (s *reportScope) covers(files []string) bool {
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f] = true
	}
	for _, p := range s.named {
		if !have[p] {
			return false
		}
	}
	return true
}
