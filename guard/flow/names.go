package flow

import (
	_ "embed"
	"strings"
)

//go:embed common_methods.txt
var commonMethodsText string

// commonMethods are the names the name fallback never follows
// (common_methods.txt documents them).
var commonMethods = parseNames(commonMethodsText)

// CommonMethods returns the list, for documentation.
func CommonMethods() []string {
	out := make([]string, 0, len(commonMethods))
	for n := range commonMethods {
		out = append(out, n)
	}
	return out
}

func parseNames(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.Fields(line) {
			out[f] = true
		}
	}
	return out
}
