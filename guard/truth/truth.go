package truth

import (
	"fmt"
	"sort"
	"strings"
)

// MeasuredRow is one row of the GPU truth table (testdata/gpu/probes):
// a probe that is a positive or negative example of a rule, what the GPU
// said when the probe was captured and replayed, and what capguard finds in
// it. TestProbeTruth keeps the table, guard/truth/truth_table.go and the probes
// in agreement.
type MeasuredRow struct {
	Probe   string // file name under testdata/gpu/probes, without .py ("fixed/..." for capguard fix's version)
	Rule    string
	Role    string // positive, negative, policy (a finding the GPU does not fail), fixed
	Verdict string // clean, stale-read, fault, capture-error; "pending" until measured
	Detail  string // per batch size
	Finding string // capguard's findings in the probe ("-" for none)
}

// MeasuredRows returns the truth table's rows of one rule, in probe order.
func MeasuredRows(rule string) []MeasuredRow {
	var out []MeasuredRow
	for _, r := range measuredRows {
		if r.Rule == rule {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Probe < out[j].Probe })
	return out
}

// MeasuredSection is the "Measured on the GPU" part of a rule's
// documentation: its rows of the truth table.
func MeasuredSection(rule string) string {
	rows := MeasuredRows(rule)
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n## Measured on the GPU\n%s\n\n", measuredSource)
	b.WriteString("| probe | role | GPU verdict | capguard |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		v := r.Verdict
		if r.Detail != "" {
			v += " (" + r.Detail + ")"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Probe, r.Role, v, r.Finding)
	}
	return strings.TrimRight(b.String(), "\n")
}
