package rules

import (
	"embed"
	"strings"
)

// docs holds each rule's documentation in Markdown, one file a rule named
// as its Go file (docs/cg101_host_sync_in_capture.md), as go/analysis
// passes keep theirs in doc.go: "What it does", "Why it matters",
// "Example", "Fix". `capguard rule` prints it, SARIF carries it, and
// docs/rules/*.md are generated from it with the rule's GPU truth-table
// rows (go generate ./cli/capguard).
//
//go:embed docs/*.md
var docs embed.FS

// doc is the documentation of the rule whose Markdown file is name.
func doc(name string) string {
	b, err := docs.ReadFile("docs/" + name)
	if err != nil {
		panic("rules: no documentation " + name)
	}
	return strings.TrimSuffix(string(b), "\n")
}
