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
	inFound := map[string]bool{} // the named folders' files, absolute
	if len(s.dirs) > 0 {
		var dirs []string
		for _, p := range s.named {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				dirs = append(dirs, p)
			}
		}
		found, _ := guard.Discover(dirs, cfg)
		files += len(found)
		for _, p := range found {
			if a, err := filepath.Abs(p); err == nil {
				inFound[a] = true
			}
		}
	}
	for abs := range s.files {
		if inFound[abs] {
			continue // counted with its named folder (check F.py .)
		}
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
// `check` of another file of the project). ok is false when a folder was
// named, or standard input without a name.
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

// walkSpellings maps each named file, as the user spelled it, to its
// spelling in the walk's files (the project run's); ok is false when the
// walk does not hold one of them (a file the config excludes), or when
// one file is named twice, spelled two ways (the run over the files
// keeps the first spelling: left to it).
func (s *reportScope) walkSpellings(files []string) (map[string]string, bool) {
	byAbs := make(map[string]string, len(files))
	for _, f := range files {
		if abs, err := filepath.Abs(f); err == nil {
			byAbs[abs] = f
		}
	}
	out := map[string]string{}
	for _, p := range s.named {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, false
		}
		w, ok := byAbs[abs]
		if !ok {
			return nil, false
		}
		for q, v := range out {
			if v == w && q != p {
				return nil, false
			}
		}
		out[p] = w
	}
	return out, true
}

// respell makes a project run's result read as the run over the named
// files would have: the walk spells a named file its own way (relative
// to the working directory, as `check .` does), the run over files as the
// user did (absolute, ./F, from a subfolder: the first spelling a run
// meets is the one it keeps, and every text that names a file names it
// by that spelling). So each path field (findings, file errors, the
// settings' roots, sorted by it again: guard.SortRoots) and each mention of
// the path in a text (a warning's "path.py:12:", a root's "at path.py:22",
// a preset's "import x in path.py") is spelled the user's way. It reports
// false when a fix's new code holds a walk spelling (code is never
// rewritten): the caller then runs the files' own analysis.
func respell(res *guard.Result, spell map[string]string) bool {
	re := map[string]string{} // walk spelling -> the user's
	for user, walk := range spell {
		if user != walk {
			re[walk] = user
		}
	}
	if len(re) == 0 || res == nil {
		return true
	}
	for _, d := range res.Diagnostics {
		if d.Fix != nil {
			for _, e := range d.Fix.Edits {
				if respellText(e.NewText, re) != e.NewText {
					return false
				}
			}
			d.Fix.Message = respellText(d.Fix.Message, re)
		}
		d.Message, d.Condition = respellText(d.Message, re), respellText(d.Condition, re)
		for k, a := range d.Assumes {
			d.Assumes[k] = respellText(a, re)
		}
		if user, ok := re[d.Path]; ok {
			if src := res.Source(d.Path); src != nil {
				res.SetSource(user, src)
			}
			d.Path = user
		}
	}
	for i := range res.Errors {
		e := &res.Errors[i]
		e.Message = respellText(e.Message, re)
		if user, ok := re[e.Path]; ok {
			e.Path = user
		}
	}
	for i, w := range res.Warnings {
		res.Warnings[i] = respellText(w, re)
	}
	if st := res.Settings; st != nil {
		cp := *st
		cp.Roots = append([]guard.RootSetting(nil), st.Roots...)
		for k, r := range cp.Roots {
			cp.Roots[k].Why = respellText(r.Why, re)
			if user, ok := re[r.Path]; ok {
				cp.Roots[k].Path = user
			}
		}
		guard.SortRoots(cp.Roots)
		cp.Presets = append([]guard.PresetSetting(nil), st.Presets...)
		for k, p := range cp.Presets {
			cp.Presets[k].Why = respellText(p.Why, re)
		}
		res.Settings = &cp
	}
	return true
}

// respellText replaces each mention of a path of re (walk spelling to the
// user's) in text: where it stands as a whole path, after the text's start,
// a space, a parenthesis or a quote, and before its end, a colon, a
// parenthesis, a space, a comma, a full stop ending the text or a quote (so
// a longer path that ends with it, "sub/a.py" for "a.py", is another path).
func respellText(text string, re map[string]string) string {
	if text == "" {
		return text
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(text); {
		if i == 0 || strings.IndexByte(" ('\"", text[i-1]) >= 0 {
			matched := ""
			for walk := range re {
				if len(walk) > len(matched) && strings.HasPrefix(text[i:], walk) {
					j := i + len(walk)
					if j == len(text) || strings.IndexByte(":) ,'\"", text[j]) >= 0 || (text[j] == '.' && j+1 == len(text)) {
						matched = walk
					}
				}
			}
			if matched != "" {
				if !changed {
					b.WriteString(text[:i])
					changed = true
				}
				b.WriteString(re[matched])
				i += len(matched)
				continue
			}
		}
		if changed {
			b.WriteByte(text[i])
		}
		i++
	}
	if !changed {
		return text
	}
	return b.String()
}
