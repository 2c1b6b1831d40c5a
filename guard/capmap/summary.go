package capmap

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Summary counts what a map holds, for `capguard trace`'s report.
type Summary struct {
	Graphs, CaptureErrors, Replays int
	// Functions and PrepFunctions count distinct project functions (all graphs).
	Functions, PrepFunctions                int
	ExternalInputs, PrivateInputs, Findings int
	// CaptureMS is the sum of the graphs' capture times, AnalysisMS of the
	// tracer's own work at capture end (pool test, holders).
	CaptureMS, AnalysisMS float64
}

// Summarize counts m's contents with names resolved against dir.
func (m *Map) Summarize(dir string) Summary {
	s := Summary{Graphs: len(m.Graphs), Findings: len(m.Findings)}
	for _, g := range m.Graphs {
		if g.Status == "capture-error" {
			s.CaptureErrors++
		}
		s.Replays += g.Replays
		s.ExternalInputs += g.ExternalInputs
		s.PrivateInputs += g.PrivateInputs
		s.CaptureMS += g.CaptureMS
		s.AnalysisMS += g.AnalysisMS
	}
	s.Functions = len(Names(m.Captured(dir)))
	s.PrepFunctions = len(Names(m.ReplayPrep(dir)))
	return s
}

// WriteText prints the summary and the findings of m, names relative to dir.
func (m *Map) WriteText(w io.Writer, dir string) {
	s := m.Summarize(dir)
	fmt.Fprintf(w, "capguard trace: %d graph(s) captured (%d failed), %d replay(s); %d function(s) under capture, %d replay-prep; inputs %d external, %d private; %d finding(s)\n",
		s.Graphs, s.CaptureErrors, s.Replays, s.Functions, s.PrepFunctions, s.ExternalInputs, s.PrivateInputs, s.Findings)
	for _, g := range m.Graphs {
		site := "(native caller)"
		if g.Site != nil {
			site = fmt.Sprintf("%s:%d %s", shortPath(dir, g.Site.Path), g.Site.Line, NormQual(g.Site.Qual))
		}
		fmt.Fprintf(w, "  graph %d: %s at %s, %s, capture %.1f ms, %d replays, %d functions\n", g.ID, g.API, site, g.Status, g.CaptureMS, g.Replays, len(g.Functions))
	}
	for _, f := range m.RuntimeFindings(dir) {
		where := shortPath(dir, f.Path)
		fmt.Fprintf(w, "%s:%d: %s [traced] %s\n", where, f.Line, f.Rule, f.Message)
		if f.AllocSite != "" {
			fmt.Fprintf(w, "    allocated: %s\n", f.AllocSite)
		}
		if f.DropSite != "" {
			fmt.Fprintf(w, "    dropped: %s\n", f.DropSite)
		}
		if len(f.Chain) > 0 {
			fmt.Fprintf(w, "    traced: %s\n", strings.Join(f.Chain, " -> "))
		}
	}
	if m.TracerErrorCount > 0 {
		errs := append([]string{}, m.TracerErrors...)
		sort.Strings(errs)
		fmt.Fprintf(w, "capguard trace: the tracer hit %d internal error(s) (the program was not affected): %s\n", m.TracerErrorCount, strings.Join(errs, "; "))
	}
}

func shortPath(dir, p string) string {
	if rel, ok := relPath(dir, p); ok {
		return rel
	}
	return p
}
