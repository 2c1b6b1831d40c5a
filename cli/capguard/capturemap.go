package main

// The interim merge of a capture map into `capguard check` (issue 12),
// written against today's analysis without touching guard/run.go,
// contexts.go or project.go (call graph v2 rewrites them):
//
//   - the map's captured functions become captured entry points and its
//     replay-prep functions replay-prep entries (config patterns
//     "module:Qual"), so the static rules run on code only the trace reached;
//   - its runtime findings are added beside the static ones, with context
//     captured (replay-prep for CG201), resolution "traced" and the recorded
//     stack as the chain;
//   - names that no longer resolve (file gone, no such def) are reported on
//     stderr as stale, never dropped silently.
//
// With the contexts layer, the first point becomes real traced roots (edge
// kind guard.Traced, the recorded stack as the chain); see the README's
// "Tracing a real run".

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/capguard/capguard/guard"
	"github.com/capguard/capguard/guard/capmap"
)

// captureMap is a loaded map and what the merge took from it.
type captureMap struct {
	m     *capmap.Map
	dir   string
	stale []capmap.Stale
}

// loadCaptureMap loads the map and adds its functions to cfg's entry points
// and replay-prep patterns.
func loadCaptureMap(file string, cfg *guard.Config) (*captureMap, error) {
	m, err := capmap.Load(file)
	if err != nil {
		return nil, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	cm := &captureMap{m: m, dir: dir}
	captured, prep := m.Captured(dir), m.ReplayPrep(dir)
	cm.stale = append(capmap.FindStale(captured, nil), capmap.FindStale(prep, nil)...)
	cm.checkDefinitions()
	staleSet := map[string]bool{}
	for _, s := range cm.stale {
		staleSet[s.Context+" "+s.Name] = true
	}
	keep := func(recs []capmap.Record) []capmap.Record {
		var out []capmap.Record
		for _, r := range recs {
			if !staleSet[r.Context+" "+r.Name] {
				out = append(out, r)
			}
		}
		return out
	}
	cfg.EntryPoints = append(cfg.EntryPoints, capmap.EntryPoints(keep(captured))...)
	cfg.ReplayPrep = append(cfg.ReplayPrep, capmap.EntryPoints(keep(prep))...)
	return cm, nil
}

var defCache = map[string][]byte{}

// definesIn reports whether the file still defines qual: a textual test (a
// `def` or `class` of each segment of the qualified name, in order), the
// stand-in for asking the project index.
func definesIn(path, qual string) bool {
	src, ok := defCache[path]
	if !ok {
		src, _ = os.ReadFile(path)
		defCache[path] = src
	}
	if src == nil {
		return false
	}
	if qual == "" {
		return true
	}
	off := 0
	for _, seg := range strings.Split(qual, ".") {
		re := regexp.MustCompile(`(?m)^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+` + regexp.QuoteMeta(seg) + `\b`)
		loc := re.FindIndex(src[off:])
		if loc == nil {
			return false
		}
		off += loc[1]
	}
	return true
}

// checkDefinitions adds to the stale list the records whose file no longer
// defines their function.
func (cm *captureMap) checkDefinitions() {
	seen := map[string]bool{}
	for _, s := range cm.stale {
		seen[s.Context+" "+s.Name] = true
	}
	for _, recs := range [][]capmap.Record{cm.m.Captured(cm.dir), cm.m.ReplayPrep(cm.dir)} {
		for _, r := range recs {
			k := r.Context + " " + r.Name
			if r.External() || seen[k] {
				continue
			}
			seen[k] = true
			if _, err := os.Stat(r.Path); err == nil && !definesIn(r.Path, r.Qual) {
				cm.stale = append(cm.stale, capmap.Stale{Record: r, Why: "no function " + r.Qual + " in " + r.Path})
			}
		}
	}
}

// warn prints the stale names.
func (cm *captureMap) warn(w io.Writer) {
	if len(cm.stale) == 0 {
		return
	}
	sort.Slice(cm.stale, func(i, j int) bool { return cm.stale[i].Name < cm.stale[j].Name })
	fmt.Fprintf(w, "capguard: capture map %s: %d name(s) no longer resolve (stale; re-run capguard trace):\n", cm.m.File, len(cm.stale))
	for _, s := range cm.stale {
		fmt.Fprintf(w, "    %s %s (graph %d): %s\n", s.Context, s.Name, s.GraphID, s.Why)
	}
}

// addFindings appends the map's runtime findings to res, selected as the
// static ones are.
func (cm *captureMap) addFindings(res *guard.Result, sel guard.Selector) {
	for _, f := range cm.m.RuntimeFindings(cm.dir) {
		rule := guard.LookupRule(f.Rule)
		if rule == nil || !sel.Enabled(rule.ID) {
			continue
		}
		path := f.LocalPath
		if path == "" {
			path = f.Path
		}
		if rel, err := filepath.Rel(cm.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
			path = rel
		}
		ctx := guard.Captured
		if f.Rule == "CG201" {
			ctx = guard.ReplayPrep
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
		res.Diagnostics = append(res.Diagnostics, &guard.Diagnostic{
			Rule: rule, Path: path, Start: guard.Pos{Line: f.Line, Column: 1}, End: guard.Pos{Line: f.Line, Column: 1},
			Message: msg, Severity: rule.Severity, Context: ctx, Function: fn, Chain: f.Chain, Resolution: guard.Traced,
		})
	}
	sort.SliceStable(res.Diagnostics, func(i, j int) bool {
		a, b := res.Diagnostics[i], res.Diagnostics[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Start.Line < b.Start.Line
	})
}

// withCaptureMap loads the map named by --capture-map or the config's
// capture-map (relative to the config's folder) into opts.Config.
func withCaptureMap(c *cli.Context, opts *guard.Options) (*captureMap, error) {
	file := c.String("capture-map")
	if file == "" && opts.Config != nil && opts.Config.CaptureMap != "" {
		file = opts.Config.CaptureMap
		if !filepath.IsAbs(file) && opts.Config.Path != "" {
			file = filepath.Join(filepath.Dir(opts.Config.Path), file)
		}
	}
	if file == "" {
		return nil, nil
	}
	if opts.Config == nil {
		opts.Config = &guard.Config{}
	}
	cm, err := loadCaptureMap(file, opts.Config)
	if err != nil {
		return nil, exitCode(2, fmt.Errorf("--capture-map: %w", err))
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, exitCode(2, fmt.Errorf("--capture-map %s: %v", file, err))
	}
	return cm, nil
}
