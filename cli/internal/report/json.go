package report

import (
	"encoding/json"
	"io"

	"github.com/cudagraph-capguard/capguard/guard"
)

// JSONError is a file error.
type JSONError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	// Kind: "syntax" (the rest of the file was analysed), "decode" or "io"
	// (the file was not checked).
	Kind string `json:"kind"`
}

// JSONDoc is the whole JSON document.
type JSONDoc struct {
	Version  int                 `json:"version"`
	Findings []*guard.Diagnostic `json:"findings"` // each in its own JSON form
	Files    int                 `json:"files"`
	Errors   []JSONError         `json:"errors"`
	Warnings []string            `json:"warnings"`
	// Settings say what the run assumed (presets and why, capture roots,
	// conventions matched): guard.Settings.
	Settings *guard.Settings `json:"settings,omitempty"`
}

// Finding is a finding as the JSON formats show it: the Diagnostic itself
// (guard/analysis defines its one JSON form, which the results cache
// stores too). A fix edit the run did not locate (a Result made by hand)
// is located in src, the analysed source, when given.
func Finding(d *guard.Diagnostic, src []byte) *guard.Diagnostic {
	if d.Fix == nil || src == nil {
		return d
	}
	located := true
	for _, e := range d.Fix.Edits {
		located = located && e.From.Line > 0
	}
	if located {
		return d
	}
	c, fix := *d, *d.Fix
	fix.Edits = append([]guard.TextEdit{}, fix.Edits...)
	for i := range fix.Edits {
		e := &fix.Edits[i]
		if e.Start < 0 || e.End > len(src) || e.Start > e.End {
			continue
		}
		sl, sc := position(src, e.Start)
		el, ec := position(src, e.End)
		e.From = guard.Pos{Line: sl, Column: sc, Offset: e.Start}
		e.To = guard.Pos{Line: el, Column: ec, Offset: e.End}
	}
	c.Fix = &fix
	return &c
}

// position is the 1-based line and byte column of an offset.
func position(src []byte, off int) (int, int) {
	line, start := 1, 0
	for i := 0; i < off && i < len(src); i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, off - start + 1
}

func jsonErrors(res *guard.Result) []JSONError {
	out := []JSONError{}
	for _, e := range res.Errors {
		out = append(out, JSONError{Path: e.Path, Message: e.Message, Kind: ErrorKind(e)})
	}
	return out
}

// JSON writes one document.
func JSON(w io.Writer, res *guard.Result, o Options) error {
	src := sourceFunc(res, o.Source)
	doc := JSONDoc{Version: 1, Findings: []*guard.Diagnostic{}, Files: res.Files, Errors: jsonErrors(res), Warnings: res.Warnings,
		Settings: res.Settings}
	if doc.Warnings == nil {
		doc.Warnings = []string{}
	}
	for _, d := range res.Diagnostics {
		doc.Findings = append(doc.Findings, Finding(d, src(d.Path)))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// JSONLines writes one finding per line (its JSON form); file
// errors and warnings go to stderr as in the text formats.
func JSONLines(w io.Writer, res *guard.Result, o Options) error {
	src := sourceFunc(res, o.Source)
	enc := json.NewEncoder(w)
	for _, d := range res.Diagnostics {
		if err := enc.Encode(Finding(d, src(d.Path))); err != nil {
			return err
		}
	}
	return nil
}
