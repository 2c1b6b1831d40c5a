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

const (
	ProjectURL         = analysis.ProjectURL
	DocsURL            = analysis.DocsURL
	Annotated          = analysis.Annotated
	ByName             = analysis.ByName
	Captured           = analysis.Captured
	Claimed            = analysis.Claimed
	DefaultMaxFileSize = config.DefaultMaxFileSize
	DisplayOnly        = analysis.DisplayOnly
	Eager              = analysis.Eager
	HelperName         = analysis.HelperName
	Hierarchy          = analysis.Hierarchy
	Launcher           = analysis.Launcher
	PostCapture        = analysis.PostCapture
	ReplayPrep         = analysis.ReplayPrep
	Resolved           = analysis.Resolved
	Safe               = analysis.Safe
	SeverityError      = analysis.SeverityError
	SeverityWarning    = analysis.SeverityWarning
	Traced             = analysis.Traced
	Unsafe             = analysis.Unsafe
)

var Presets = config.Presets

func DeclaredEncoding(src []byte) string              { return source.DeclaredEncoding(src) }
func DecodeSource(src []byte) ([]byte, string, error) { return source.DecodeSource(src) }
func Discover(paths []string, cfg *Config) ([]string, []FileError) {
	return source.Discover(paths, cfg)
}
func DiscoverWalk(paths []string, cfg *Config) (files []string, walked []string, errs []FileError) {
	return source.DiscoverWalk(paths, cfg)
}
func EncodeSource(src []byte, name string) ([]byte, error) { return source.EncodeSource(src, name) }
func FindConfig(start string) (*Config, error)             { return config.FindConfig(start) }
func IsUTF8(name string) bool                              { return source.IsUTF8(name) }
func LoadConfig(file string) (*Config, error)              { return config.LoadConfig(file) }
func LookupRule(idOrName string) *Rule                     { return analysis.LookupRule(idOrName) }
func PackageDirs(files []string) map[string]bool           { return source.PackageDirs(files) }
func Parse(src []byte) (*syntax.Tree, error)               { return analysis.Parse(src) }
func ParseOK(src []byte) bool                              { return analysis.ParseOK(src) }
func ProjectRoot(path string, cfg *Config) string          { return config.ProjectRoot(path, cfg) }
func Rules() []*Rule                                       { return analysis.Rules() }
func ValidateCodes(codes []string) []string                { return analysis.ValidateCodes(codes) }

// RuleURL is the documentation page of a rule.
func RuleURL(id string) string { return analysis.RuleURL(id) }
