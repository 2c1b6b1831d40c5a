// Package guard is the top layer of capguard's analysis: the pipeline and
// its public API, Run(Options) -> Result (and BuildGraph for `capguard
// graph`). A run reads the files (guard/source), selects the ones that can
// matter (prefilter.go), parses them (guard/syntax), indexes them
// (guard/index), builds the points-to call graph (guard/flow), works out
// where each function runs (guard/contexts), runs the rules of
// guard/rules in every context through guard/analysis's Pass, sends every
// finding through the one suppression filter (guard/suppress) and sorts.
//
// The layers, top down, each importing only the ones below it (TestLayers
// keeps the order):
//
//	guard                  the pipeline (run.go, prefilter.go), graph and settings reports, the public API (api.go)
//	guard/suppress         the suppression filter (per-file ignores, # capguard: ignore, # noqa) and its rules CG900/CG901
//	guard/rules            the rules, one file each, helpers.go, all.go (the explicit list), docs/ (their Markdown)
//	guard/fixmodel         the fix model: the facts a fix needs before capguard offers it
//	guard/tensors          the per-function value model: device, kind, bindings of expressions
//	guard/analysis         the rule framework: Rule, Pass, Diagnostic, Project, the severity policy, capture-map findings
//	guard/source           bytes to text as Python reads them (PEP 263), file discovery, .gitignore, line helpers
//	guard/config           configuration (capguard.toml, [tool.capguard]), presets, project and module roots
//	guard/contexts         where each function runs (captured, replay-prep, post-capture, claimed, launcher)
//	guard/flow             points-to analysis and the call graph
//	guard/capmap           capture maps recorded by `capguard trace`
//	guard/device           tests of the device type
//	guard/index            files, definitions, scopes, imports, the module tree
//	guard/syntax           the syntax tree (guard/internal/pyparse: tree-sitter, one cgo call a file)
//	guard/truth            the GPU truth table (data): measured rows, appended to each rule's doc
//	guard/torchapi         every table of torch and Triton names the analysis knows, one copy each
//	guard/internal/par     the worker loop: independent pieces of work on every core
//	guard/internal/fold    ASCII words found whatever their case, without a lower-cased copy
//
// The results cache and the output formats are the CLI's
// (cli/internal/cache, cli/internal/report).
package guard
