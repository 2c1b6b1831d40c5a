package guard

import (
	"path/filepath"
	"regexp"
	"testing"
)

// conversionDir holds the GPU measurement of CG201's no-op conversion
// claims: noop_conversion.py's CASES say, per replay-prep class, whether a
// replay after its prep reads stale data and what capguard reports there;
// verdicts.json, once made on a GPU, what the GPU said; fixed_verdicts.json
// the same for the script with capguard's unsafe fixes applied.
var conversionDir = filepath.Join("..", "testdata", "gpu", "conversions")

// conversionCaseRE reads a row of noop_conversion.py's CASES table.
var conversionCaseRE = regexp.MustCompile(`\("([a-z0-9_]+)", "(CG[0-9]{3})", "(clean|stale)", "(error|warning)", ([A-Za-z]+)\)`)

// TestConversionClaims: capguard reports each case's rule in its class's
// prepare with the severity the case says, never an error on a case the
// GPU is claimed to replay clean, and, where verdicts.json holds a GPU
// measurement, the GPU agrees with each claim.
func TestConversionClaims(t *testing.T) {
	path := filepath.Join(conversionDir, "noop_conversion.py")
	rows, res := claimCases(t, path, conversionCaseRE, 4)
	found := map[string]string{} // function:rule -> severity
	for _, d := range res.Diagnostics {
		found[d.Function+":"+d.Rule.ID] = string(d.Severity)
	}
	claims := map[string]string{}
	for _, r := range rows {
		name, rule, claim, sev, cls := r[1], r[2], r[3], r[4], r[5]
		claims[name] = claim
		got := found[cls+".prepare:"+rule]
		if got != sev {
			t.Errorf("%s: capguard reports %s in %s.prepare as %q, want %s", name, rule, cls, got, sev)
		}
		if got == "error" && claim == "clean" {
			t.Errorf("%s: an error on a case claimed to replay clean", name)
		}
	}
	checkVerdicts(t, conversionDir, "verdicts.json", "noop_conversion.py", claims, "docs/design.md, CG201's no-op conversions", false)
	// The unsafe fix of every case (noop_conversion_fixed.py, kept equal to
	// what capguard fix --unsafe-fixes makes of it by the patcher's tests)
	// must replay clean.
	checkVerdicts(t, conversionDir, "fixed_verdicts.json", "noop_conversion_fixed.py", claims, "docs/design.md, CG201's no-op conversions", true)
}
