package suppress

import (
	"embed"
	"strings"
)

// docs holds the documentation of the filter's rules in Markdown, one
// file a rule (docs/cg900_invalid_suppression.md), as guard/rules keeps
// its rules': "What it does", "Why it matters", "Example", "Fix". `capguard rule` prints it, SARIF carries it, and
// docs/rules/*.md are generated from it with the rule's GPU truth-table
// rows (go generate ./cli/capguard).
//
//go:embed docs/*.md
var docs embed.FS

// doc is the documentation of the rule whose Markdown file is name.
func doc(name string) string {
	b, err := docs.ReadFile("docs/" + name)
	if err != nil {
		panic("suppress: no documentation " + name)
	}
	return strings.TrimSuffix(string(b), "\n")
}
