package analysis

import (
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
	Start   int    `json:"start"`
	End     int    `json:"end"`
	NewText string `json:"new_text"`
}

// Fix is a suggested fix: a message and the edits that carry it out.
type Fix struct {
	Message       string        `json:"message"`
	Applicability Applicability `json:"applicability"`
	Edits         []TextEdit    `json:"edits"`
	// NeedsHelper is set when the edits call the persistent-buffer helper
	// (templates/persistent_buffer.py, HelperName); the patcher inserts or
	// imports it once per file.
	NeedsHelper bool `json:"needs_helper,omitempty"`
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

// Diagnostic is one finding. Its JSON form (the results cache's) holds
// every field but Rule, which the cache stores as the rule's ID.
type Diagnostic struct {
	Rule     *Rule    `json:"-"`
	Path     string   `json:"path"` // as the user named it
	Start    Pos      `json:"start"`
	End      Pos      `json:"end"`
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
	Context  Context  `json:"context"`
	// Function is the qualified name of the enclosing function ("Class.method"),
	// empty at module level.
	Function string `json:"function,omitempty"`
	// Chain is the call chain that proves the context, root first, each
	// function in capguard graph naming ("pkg.mod.Class.method").
	Chain []string `json:"chain"`
	// Resolution is the weakest kind of edge in Chain: how sure capguard is
	// that the code runs in Context ("resolved" for a root's own code).
	Resolution EdgeKind `json:"resolution"`
	// Condition is set on code that runs under capture only conditionally
	// (contexts.Conditional): "the capture passes `pixel_values`, in
	// pkg.mod.Model.forward". Such a finding is a warning.
	Condition string `json:"condition,omitempty"`
	// Assumes are what an unproved finding assumed (severity.go): library
	// mode, a chain edge resolved by method name or through the class
	// hierarchy, a value the value model could not prove. A finding with
	// any, or with a Condition, is a warning.
	Assumes []string `json:"assumes,omitempty"`
	Fix     *Fix     `json:"fix"`
}

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
