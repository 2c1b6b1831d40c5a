// Package tensors is the per-function value model of capguard, above the
// rule framework (guard/analysis) and below the fix model and the rules:
// what device an expression's tensor is on (values.go: Device), what kind
// of value it is (ValKind: tensor, host data, metadata), where a local
// was bound, and the expression classification rules share (exprs.go:
// temporaries, host reads, dtypes, assignments).
package tensors
