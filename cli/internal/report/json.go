package report

import (
	"encoding/json"
	"io"

	"github.com/cudagraph-capguard/capguard/guard"
)

// JSONFinding is one finding in the JSON document (and one line of JSON
// lines).
type JSONFinding struct {
	Rule      string   `json:"rule"`
	Name      string   `json:"name"`
	Severity  string   `json:"severity"`
	Path      string   `json:"path"`
	Line      int      `json:"line"`
	Column    int      `json:"column"`
	EndLine   int      `json:"end_line"`
	EndColumn int      `json:"end_column"`
	Message   string   `json:"message"`
	Context   string   `json:"context"`
	Function  string   `json:"function,omitempty"`
	Chain     []string `json:"chain"`
	// Resolution is how sure the chain is: traced, resolved, annotated,
	// hierarchy or name (the weakest edge in it).
	Resolution string `json:"resolution"`
	// Condition: captured only if it holds ("the capture passes
	// `pixel_values`, in pkg.mod.Model.forward", "prefill is captured
	// (...)", "the cache misses (...)"); absent when unconditional.
	Condition string `json:"condition,omitempty"`
	// Assumes: what an unproved finding (a warning) assumed: library
	// mode, a chain edge resolved by method name or through the class
	// hierarchy, a value the value model could not prove.
	Assumes []string `json:"assumes,omitempty"`
	URL     string   `json:"url"`
	Fix     *JSONFix `json:"fix"`
}

// JSONFix describes a fix and its edits.
type JSONFix struct {
	Applicability string     `json:"applicability"`
	Message       string     `json:"message"`
	Edits         []JSONEdit `json:"edits"`
	// Helper: applying the fix also inserts (or imports) the
	// persistent_buffer helper once in the file.
	Helper bool `json:"helper,omitempty"`
}

// JSONEdit replaces the text from Start to End (1-based lines and byte
// columns of the analysed source, End exclusive) with Content.
type JSONEdit struct {
	Start   JSONPos `json:"start"`
	End     JSONPos `json:"end"`
	Content string  `json:"content"`
}

// JSONPos is a 1-based line and byte column.
type JSONPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

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
	Version  int           `json:"version"`
	Findings []JSONFinding `json:"findings"`
	Files    int           `json:"files"`
	Errors   []JSONError   `json:"errors"`
	Warnings []string      `json:"warnings"`
	// Settings say what the run assumed (presets and why, capture roots,
	// conventions matched): guard.Settings.
	Settings *guard.Settings `json:"settings,omitempty"`
}

// Finding converts a diagnostic to its JSON form; src (the analysed source,
// or nil) gives the fix edits' positions.
func Finding(d *guard.Diagnostic, src []byte) JSONFinding {
	f := JSONFinding{Rule: d.Rule.ID, Name: d.Rule.Name, Severity: string(d.Severity), Path: d.Path,
		Line: d.Start.Line, Column: d.Start.Column, EndLine: d.End.Line, EndColumn: d.End.Column,
		Message: d.Message, Context: string(d.Context), Function: d.Function, Chain: d.Chain,
		Resolution: string(d.Resolution), Condition: d.Condition, Assumes: d.Assumes, URL: RuleURL(d.Rule.ID)}
	if f.Chain == nil {
		f.Chain = []string{}
	}
	if f.Resolution == "" {
		f.Resolution = string(guard.Resolved)
	}
	if d.Fix != nil {
		f.Fix = &JSONFix{Applicability: string(d.Fix.Applicability), Message: d.Fix.Message, Edits: []JSONEdit{}, Helper: d.Fix.NeedsHelper}
		for _, e := range d.Fix.Edits {
			if src == nil || e.Start < 0 || e.End > len(src) || e.Start > e.End {
				f.Fix.Edits = nil
				break
			}
			sl, sc := position(src, e.Start)
			el, ec := position(src, e.End)
			f.Fix.Edits = append(f.Fix.Edits, JSONEdit{Start: JSONPos{sl, sc}, End: JSONPos{el, ec}, Content: e.NewText})
		}
	}
	return f
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
	doc := JSONDoc{Version: 1, Findings: []JSONFinding{}, Files: res.Files, Errors: jsonErrors(res), Warnings: res.Warnings,
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

// JSONLines writes one finding per line (the JSONFinding object); file
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
