// Package analysis is the rule framework of capguard, the layer between
// the program analysis (guard/index, guard/flow, guard/contexts, below)
// and the rules (guard/rules, above), as golang.org/x/tools/go/analysis
// is for Go vet's checks: Rule (ID, name, severity, fix, contexts, doc,
// Run and After), Pass (one rule on one function body or region in one
// context), the one Diagnostic type a finding has everywhere (rules, the
// results cache, the JSON report, the patcher), Project (the index's
// files and functions, the call graph and every function's contexts), the
// severity policy (an error is a proof: severity.go), the findings and
// coverage of a capture map (traced.go, coverage.go), and the registry
// the pipeline fills from the explicit rule lists.
package analysis
