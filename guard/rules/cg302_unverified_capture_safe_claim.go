package rules

import (
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/index"
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
		for k, fn := range f.Funcs {
			claim := a.Claims[fn]
			if claim == nil || fn.Kind != index.Def {
				continue
			}
			// A finding is the claim's when no def nested in fn holds it
			// (the innermost def, contexts.InnermostAt, without a scan of
			// the file's functions for each finding: that was quadratic in
			// a file's size). The defs nested in fn follow it in Funcs,
			// which are in source order.
			var nested []*index.Function
			for j := k + 1; j < len(f.Funcs) && f.Funcs[j].Def.Start < fn.Def.End; j++ {
				if f.Funcs[j].Kind == index.Def {
					nested = append(nested, f.Funcs[j])
				}
			}
			claimSteps.Add(int64(len(nested) + 1))
			inNested := func(off int) bool {
				claimSteps.Add(int64(len(nested)))
				for _, g := range nested {
					if int(g.Def.Start) <= off && off < int(g.Def.End) {
						return true
					}
				}
				return false
			}
			var rules []string
			seen := map[string]bool{}
			for i := sort.Search(len(ds), func(i int) bool { return ds[i].Start.Offset >= int(fn.Def.Start) }); i < len(ds) && ds[i].Start.Offset < int(fn.Def.End); i++ {
				d := ds[i]
				if d.End.Offset > int(fn.Def.End) || seen[d.Rule.ID] || inNested(d.Start.Offset) {
					continue
				}
				seen[d.Rule.ID] = true
				rules = append(rules, d.Rule.ID)
			}
			if len(rules) == 0 {
				continue
			}
			out = append(out, &Diagnostic{
				Rule: ruleUnverifiedClaim, Path: f.Path, Start: posOf(f, int(claim.Start)), End: posOf(f, int(claim.End)),
				Message:  fmt.Sprintf("`%s` claims to be capture-safe but has %v findings: verify the claim or remove it", fn.Name, rules),
				Severity: ruleUnverifiedClaim.Severity, Context: Claimed, Function: fn.Qual,
				Chain: []string{fn.FullName()}, Resolution: Resolved,
			})
		}
	}
	return out
}

// claimSteps counts the functions claimFindings examines: the growth test
// reads it.
var claimSteps atomic.Int64
