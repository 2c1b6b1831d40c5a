package guard

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/contexts"
)

// Settings are what a run assumed: the configuration it resolved, each
// preset with what turned it on, the capture roots it found and the
// graph-protocol conventions that matched (`capguard check
// --show-settings`, and "settings" in the JSON output).
type Settings struct {
	Config      string          `json:"config"` // the config file, "" for the defaults
	Select      []string        `json:"select"`
	Ignore      []string        `json:"ignore"`
	Exclude     []string        `json:"exclude"`
	EntryPoints []string        `json:"entry_points"`
	ReplayPrep  []string        `json:"replay_prep"`
	PostCapture []string        `json:"post_capture"`
	Device      string          `json:"device"`
	Presets     []PresetSetting `json:"presets"`
	// Roots are the functions the analysis started from, by context (the
	// launcher roots of a library, possibly thousands, are only counted).
	Roots         []RootSetting `json:"roots"`
	LauncherRoots int           `json:"launcher_roots"`
	// Conventions are the graph-protocol conventions that matched a class.
	Conventions []ConventionMatch `json:"conventions"`
}

// PresetSetting is a preset in effect and what turned it on: "config",
// "--preset", "package vllm", "import sglang.srt.layers in srt/x.py".
type PresetSetting struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// RootSetting is one root of the analysis.
type RootSetting struct {
	Function string  `json:"function"`
	Path     string  `json:"path"`
	Line     int     `json:"line"`
	Context  Context `json:"context"`
	Why      string  `json:"why"`
}

// SortRoots orders roots by path, line, context, function and reason: a
// total order, so that roots whose paths are spelled again (a file run
// served from its project's run, cli's respell) sort as a run that
// spelled them so would have sorted them.
func SortRoots(roots []RootSetting) {
	sort.Slice(roots, func(i, j int) bool {
		a, b := roots[i], roots[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Context != b.Context {
			return a.Context < b.Context
		}
		if a.Function != b.Function {
			return a.Function < b.Function
		}
		return a.Why < b.Why
	})
}

// ConventionMatch is a convention and the classes it matched.
type ConventionMatch struct {
	Name    string   `json:"name"`
	Classes []string `json:"classes"`
}

// settingsOf describes a run: cfg is the configuration before preset
// detection, proj the loaded project (its cfg has the detected presets).
func settingsOf(cfg *Config, proj *Project, sel Selector) *Settings {
	s := &Settings{Config: cfg.Path, Select: nonNil(sel.Select), Ignore: nonNil(sel.Ignore), Exclude: nonNil(cfg.Exclude),
		EntryPoints: nonNil(cfg.EntryPoints), ReplayPrep: nonNil(cfg.ReplayPrep), PostCapture: nonNil(cfg.PostCapture),
		Device: proj.Cfg.DeviceType(), Presets: []PresetSetting{}, Roots: []RootSetting{}, Conventions: []ConventionMatch{}}
	if s.Device == "" {
		s.Device = "cuda"
	}
	configured := map[string]bool{}
	for _, p := range cfg.Presets {
		configured[p] = true
	}
	for _, p := range proj.Cfg.Presets {
		why := "configured"
		if !configured[p] {
			why = presetReason(Presets[p].Detect, proj.Files)
		}
		s.Presets = append(s.Presets, PresetSetting{Name: p, Why: why})
	}
	for _, r := range proj.Ctx.Regions {
		line := r.Fn.Line()
		if r.Node != nil {
			line = r.Fn.File.Line(r.Node)
		}
		s.Roots = append(s.Roots, RootSetting{Function: r.Fn.FullName(), Path: r.Fn.File.Path, Line: line, Context: r.Ctx, Why: r.What})
	}
	conv := map[string]map[string]bool{}
	for _, f := range proj.Files {
		for _, fn := range append([]*Function{f.Top}, f.Funcs...) {
			for _, c := range contexts.Order {
				r := proj.Ctx.Reached[fn][c]
				if r == nil || len(r.Chain) != 1 || r.Root == "" {
					continue
				}
				if c == Launcher {
					s.LauncherRoots++
					continue
				}
				s.Roots = append(s.Roots, RootSetting{Function: fn.FullName(), Path: f.Path, Line: fn.Line(), Context: c, Why: r.Root})
				if rest, ok := strings.CutPrefix(r.Root, "convention "); ok {
					name, class, _ := strings.Cut(rest, ": ")
					class, _, _ = strings.Cut(class, " defines ")
					if conv[name] == nil {
						conv[name] = map[string]bool{}
					}
					conv[name][class] = true
				}
			}
		}
	}
	SortRoots(s.Roots)
	for _, name := range sortedSet(boolKeys(conv)) {
		s.Conventions = append(s.Conventions, ConventionMatch{Name: name, Classes: sortedSet(conv[name])})
	}
	return s
}

// presetReason names the package or import that matched one of detect.
func presetReason(detect []string, files []*File) string {
	match := func(n string) string {
		for _, d := range detect {
			if n == d || strings.HasPrefix(n, d+".") {
				return d
			}
		}
		return ""
	}
	for _, f := range files {
		m := f.Module
		for m != nil && m.Parent != nil && m.Parent.File != nil {
			m = m.Parent
		}
		if m != nil && m.Name != "" && match(m.Name) != "" {
			return "package " + m.Name
		}
	}
	best := ""
	for _, f := range files {
		for _, q := range sortedSet(valueSet(f.Imports)) {
			if match(q) != "" {
				if r := fmt.Sprintf("import %s in %s", q, f.Path); best == "" || r < best {
					best = r
				}
				break
			}
		}
	}
	if best == "" {
		return "detected"
	}
	return best
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func boolKeys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func valueSet(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for _, v := range m {
		out[v] = true
	}
	return out
}

// MarshalJSON writes empty lists as [] (a cache's gob round trip makes them
// nil), so that a cached run prints what a fresh one does.
func (s Settings) MarshalJSON() ([]byte, error) {
	type plain Settings
	p := plain(s)
	for _, l := range []*[]string{&p.Select, &p.Ignore, &p.Exclude, &p.EntryPoints, &p.ReplayPrep, &p.PostCapture} {
		*l = nonNil(*l)
	}
	if p.Presets == nil {
		p.Presets = []PresetSetting{}
	}
	if p.Roots == nil {
		p.Roots = []RootSetting{}
	}
	if p.Conventions == nil {
		p.Conventions = []ConventionMatch{}
	}
	return json.Marshal(p)
}
