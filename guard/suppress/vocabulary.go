// The names of the layers below as this package's code knew them before the
// split (guard/doc.go): aliases and variables, no copy.

package suppress

import (
	"github.com/cudagraph-capguard/capguard/guard/analysis"
)

type (
	Diagnostic = analysis.Diagnostic
	File       = analysis.File
	Node       = analysis.Node
	Project    = analysis.Project
	Rule       = analysis.Rule
	Selector   = analysis.Selector
)

const (
	Eager           = analysis.Eager
	SeverityWarning = analysis.SeverityWarning
)

var (
	posOf           = analysis.PosOf
	prefixLen       = analysis.PrefixLen
	sortDiagnostics = analysis.SortDiagnostics
)
