// The public API of the analysis: the names callers of package guard use,
// defined in the layers below (analysis, config, source) and re-exported
// here so that guard stays the one entry point.

package guard

import (
	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/config"
	"github.com/cudagraph-capguard/capguard/guard/rules"
	"github.com/cudagraph-capguard/capguard/guard/source"
	"github.com/cudagraph-capguard/capguard/guard/suppress"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/truth"
)

// The rules of the run, registered once: the rule list's and the
// suppression filter's, each documented with its rows of the GPU truth
// table.
func init() {
	for _, r := range append(append([]*Rule{}, rules.All...), suppress.Rules...) {
		r.Doc += truth.MeasuredSection(r.ID)
		analysis.Register(r)
	}
}

// The types of a run's input and output, defined in the layers below.
type (
	Applicability = analysis.Applicability
	Config        = config.Config
	Context       = analysis.Context
	Diagnostic    = analysis.Diagnostic
	EdgeKind      = analysis.EdgeKind
	FileError     = source.FileError
	Fix           = analysis.Fix
	Node          = analysis.Node
	Pos           = analysis.Pos
	Rule          = analysis.Rule
	Severity      = analysis.Severity
	TextEdit      = analysis.TextEdit
)

// Contexts, edge kinds, severities, applicabilities and limits (see the
// packages that define them).
const (
	Captured    = analysis.Captured
	ReplayPrep  = analysis.ReplayPrep
	PostCapture = analysis.PostCapture
	Claimed     = analysis.Claimed
	Launcher    = analysis.Launcher
	Eager       = analysis.Eager

	Traced    = analysis.Traced
	Resolved  = analysis.Resolved
	Annotated = analysis.Annotated
	Hierarchy = analysis.Hierarchy
	ByName    = analysis.ByName

	SeverityError   = analysis.SeverityError
	SeverityWarning = analysis.SeverityWarning

	Safe        = analysis.Safe
	Unsafe      = analysis.Unsafe
	DisplayOnly = analysis.DisplayOnly

	DefaultMaxFileSize = config.DefaultMaxFileSize
	HelperName         = analysis.HelperName
	ProjectURL         = analysis.ProjectURL
	DocsURL            = analysis.DocsURL
)

// Presets are the framework presets by name (guard/config/presets.go).
var Presets = config.Presets

// Rules returns every rule, sorted by ID.
func Rules() []*Rule { return analysis.Rules() }

// LookupRule finds a rule by ID ("CG301") or name ("temporary-into-kernel").
func LookupRule(idOrName string) *Rule { return analysis.LookupRule(idOrName) }

// ValidateCodes returns the codes that name no rule and are no prefix of one.
func ValidateCodes(codes []string) []string { return analysis.ValidateCodes(codes) }

// RuleURL is the documentation page of a rule.
func RuleURL(id string) string { return analysis.RuleURL(id) }

// LoadConfig reads a capguard.toml or pyproject.toml (guard/config).
func LoadConfig(file string) (*Config, error) { return config.LoadConfig(file) }

// FindConfig finds the configuration of start's project (guard/config).
func FindConfig(start string) (*Config, error) { return config.FindConfig(start) }

// ProjectRoot is the root of the project path belongs to (guard/config).
func ProjectRoot(path string, cfg *Config) string { return config.ProjectRoot(path, cfg) }

// Discover lists the Python files a run over paths checks (guard/source).
func Discover(paths []string, cfg *Config) ([]string, []FileError) {
	return source.Discover(paths, cfg)
}

// DiscoverWalk is Discover with the folders it walked (guard/source).
func DiscoverWalk(paths []string, cfg *Config) (files []string, walked []string, errs []FileError) {
	return source.DiscoverWalk(paths, cfg)
}

// PackageDirs reports the folders module names are made from, and whether
// each holds an __init__.py (guard/source).
func PackageDirs(files []string) map[string]bool { return source.PackageDirs(files) }

// DecodeSource decodes Python source as Python does, PEP 263 (guard/source).
func DecodeSource(src []byte) ([]byte, string, error) { return source.DecodeSource(src) }

// EncodeSource encodes text back into a PEP 263 encoding (guard/source).
func EncodeSource(src []byte, name string) ([]byte, error) { return source.EncodeSource(src, name) }

// DeclaredEncoding is the PEP 263 encoding src declares, or "" (guard/source).
func DeclaredEncoding(src []byte) string { return source.DeclaredEncoding(src) }

// IsUTF8 reports whether an encoding name means UTF-8 (guard/source).
func IsUTF8(name string) bool { return source.IsUTF8(name) }

// Parse parses Python source (guard/syntax).
func Parse(src []byte) (*syntax.Tree, error) { return analysis.Parse(src) }

// ParseOK reports whether src parses without a syntax error (guard/syntax).
func ParseOK(src []byte) bool { return analysis.ParseOK(src) }
