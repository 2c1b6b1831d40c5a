// Package syntax is the bottom layer of capguard's analysis: Python source
// as a syntax tree (tree-sitter through guard/internal/pyparse, converted
// to plain Go nodes in one cgo call), the walks and queries every layer
// above shares, and the Python 2 constructs Python 3 refuses.
package syntax
