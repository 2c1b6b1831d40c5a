package rules

import (
	"fmt"
	"sort"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/contexts"
)

var ruleUnverifiedClaim = &Rule{
	ID: "CG302", Name: "unverified-capture-safe-claim", Severity: SeverityWarning,
	Summary: "a function claims capture safety and has a capture finding",
	Doc:     doc("cg302_unverified_capture_safe_claim.md"),
}

// CG302 runs after the per-function passes, over their findings (set here:
// claimFindings names the rule).
func init() { ruleUnverifiedClaim.After = claimFindings }

// claimFindings reports CG302 for each claiming function with a finding of
// its own body.
func claimFindings(a *analysis.Analysis, diags []*Diagnostic) []*Diagnostic {
	// The findings of each file in offset order: each claiming function
	// looks only at the ones inside it.
	byPath := map[string][]*Diagnostic{}
	for _, d := range diags {
		byPath[d.Path] = append(byPath[d.Path], d)
	}
	for _, ds := range byPath {
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].Start.Offset < ds[j].Start.Offset })
	}
	var out []*Diagnostic
	for _, f := range a.Proj.Files {
		ds := byPath[f.Path]
		for _, fn := range f.Funcs {
			claim := a.Claims[fn]
			if claim == nil {
				continue
			}
			var rules []string
			seen := map[string]bool{}
			for i := sort.Search(len(ds), func(i int) bool { return ds[i].Start.Offset >= fn.Def.Start }); i < len(ds) && ds[i].Start.Offset < fn.Def.End; i++ {
				d := ds[i]
				if d.End.Offset > fn.Def.End || contexts.InnermostAt(f, d.Start.Offset) != fn || seen[d.Rule.ID] {
					continue
				}
				seen[d.Rule.ID] = true
				rules = append(rules, d.Rule.ID)
			}
			if len(rules) == 0 {
				continue
			}
			out = append(out, &Diagnostic{
				Rule: ruleUnverifiedClaim, Path: f.Path, Start: posOf(f, claim.Start), End: posOf(f, claim.End),
				Message:  fmt.Sprintf("`%s` claims to be capture-safe but has %v findings: verify the claim or remove it", fn.Name, rules),
				Severity: ruleUnverifiedClaim.Severity, Context: Claimed, Function: fn.Qual,
				Chain: []string{fn.FullName()}, Resolution: Resolved,
			})
		}
	}
	return out
}
