// Package truth is the GPU truth table, data below the rules: for each
// probe of testdata/gpu/probes, the rule it exercises, its role, what the
// GPU said when it was captured and replayed, and what capguard finds in
// it. The pipeline appends each rule's rows to its documentation.
// truth_table.go is generated (go test ./guard -run TestProbeTruth -update).
package truth
