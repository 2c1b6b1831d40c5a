// The names of the layers below as the pipeline's code and tests use them
// (those of the public API are in api.go): aliases and variables, no copy.

package guard

import (
	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/config"
	"github.com/cudagraph-capguard/capguard/guard/source"
	"github.com/cudagraph-capguard/capguard/guard/tensors"
)

type (
	File             = analysis.File
	Function         = analysis.Function
	FunctionCoverage = analysis.FunctionCoverage
	Pass             = analysis.Pass
	Preset           = config.Preset
	Project          = analysis.Project
	proof            = analysis.Proof
	Selector         = analysis.Selector
)

var (
	bodyStmts        = analysis.BodyStmts
	describeOSError  = source.DescribeOSError
	discover         = source.DiscoverOverlay
	functionCoverage = analysis.CoverageOf
	loadTraced       = analysis.LoadTraced
	newAnalysis      = analysis.NewAnalysis
	newFileFacts     = tensors.NewFileFacts
	registry         = analysis.Registry
	short            = analysis.Short
	Unparen          = analysis.Unparen
)

// PresetNames are the presets' names, sorted (guard/config).
func PresetNames() []string { return config.PresetNames() }

// DetectPresets are the presets a project's top packages and imports
// select (guard/config).
func DetectPresets(topPackages []string, imports []string) []string {
	return config.DetectPresets(topPackages, imports)
}

// ModuleRoot is the folder module names are relative to (guard/config).
func ModuleRoot(paths []string, cfg *Config) string { return config.ModuleRoot(paths, cfg) }
