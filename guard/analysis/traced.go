package analysis

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/capmap"
	"github.com/cudagraph-capguard/capguard/guard/contexts"
)

// TracedInput is a capture map loaded for a run: the functions it
// recorded (roots of the contexts layer, edge kind traced) and its runtime
// findings (reported beside the static ones).
type TracedInput struct {
	M    *capmap.Map
	file string
	Cwd  string
}

func LoadTraced(file, cwd string) (*TracedInput, error) {
	m, err := capmap.Load(file)
	if err != nil {
		return nil, fmt.Errorf("capture-map %s: %w", file, err)
	}
	return &TracedInput{M: m, file: file, Cwd: cwd}, nil
}

// Anchor sets the folder of this checkout that the traced run's working
// directory stands for, against which the paths the map recorded under
// it are read: the first of dirs under which a function or finding the
// map recorded is one of the run's files (has, by absolute path), else
// the folder it had (the working directory of the run). Until now it was
// always the working directory: checked from another folder (`check
// --capture-map M /abs/project`, or capguard server's second workspace
// folder), the recorded paths were joined to that folder, so no traced
// root matched by path and the map's findings named files that do not
// exist, at column 1.
func (t *TracedInput) Anchor(dirs []string, has func(abs string) bool) {
	for _, d := range dirs {
		if d != "" && t.matches(d, has) {
			t.Cwd = d
			return
		}
	}
}

// matches reports whether, read against dir, a path the map recorded is
// one of the run's files.
func (t *TracedInput) matches(dir string, has func(string) bool) bool {
	hit := func(p string) bool {
		if p == "" {
			return false
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return has(filepath.Clean(p))
	}
	for _, recs := range [][]capmap.Record{t.M.Captured(dir), t.M.ReplayPrep(dir)} {
		for _, r := range recs {
			if hit(r.Path) {
				return true
			}
		}
	}
	for _, f := range t.M.RuntimeFindings(dir) {
		if hit(f.LocalPath) {
			return true
		}
	}
	return false
}

// Records are the map's functions as contexts roots, with their recorded
// stacks; functions outside the project are left out.
func (t *TracedInput) Records() []contexts.TracedRecord {
	var out []contexts.TracedRecord
	add := func(ctx Context, recs []capmap.Record) {
		for _, r := range recs {
			if r.External() {
				continue
			}
			var stack []string
			for i, n := range r.Names {
				if n != "" && i < len(r.Names)-1 {
					stack = append(stack, n)
				}
			}
			path := r.Path
			if path != "" && !filepath.IsAbs(path) {
				path = filepath.Join(t.Cwd, path)
			}
			out = append(out, contexts.TracedRecord{Ctx: ctx, Name: r.Name, Path: filepath.Clean(path), Qual: r.Qual, Stack: stack})
		}
	}
	add(Captured, t.M.Captured(t.Cwd))
	add(ReplayPrep, t.M.ReplayPrep(t.Cwd))
	return out
}

// Findings are the map's runtime findings as diagnostics (resolution
// traced), selected as the static ones are.
func (t *TracedInput) Findings(proj *Project, sel Selector) []*Diagnostic {
	byPath := map[string]*File{}
	for _, f := range proj.Files {
		byPath[f.Abs] = f
	}
	var out []*Diagnostic
	for _, f := range t.M.RuntimeFindings(t.Cwd) {
		rule := LookupRule(f.Rule)
		if rule == nil || !sel.Enabled(rule.ID) {
			continue
		}
		path := f.LocalPath
		if path == "" {
			path = f.Path
		}
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(t.Cwd, abs)
		}
		start := Pos{Line: f.Line, Column: 1}
		if file := byPath[filepath.Clean(abs)]; file != nil {
			path = file.Path
			off := file.LineStart(f.Line)
			for off < len(file.Src) && (file.Src[off] == ' ' || file.Src[off] == '\t') {
				off++
			}
			start = PosOf(file, off)
		} else if rel, err := filepath.Rel(t.Cwd, abs); err == nil && !strings.HasPrefix(rel, "..") {
			path = rel
		}
		ctx := Captured
		if f.Rule == "CG201" {
			ctx = ReplayPrep
		}
		msg := "traced: " + f.Message
		if f.AllocSite != "" {
			msg += "; allocated at " + f.AllocSite
		}
		if f.DropSite != "" {
			msg += "; dropped at " + f.DropSite
		}
		fn := ""
		if f.Qual != "" {
			fn = capmap.NormQual(f.Qual)
		}
		out = append(out, &Diagnostic{Rule: rule, Path: path, Start: start, End: start, Message: msg,
			Severity: rule.Severity, Context: ctx, Function: fn, Chain: f.Chain, Resolution: Traced})
	}
	return out
}
