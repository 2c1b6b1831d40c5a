package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/guard"
)

// labelPresets says where each configured preset came from: the --preset
// flag or the config file (guard only knows they were configured).
func labelPresets(c *cli.Context, res *guard.Result) {
	if res == nil || res.Settings == nil {
		return
	}
	flags := map[string]bool{}
	for _, p := range splitCodes(c.StringSlice("preset")) {
		flags[p] = true
	}
	for i, p := range res.Settings.Presets {
		if p.Why != "configured" {
			continue
		}
		if flags[p.Name] {
			res.Settings.Presets[i].Why = "--preset"
		} else if res.Settings.Config != "" {
			res.Settings.Presets[i].Why = "config " + res.Settings.Config
		}
	}
}

// writeSettings prints what a run assumed (--show-settings): as JSON for
// the JSON formats, else as text.
func writeSettings(w io.Writer, s *guard.Settings, format string) error {
	if s == nil {
		s = &guard.Settings{}
	}
	if format == "json" || format == "json-lines" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Settings *guard.Settings `json:"settings"`
		}{s})
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "(none)"
		}
		return strings.Join(xs, ", ")
	}
	cfg := s.Config
	if cfg == "" {
		cfg = "(none found: the defaults)"
	}
	fmt.Fprintf(w, "Config file: %s\n", cfg)
	sel := s.Select
	if len(sel) == 0 {
		sel = []string{"(every rule)"}
	}
	fmt.Fprintf(w, "Select: %s\nIgnore: %s\nExclude: %s\n", list(sel), list(s.Ignore), list(s.Exclude))
	fmt.Fprintf(w, "Entry points: %s\nReplay-prep: %s\nPost-capture: %s\nDevice: %s\n",
		list(s.EntryPoints), list(s.ReplayPrep), list(s.PostCapture), s.Device)
	fmt.Fprintln(w, "Presets:")
	if len(s.Presets) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, p := range s.Presets {
		fmt.Fprintf(w, "  %s: %s\n", p.Name, p.Why)
	}
	fmt.Fprintln(w, "Capture roots:")
	if len(s.Roots) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, r := range s.Roots {
		fmt.Fprintf(w, "  %s:%d %s [%s]: %s\n", r.Path, r.Line, r.Function, r.Context, r.Why)
	}
	if s.LauncherRoots > 0 {
		fmt.Fprintf(w, "  and %d public kernel launchers of a library that never captures [launcher]\n", s.LauncherRoots)
	}
	fmt.Fprintln(w, "Conventions matched:")
	if len(s.Conventions) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, c := range s.Conventions {
		fmt.Fprintf(w, "  %s: %s\n", c.Name, strings.Join(c.Classes, ", "))
	}
	return nil
}
