package analysis

import (
	"encoding/json"
	"sort"

	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/templates"
)

// Severity of a finding.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Applicability says when a fix may be applied without a human reading it,
// as ruff has it: safe fixes apply by default, unsafe ones only with
// --unsafe-fixes, display-only ones never.
type Applicability string

const (
	Safe        Applicability = "safe"
	Unsafe      Applicability = "unsafe"
	DisplayOnly Applicability = "display-only"
)

// Context says where a function (or a region of one) runs.
type Context = contexts.Context

const (
	Captured    = contexts.Captured    // reachable from a capture region or a captured entry point
	ReplayPrep  = contexts.ReplayPrep  // runs between replays and writes state captured code reads
	PostCapture = contexts.PostCapture // runs after the graphs exist: weight reload and update hooks
	Claimed     = contexts.Claimed     // says it is capture-safe (docstring, comment, decorator)
	Launcher    = contexts.Launcher    // a library's kernel launcher: its callers may capture it
	Eager       = contexts.Eager
)

// EdgeKind says how a call edge (and so a chain of them) was resolved
// (guard/flow defines them): traced, resolved, annotated, hierarchy, name.
type EdgeKind = flow.EdgeKind

const (
	Traced    = flow.Traced
	Resolved  = flow.Resolved
	Annotated = flow.Annotated
	Hierarchy = flow.Hierarchy
	ByName    = flow.ByName
)

// TextEdit replaces the bytes [Start, End) of the original source with
// NewText, as golang.org/x/tools/go/analysis.TextEdit does. Offsets are byte
// offsets into the file exactly as read (BOM and CRLF included). Lines in
// NewText end with "\n": the patcher gives them the file's line ending.
type TextEdit struct {
	Start   int
	End     int
	NewText string
	// From and To are Start and End as lines and columns of the analysed
	// source (the pipeline sets them: LocateEdits). Their Offset is Start
	// and End.
	From, To Pos
}

// textEditJSON is a TextEdit's JSON form.
type textEditJSON struct {
	From    Pos    `json:"start"`
	To      Pos    `json:"end"`
	NewText string `json:"content"`
}

func (e TextEdit) MarshalJSON() ([]byte, error) {
	from, to := e.From, e.To
	from.Offset, to.Offset = e.Start, e.End
	return json.Marshal(textEditJSON{From: from, To: to, NewText: e.NewText})
}

func (e *TextEdit) UnmarshalJSON(b []byte) error {
	var j textEditJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = TextEdit{Start: j.From.Offset, End: j.To.Offset, NewText: j.NewText, From: j.From, To: j.To}
	return nil
}

// Fix is a suggested fix: a message and the edits that carry it out.
type Fix struct {
	Applicability Applicability `json:"applicability"`
	Message       string        `json:"message"`
	Edits         []TextEdit    `json:"edits"`
	// NeedsHelper is set when the edits call the persistent-buffer helper
	// (templates/persistent_buffer.py, HelperName); the patcher inserts or
	// imports it once per file.
	NeedsHelper bool `json:"helper,omitempty"`
}

func (f Fix) MarshalJSON() ([]byte, error) {
	type plain Fix
	if f.Edits == nil {
		f.Edits = []TextEdit{}
	}
	return json.Marshal(plain(f))
}

func (f *Fix) UnmarshalJSON(b []byte) error {
	type plain Fix
	if err := json.Unmarshal(b, (*plain)(f)); err != nil {
		return err
	}
	if len(f.Edits) == 0 {
		f.Edits = nil
	}
	return nil
}

// HelperName is the Python function the CG301/CG201 fixes call: the one
// templates/persistent_buffer.py defines.
const HelperName = templates.PersistentBufferName

// Pos is a 1-based line and column (columns count bytes, as tree-sitter does)
// plus the 0-based byte offset.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Offset int `json:"offset"`
}

// Diagnostic is one finding: a rule's, a capture map's or a project-wide
// pass's. Its JSON form (MarshalJSON) is the one shape a finding has
// outside the process: an object of the JSON report's "findings", a line
// of json-lines, and a results-cache entry's finding, which decodes back
// to an equal Diagnostic (its Rule the registered one).
type Diagnostic struct {
	Rule     *Rule
	Path     string // as the user named it
	Start    Pos
	End      Pos
	Message  string
	Severity Severity
	Context  Context
	// Function is the qualified name of the enclosing function ("Class.method"),
	// empty at module level.
	Function string
	// Chain is the call chain that proves the context, root first, each
	// function in capguard graph naming ("pkg.mod.Class.method").
	Chain []string
	// Resolution is the weakest kind of edge in Chain: how sure capguard is
	// that the code runs in Context ("resolved" for a root's own code).
	Resolution EdgeKind
	// Condition is set on code that runs under capture only conditionally
	// (contexts.Conditional): "the capture passes `pixel_values`, in
	// pkg.mod.Model.forward". Such a finding is a warning.
	Condition string
	// Assumes are what an unproved finding assumed (severity.go): library
	// mode, a chain edge resolved by method name or through the class
	// hierarchy, a value the value model could not prove. A finding with
	// any, or with a Condition, is a warning.
	Assumes []string
	Fix     *Fix
}

// diagnosticJSON is a Diagnostic's JSON form, field by field.
type diagnosticJSON struct {
	Rule      string   `json:"rule"`
	Name      string   `json:"name"`
	Severity  Severity `json:"severity"`
	Path      string   `json:"path"`
	Line      int      `json:"line"`
	Column    int      `json:"column"`
	EndLine   int      `json:"end_line"`
	EndColumn int      `json:"end_column"`
	// Offset and EndOffset are the 0-based byte offsets of Line:Column
	// and EndLine:EndColumn in the analysed source.
	Offset    int      `json:"offset"`
	EndOffset int      `json:"end_offset"`
	Message   string   `json:"message"`
	Context   Context  `json:"context"`
	Function  string   `json:"function,omitempty"`
	Chain     []string `json:"chain"`
	// Resolution is how sure the chain is: traced, resolved, annotated,
	// hierarchy or name (the weakest edge in it).
	Resolution EdgeKind `json:"resolution"`
	// Condition: captured only if it holds ("the capture passes
	// `pixel_values`, in pkg.mod.Model.forward", "prefill is captured
	// (...)", "the cache misses (...)"); absent when unconditional.
	Condition string `json:"condition,omitempty"`
	// Assumes: what an unproved finding (a warning) assumed.
	Assumes []string `json:"assumes,omitempty"`
	URL     string   `json:"url"`
	Fix     *Fix     `json:"fix"`
}

func (d Diagnostic) MarshalJSON() ([]byte, error) {
	j := diagnosticJSON{Severity: d.Severity, Path: d.Path,
		Line: d.Start.Line, Column: d.Start.Column, EndLine: d.End.Line, EndColumn: d.End.Column,
		Offset: d.Start.Offset, EndOffset: d.End.Offset, Message: d.Message, Context: d.Context,
		Function: d.Function, Chain: d.Chain, Resolution: d.Resolution, Condition: d.Condition,
		Assumes: d.Assumes, Fix: d.Fix}
	if d.Rule != nil {
		j.Rule, j.Name, j.URL = d.Rule.ID, d.Rule.Name, RuleURL(d.Rule.ID)
	}
	if j.Chain == nil {
		j.Chain = []string{}
	}
	if j.Resolution == "" {
		j.Resolution = Resolved
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a Diagnostic back; its Rule is the registered rule
// of that ID (a stand-in naming the ID for one this capguard lacks).
func (d *Diagnostic) UnmarshalJSON(b []byte) error {
	var j diagnosticJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*d = Diagnostic{Rule: LookupRule(j.Rule), Path: j.Path,
		Start: Pos{Line: j.Line, Column: j.Column, Offset: j.Offset}, End: Pos{Line: j.EndLine, Column: j.EndColumn, Offset: j.EndOffset},
		Message: j.Message, Severity: j.Severity, Context: j.Context, Function: j.Function, Chain: j.Chain,
		Resolution: j.Resolution, Condition: j.Condition, Assumes: j.Assumes, Fix: j.Fix}
	if d.Rule == nil || d.Rule.ID != j.Rule {
		d.Rule = &Rule{ID: j.Rule, Name: j.Name}
	}
	if len(d.Chain) == 0 {
		d.Chain = nil
	}
	return nil
}

// Normalize gives d the form its JSON reads back as (Chain nil when
// empty, Resolution set, a fix's edits nil when none, each edit located
// in f's source when f is given), so that a finding served from the
// results cache equals the one the run made.
func (d *Diagnostic) Normalize(f *File) {
	if len(d.Chain) == 0 {
		d.Chain = nil
	}
	if d.Resolution == "" {
		d.Resolution = Resolved
	}
	if d.Fix == nil {
		return
	}
	if len(d.Fix.Edits) == 0 {
		d.Fix.Edits = nil
	}
	for i := range d.Fix.Edits {
		e := &d.Fix.Edits[i]
		if f != nil && e.Start >= 0 && e.End <= len(f.Src) && e.Start <= e.End {
			e.From, e.To = PosOf(f, e.Start), PosOf(f, e.End)
		} else {
			e.From.Offset, e.To.Offset = e.Start, e.End
		}
	}
}

// ProjectURL is the project's home: the one place its address is written
// (SARIF's informationUri, the rule pages' base).
const ProjectURL = "https://github.com/cudagraph-capguard/capguard"

// DocsURL is where the rule pages (docs/rules, made by `capguard rule --all
// --output-format markdown --out docs/rules`) are published.
const DocsURL = ProjectURL + "/blob/main/docs/rules/"

// RuleURL is the documentation page of a rule.
func RuleURL(id string) string { return DocsURL + id + ".md" }

func SortDiagnostics(ds []*Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Start.Offset != b.Start.Offset {
			return a.Start.Offset < b.Start.Offset
		}
		return a.Rule.ID < b.Rule.ID
	})
}
