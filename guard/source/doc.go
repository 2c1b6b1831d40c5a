// Package source turns files into the text capguard analyses, above the
// configuration (guard/config, for excludes) and below the rule framework:
// bytes to text as Python reads them (PEP 263 source encodings, encoding.go),
// the walk that finds a run's Python files and the .gitignore rules it
// honours (walk.go, gitignore.go), line helpers over source bytes (lines.go)
// and FileError, a per-file problem.
package source
